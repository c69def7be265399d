-- Two rules of the credit economy need data the ledger did not keep at
-- hand (docs/ledger.md):
--
-- 1. An unstake's cooldown tier is decided by what the contributor has
--    unstaked from the idea over the last 24 hours, this unstake
--    included, so splitting an exit into small unstakes no longer avoids
--    the cooldown. The unstake use case sums those entries in its
--    transaction; this partial index holds only unstakes, by contributor,
--    idea and time, so the sum reads the few rows of one window.
-- 2. The oracle breaker stays open at least a minimum time after it trips,
--    so each reading records when the open period began (0 while closed).
--    A reading taken while tripped before this migration gets the time of
--    the newest trip at or before it, which is when its open period began.

CREATE INDEX cc_entries_unstakes ON cc_entries (contributor_id, idea_id, created_at) WHERE kind = 'unstake';

ALTER TABLE oracle_readings ADD COLUMN tripped_at BIGINT NOT NULL DEFAULT 0;

UPDATE oracle_readings SET tripped_at = COALESCE(
    (SELECT MAX(t.at) FROM oracle_readings t WHERE t.verdict = 'tripped' AND t.at <= oracle_readings.at),
    oracle_readings.at)
WHERE tripped = 1;

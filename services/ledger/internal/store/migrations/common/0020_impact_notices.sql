-- The portfolio shows each idea's impact totals in its answers; the
-- ledger owns the records and tells it (docs/ledger.md, "Impact on the
-- idea"). impact_notices is that telling's outbox: a record's transaction
-- adds one to its idea's row, and a notice is cleared only by the push
-- that read its totals after the count it cleared, so a record committed
-- while a push was in flight is pushed again. One row per idea: the
-- table never holds more rows than there are ideas with records.
CREATE TABLE impact_notices (
    idea_id   TEXT PRIMARY KEY,
    pending   BIGINT NOT NULL,
    queued_at BIGINT NOT NULL
);

-- Ideas with records from before this table: told once, on the first
-- round of the publisher.
INSERT INTO impact_notices (idea_id, pending, queued_at)
SELECT idea_id, COUNT(*), MIN(created_at) FROM impact_records GROUP BY idea_id;

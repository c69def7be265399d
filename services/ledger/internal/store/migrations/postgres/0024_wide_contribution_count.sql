-- An asset's contribution_count grows with every contribution and was a
-- 32-bit INTEGER on Postgres: the contribution after 2 147 483 647 failed
-- with "integer out of range", a 500. Counts that grow without bound are
-- 64-bit (issue 38); assets are few, so rewriting the table is brief.
ALTER TABLE assets ALTER COLUMN contribution_count TYPE BIGINT;

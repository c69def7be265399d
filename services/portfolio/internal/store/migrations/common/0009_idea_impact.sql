-- An idea answers its impact totals, which the ledger owns and tells the
-- portfolio after each impact record (docs/portfolio.md, "Impact").
-- impact_version is how many records the totals sum (0: none yet); a
-- push with a version no newer is ignored, so pushes may land in any
-- order. Amounts are micro-units, as the ledger keeps them.
ALTER TABLE ideas ADD COLUMN impact_version BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ideas ADD COLUMN impact_usage_records BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ideas ADD COLUMN impact_revenue_records BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ideas ADD COLUMN impact_earned_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ideas ADD COLUMN impact_revenue_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ideas ADD COLUMN impact_paid_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE ideas ADD COLUMN impact_last_at BIGINT NOT NULL DEFAULT 0;

-- A deposit keeps the buy rate it minted at and the spread it kept, so a
-- repeated deposit (the same reference) answers exactly what the first
-- one did. Deposits recorded before this migration read 0 for both.
ALTER TABLE cc_deposits ADD COLUMN buy_rate BIGINT NOT NULL DEFAULT 0;
ALTER TABLE cc_deposits ADD COLUMN fee_usd BIGINT NOT NULL DEFAULT 0;

-- Contributions are claims until evidence backs them (docs/ledger.md,
-- "Contributions: claims and evidence"). status is claimed (recorded
-- through the API by a contributor, or from an unsigned GitHub delivery),
-- accepted (recorded by an operator, or a claim an operator accepted),
-- rejected, or verified (from a signed GitHub delivery). claimed_cost_micros
-- keeps the cost the claim said when a review corrects cost_micros; the
-- review's reason, reviewer and time are kept beside it. Existing rows
-- migrate as claimed, keeping what they said: nobody reviewed them.
ALTER TABLE contributions ADD COLUMN status TEXT NOT NULL DEFAULT 'claimed';
ALTER TABLE contributions ADD COLUMN claimed_cost_micros BIGINT NOT NULL DEFAULT 0;
ALTER TABLE contributions ADD COLUMN review_reason TEXT NOT NULL DEFAULT '';
ALTER TABLE contributions ADD COLUMN reviewed_by TEXT NOT NULL DEFAULT '';
ALTER TABLE contributions ADD COLUMN reviewed_at BIGINT NOT NULL DEFAULT 0;
UPDATE contributions SET claimed_cost_micros = cost_micros;

-- A payout of a distribution not paid in CC weighs every contribution,
-- claims too; claimed_micros is the part of it that claims earned.
ALTER TABLE payouts ADD COLUMN claimed_micros BIGINT NOT NULL DEFAULT 0;

-- A distribution paid in CC mints nothing for a payee that never
-- registered (an implicit id such as github:octo or email:…): no session
-- could ever move that CC. unpaid marks such a payout; its share is
-- recorded as computed. Every payout before this migration was minted.
ALTER TABLE payouts ADD COLUMN unpaid INTEGER NOT NULL DEFAULT 0;

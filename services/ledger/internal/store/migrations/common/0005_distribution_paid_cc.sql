-- A distribution may pay its payouts as CC (an administrator's choice):
-- each payout is then a journal entry from issuance to the payee.
ALTER TABLE distributions ADD COLUMN paid_cc INTEGER NOT NULL DEFAULT 0;

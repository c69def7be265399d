-- Every journal line carries its account's bucket, contributor and idea
-- explicitly, as cc_accounts does, and nothing reads them out of an
-- account's name any more. The name used to be split on ':' to find them,
-- which misread every id containing ':' (github:login, email:addr, any
-- contribution's id, idea ids such as x:y): a payout to github:octo showed
-- on a contributor "github", and one to "<bob>:ghost" on Bob.
--
-- New lines and accounts are written with the values of the movement that
-- made them. Existing rows are backfilled here:
--
-- 1. Lines, from their entry: every movement the ledger has written moves
--    one contributor's CC (cc_entries.contributor_id, and idea_id for a
--    stake or an unstake) against issuance or between that contributor's
--    own accounts, and each of those account names was built from exactly
--    those ids. A line whose account is that name takes the entry's
--    contributor (and idea for 'staked'); that is exact for every id,
--    ':' or not. The issuance line has neither.
-- 2. Available and cooling accounts: the contributor is all of the name
--    after the bucket's ':' (those names were never ambiguous; only
--    splitting them was), exact for every id.
-- 3. Staked accounts: the contributor and idea of the account's first line
--    (by audit sequence), exact for every id. A name "staked:a:b:c" is
--    ambiguous only if two pairs, ("a:b", "c") and ("a", "b:c"), both
--    staked under it; they then shared one balance and cannot be told
--    apart, the account takes the first pair, and the coherence check
--    (GET /api/health/coherence) lists it as mismatched because its lines
--    name another pair. That cannot have happened: staking needs a
--    contributor's session, and registered contributors have UUID ids.
--    New stakes escape ':' in the contributor (credit.Account.Name), so
--    names no longer collide.
-- 4. Anything left (a line no entry explains, an account without lines:
--    neither is written by the ledger) keeps what splitting the name
--    gave, which is right for ids without ':'.
ALTER TABLE cc_lines ADD COLUMN bucket TEXT NOT NULL DEFAULT '';
ALTER TABLE cc_lines ADD COLUMN contributor_id TEXT;
ALTER TABLE cc_lines ADD COLUMN idea_id TEXT;

-- 1. Lines from their entries.
UPDATE cc_lines SET bucket = 'issuance' WHERE account = 'issuance';

UPDATE cc_lines SET
    bucket = CASE WHEN account = 'available:' || (SELECT e.contributor_id FROM cc_entries e WHERE e.id = cc_lines.entry_id)
        THEN 'available' ELSE 'cooling' END,
    contributor_id = (SELECT e.contributor_id FROM cc_entries e WHERE e.id = cc_lines.entry_id)
WHERE EXISTS (SELECT 1 FROM cc_entries e WHERE e.id = cc_lines.entry_id
    AND (cc_lines.account = 'available:' || e.contributor_id OR cc_lines.account = 'cooling:' || e.contributor_id));

UPDATE cc_lines SET
    bucket = 'staked',
    contributor_id = (SELECT e.contributor_id FROM cc_entries e WHERE e.id = cc_lines.entry_id),
    idea_id = (SELECT e.idea_id FROM cc_entries e WHERE e.id = cc_lines.entry_id)
WHERE EXISTS (SELECT 1 FROM cc_entries e WHERE e.id = cc_lines.entry_id
    AND cc_lines.account = 'staked:' || e.contributor_id || ':' || e.idea_id);

-- 2. Available and cooling accounts from their names.
UPDATE cc_accounts SET contributor_id = substr(account, length(bucket) + 2), idea_id = NULL
WHERE bucket IN ('available', 'cooling');

-- 3. Staked accounts from their first line.
UPDATE cc_accounts SET
    contributor_id = (SELECT l.contributor_id FROM cc_lines l JOIN cc_entries e ON e.id = l.entry_id
        WHERE l.account = cc_accounts.account AND l.bucket = 'staked' ORDER BY e.audit_seq, e.id LIMIT 1),
    idea_id = (SELECT l.idea_id FROM cc_lines l JOIN cc_entries e ON e.id = l.entry_id
        WHERE l.account = cc_accounts.account AND l.bucket = 'staked' ORDER BY e.audit_seq, e.id LIMIT 1)
WHERE bucket = 'staked' AND EXISTS (SELECT 1 FROM cc_lines l WHERE l.account = cc_accounts.account AND l.bucket = 'staked');

-- 4. Lines no entry explains take their account's columns.
UPDATE cc_lines SET
    bucket = (SELECT a.bucket FROM cc_accounts a WHERE a.account = cc_lines.account),
    contributor_id = (SELECT a.contributor_id FROM cc_accounts a WHERE a.account = cc_lines.account),
    idea_id = (SELECT a.idea_id FROM cc_accounts a WHERE a.account = cc_lines.account)
WHERE bucket = '';

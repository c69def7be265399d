-- Webhook deliveries without X-GitHub-Delivery (the shaped body posted by
-- scripts and other forges) are recognised by repository and commit: the
-- primary key makes a redelivery, sequential or concurrent, find the
-- original contribution instead of making another, as github_deliveries does
-- for delivery ids. Written first in its transaction, hence the deferred
-- reference.
CREATE TABLE github_commits (
    repository      TEXT NOT NULL,       -- lowercased owner/name
    commit_hash     TEXT NOT NULL,       -- lowercased hex, as sent
    contribution_id TEXT NOT NULL UNIQUE REFERENCES contributions (id) DEFERRABLE INITIALLY DEFERRED,
    received_at     BIGINT NOT NULL,
    PRIMARY KEY (repository, commit_hash)
);

-- Payouts are read back by pages; the count of a distribution's payouts is
-- kept beside it so a page can say how many there are without counting them.
ALTER TABLE distributions ADD COLUMN payout_count INTEGER NOT NULL DEFAULT 0;
UPDATE distributions SET payout_count = (SELECT COUNT(*) FROM payouts WHERE payouts.distribution_id = distributions.id);

-- The economy monitor: the lease that makes one replica its leader (see the
-- platform lease package) and the checks it ran, each with the graduated
-- response it decided. Times are Unix microseconds (UTC).
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

CREATE TABLE monitor_checks (
    id              TEXT PRIMARY KEY,
    checked_at      BIGINT NOT NULL,
    holder          TEXT NOT NULL,            -- the replica that ran it
    reserve_ratio   DOUBLE PRECISION NOT NULL,
    chain_valid     INTEGER NOT NULL,         -- 0 or 1
    first_divergent BIGINT NOT NULL,          -- 0 when the chain is valid
    mismatched      INTEGER NOT NULL,         -- accounts whose balance differs from the journal
    breaker_tripped INTEGER NOT NULL,
    mode_before     TEXT NOT NULL,
    decided_mode    TEXT NOT NULL,
    applied         INTEGER NOT NULL,         -- 1 when the ledger's mode was changed
    score           INTEGER NOT NULL,
    reasons         TEXT NOT NULL,            -- JSON array of strings, worst first
    error           TEXT NOT NULL             -- '' unless the check failed
);

CREATE INDEX monitor_checks_at ON monitor_checks (checked_at, id);

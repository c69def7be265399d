-- The credit economy: a double-entry journal of CC movements with cached
-- balances, the treasury, deposits, cooling unstakes, pledges, idempotency
-- records, the hash-chained audit trail, oracle readings and incidents.
-- CC and USD are BIGINT micro-units; times are Unix microseconds (UTC).
-- Journal rows are only ever inserted: a correction is a reversing entry.

-- One row: the treasury, the CC outstanding, the economy's mode and the
-- audit chain's head. Every CC movement locks this row first (FOR UPDATE on
-- Postgres; SQLite transactions take the write lock when they begin), which
-- serialises movements, the backing check and the chain's appends.
CREATE TABLE economy (
    id             INTEGER PRIMARY KEY CHECK (id = 1),
    treasury_usd   BIGINT NOT NULL DEFAULT 0 CHECK (treasury_usd >= 0),
    outstanding_cc BIGINT NOT NULL DEFAULT 0 CHECK (outstanding_cc >= 0),
    -- normal, warning, minting_paused, read_only or frozen (see docs/ledger.md)
    mode           TEXT NOT NULL DEFAULT 'normal',
    mode_reason    TEXT NOT NULL DEFAULT '',
    mode_actor     TEXT NOT NULL DEFAULT '',
    mode_since     BIGINT NOT NULL DEFAULT 0,
    audit_seq      BIGINT NOT NULL DEFAULT 0,     -- seq of the last audit entry
    audit_head     TEXT NOT NULL DEFAULT '',      -- its hash (hex); '' before the first
    -- where verification starts: after a repair, the repair entry (whose
    -- hash is trusted because it chains to the head that was current)
    verify_from_seq  BIGINT NOT NULL DEFAULT 0,
    verify_from_hash TEXT NOT NULL DEFAULT '',
    updated_at     BIGINT NOT NULL DEFAULT 0
);

INSERT INTO economy (id) VALUES (1);

-- Cached balances, one per account (see the credit package's Account).
-- Only the issuance account may go negative: -balance is the CC outstanding.
CREATE TABLE cc_accounts (
    account        TEXT PRIMARY KEY,
    bucket         TEXT NOT NULL,
    contributor_id TEXT,
    idea_id        TEXT,
    balance        BIGINT NOT NULL DEFAULT 0,
    CHECK (account = 'issuance' OR balance >= 0)
);

CREATE INDEX cc_accounts_contributor ON cc_accounts (contributor_id, bucket);
CREATE INDEX cc_accounts_idea ON cc_accounts (idea_id, bucket);

CREATE TABLE cc_entries (
    id             TEXT PRIMARY KEY,
    kind           TEXT NOT NULL,
    contributor_id TEXT,                 -- whose CC moved; NULL for none
    idea_id        TEXT,
    amount         BIGINT NOT NULL,      -- micro-CC moved (positive)
    audit_seq      BIGINT NOT NULL,      -- the audit entry recording it
    created_at     BIGINT NOT NULL
);

CREATE INDEX cc_entries_contributor ON cc_entries (contributor_id, created_at, id);

CREATE TABLE cc_lines (
    entry_id TEXT NOT NULL REFERENCES cc_entries (id),
    account  TEXT NOT NULL REFERENCES cc_accounts (account),
    delta    BIGINT NOT NULL CHECK (delta <> 0),
    PRIMARY KEY (entry_id, account)
);

CREATE INDEX cc_lines_account ON cc_lines (account);

-- A deposit is idempotent by its reference.
CREATE TABLE cc_deposits (
    reference      TEXT PRIMARY KEY,
    entry_id       TEXT NOT NULL REFERENCES cc_entries (id),
    contributor_id TEXT NOT NULL,
    amount_usd     BIGINT NOT NULL,
    minted_cc      BIGINT NOT NULL,
    created_at     BIGINT NOT NULL
);

-- Unstaked CC waiting out its cooldown; released_entry_id is set when it
-- moves back to available.
CREATE TABLE cc_cooling (
    id                TEXT PRIMARY KEY,
    contributor_id    TEXT NOT NULL,
    idea_id           TEXT NOT NULL,
    amount            BIGINT NOT NULL CHECK (amount > 0),
    available_at      BIGINT NOT NULL,
    entry_id          TEXT NOT NULL REFERENCES cc_entries (id),
    released_entry_id TEXT REFERENCES cc_entries (id),
    created_at        BIGINT NOT NULL
);

CREATE INDEX cc_cooling_contributor ON cc_cooling (contributor_id, released_entry_id, available_at);

CREATE TABLE cc_pledges (
    id             TEXT PRIMARY KEY,
    contributor_id TEXT NOT NULL,
    idea_id        TEXT NOT NULL,
    micro_hours    BIGINT NOT NULL CHECK (micro_hours > 0),
    cc_equivalent  BIGINT NOT NULL,
    created_at     BIGINT NOT NULL
);

CREATE INDEX cc_pledges_contributor ON cc_pledges (contributor_id, created_at, id);

-- Idempotency-Key records: the same key and body gives the stored response;
-- the same key with another body is refused. Scoped by operation and caller.
CREATE TABLE idempotency_keys (
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);

-- The audit chain (see the audit package for the canonical encoding).
-- attrs is the entry's attributes as a JSON object of strings; encoded is
-- the canonical encoding in hex, exactly as hashed.
CREATE TABLE audit_entries (
    seq       BIGINT PRIMARY KEY,
    kind      TEXT NOT NULL,
    at        BIGINT NOT NULL,
    actor     TEXT NOT NULL,
    subject   TEXT NOT NULL,
    amount    BIGINT NOT NULL,
    attrs     TEXT NOT NULL,
    encoded   TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash      TEXT NOT NULL
);

-- Every reading of the rate source with the breaker state it left behind,
-- so every replica agrees on the breaker.
CREATE TABLE oracle_readings (
    id        TEXT PRIMARY KEY,
    price     BIGINT NOT NULL CHECK (price > 0),   -- micro-CC per USD
    at        BIGINT NOT NULL,
    source    TEXT NOT NULL,
    verdict   TEXT NOT NULL,
    tripped   INTEGER NOT NULL,                     -- 0 or 1
    clean     INTEGER NOT NULL,
    last_good BIGINT NOT NULL
);

CREATE INDEX oracle_readings_at ON oracle_readings (at, id);

-- Incidents: freezes, unfreezes, breaker trips, monitor findings.
CREATE TABLE incidents (
    id          TEXT PRIMARY KEY,
    kind        TEXT NOT NULL,
    severity    TEXT NOT NULL,
    detail      TEXT NOT NULL,
    actor       TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    resolved_at BIGINT
);

CREATE INDEX incidents_created ON incidents (created_at, id);

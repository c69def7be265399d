-- The audit scrubber and the ledger's integrity findings (docs/ledger.md,
-- "The scrubber").
--
-- 1. audit_scrub is the scrubber's place in its cycle, one row: the
--    cursors of its three walks (the chain, the journal, the balances),
--    what the cycle has checked so far and the last complete cycle. It is
--    the ledger's own working state, kept as JSON with a MAC under a key
--    derived from the audit signing key, so a writer of this database
--    cannot move the scrubber past what it would find.
-- 2. audit_findings are the integrity findings: where the log, the
--    journal, the balances or the supply disagree with what the ledger
--    signed. An open finding (resolved_at 0) holds the economy at its
--    mode until an administrator's repair closes it; one open finding per
--    place (key), however often it is found again.

CREATE TABLE audit_scrub (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    state      TEXT NOT NULL,
    key_id     TEXT NOT NULL,
    mac        TEXT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE audit_findings (
    id          TEXT PRIMARY KEY,
    -- the place: kind, then seq, journal entry or account as they apply
    place       TEXT NOT NULL,
    kind        TEXT NOT NULL,    -- log, checkpoint, journal, balance or supply
    mode        TEXT NOT NULL,    -- the mode it holds the economy at: read_only or frozen
    seq         BIGINT NOT NULL DEFAULT 0,
    entry_id    TEXT NOT NULL DEFAULT '',
    account     TEXT NOT NULL DEFAULT '',
    detail      TEXT NOT NULL,
    found_by    TEXT NOT NULL,    -- scrubber, verification, sequencer, coherence
    found_at    BIGINT NOT NULL,
    resolved_at BIGINT NOT NULL DEFAULT 0,
    resolved_by TEXT NOT NULL DEFAULT ''
);

CREATE UNIQUE INDEX audit_findings_open ON audit_findings (place) WHERE resolved_at = 0;
CREATE INDEX audit_findings_found ON audit_findings (found_at, id);

-- The scrubber walks the journal in (created_at, id) order, a slice at a
-- time.
CREATE INDEX cc_entries_created ON cc_entries (created_at, id);

-- A repair's correction and mended entries name the journal entries it
-- mended; every check reads them before it compares the journal with the
-- log.
CREATE INDEX audit_entries_corrections ON audit_entries (seq) WHERE kind IN ('correction', 'mended');

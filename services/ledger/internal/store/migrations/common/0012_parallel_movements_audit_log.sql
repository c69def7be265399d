-- Movements in parallel, and an audit log sequenced in batches with a
-- Merkle tree and signed checkpoints (docs/ledger.md, "The money engine").
--
-- 1. A CC movement no longer appends to the audit chain itself (that took
--    the economy row, where the chain's head lives, so every movement in
--    the system queued on one row). It writes its audit entry into
--    audit_queue, in its own transaction, and one sequencer integrates the
--    queue into audit_entries in batches: seq, chain hash, Merkle tree.
-- 2. A journal entry is no longer linked to its audit entry by seq (which a
--    movement no longer knows when it commits) but the other way round:
--    the audit entry names its journal entry in entry_id, unique. Journal
--    entries written from now on keep audit_seq 0; the unique index on
--    (audit_seq, audit_seq_duplicate) is rebuilt to hold for the older
--    entries only.
-- 3. The Merkle tree of the log (golang.org/x/mod/sumdb/tlog's stored
--    hashes) and the latest signed checkpoint.

-- Every background loop of the ledger that must run on one replica only
-- (the sequencer) takes a lease (platform/lease).
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- Audit entries written by movements and not yet sequenced: the entry's
-- fields as audit_entries holds them, without seq and hashes.
CREATE TABLE audit_queue (
    id       TEXT PRIMARY KEY,
    entry_id TEXT,             -- the journal entry it records; NULL for a fee entry
    kind     TEXT NOT NULL,
    at       BIGINT NOT NULL,
    actor    TEXT NOT NULL,
    subject  TEXT NOT NULL,
    amount   BIGINT NOT NULL,
    attrs    TEXT NOT NULL
);

-- The sequencer takes the queue in (at, id) order.
CREATE INDEX audit_queue_order ON audit_queue (at, id);
CREATE UNIQUE INDEX audit_queue_entry ON audit_queue (entry_id) WHERE entry_id IS NOT NULL;

ALTER TABLE audit_entries ADD COLUMN entry_id TEXT;

-- Existing movements' audit entries name their journal entry: the one at
-- their seq (of any duplicates migration 0011 numbered) whose kind they
-- record and whose id their attributes carry. The LIKE
-- reads attrs as the ledger wrote them (a JSON object of strings, as Go
-- marshals it: no spaces, ids without characters JSON escapes), the same
-- on both engines; an entry whose attributes name another id stays
-- unlinked, and the coherence check reports it.
UPDATE audit_entries SET entry_id = (
        SELECT e.id FROM cc_entries e
        WHERE e.audit_seq = audit_entries.seq AND e.kind = audit_entries.kind
            AND audit_entries.attrs LIKE '%"entry_id":"' || e.id || '"%')
    WHERE EXISTS (SELECT 1 FROM cc_entries e WHERE e.audit_seq = audit_entries.seq);

CREATE UNIQUE INDEX audit_entries_entry ON audit_entries (entry_id) WHERE entry_id IS NOT NULL;

DROP INDEX cc_entries_audit_seq;
CREATE UNIQUE INDEX cc_entries_audit_seq ON cc_entries (audit_seq, audit_seq_duplicate) WHERE audit_seq > 0;

-- The Merkle tree over the log: tlog's stored hashes, by their index
-- (tlog.StoredHashIndex), in lowercase hex. Record 0 is the log's fixed
-- genesis record; record n (n >= 1) is the canonical encoding of the audit
-- entry with seq n, so a tree of size N covers seq 1 to N-1.
CREATE TABLE audit_tree (
    idx  BIGINT PRIMARY KEY,
    hash TEXT NOT NULL
);

-- Checkpoints: 'latest' is the one the ledger signed after its last batch
-- (the signed note as served at GET /api/audit/checkpoint); 'verified' is
-- where the monitor's incremental verification got to.
CREATE TABLE audit_checkpoints (
    name      TEXT PRIMARY KEY,
    tree_size BIGINT NOT NULL,
    root      TEXT NOT NULL,       -- hex SHA-256
    chain     TEXT NOT NULL,       -- the chain hash of seq tree_size-1 ('' for the genesis record alone)
    note      TEXT NOT NULL,       -- the signed note ('' for 'verified')
    at        BIGINT NOT NULL
);

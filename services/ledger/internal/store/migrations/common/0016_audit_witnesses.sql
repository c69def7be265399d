-- The witnesses of the audit log (docs/ledger.md, "Witnesses"): for each
-- witness (its verifier key), the last checkpoint it cosigned for this log
-- and its cosignature lines. The checkpoint every witness cosigned is kept
-- in audit_checkpoints as 'witnessed', with their cosignatures, and is the
-- one GET /api/audit/checkpoint serves while witnesses are configured.
CREATE TABLE audit_witnesses (
    witness     TEXT PRIMARY KEY,
    tree_size   BIGINT NOT NULL,
    note        TEXT NOT NULL,    -- the log's signed checkpoint it cosigned
    cosignature TEXT NOT NULL,    -- its cosignature lines
    at          BIGINT NOT NULL
);

-- Two safeguards of the credit economy (docs/ledger.md):
--
-- 1. A signed emergency freeze carries a nonce and the time it was signed,
--    and is refused when its nonce was seen before, so a captured request
--    cannot be replayed. The nonces are kept (on every replica's shared
--    database, across restarts) for twice the 5-minute window a freeze's
--    time may be off by: past that, a replay is refused by its time.
-- 2. Verification walks the whole audit chain and accepts only the breaks
--    that repair entries recorded; it reads those entries first, through
--    this partial index. (The economy row's verify_from_seq and
--    verify_from_hash, where verification used to start after a repair,
--    are no longer read.)

CREATE TABLE freeze_nonces (
    signer_id  TEXT NOT NULL,
    nonce      TEXT NOT NULL,     -- lowercase hex, 16 to 64 digits
    issued_at  BIGINT NOT NULL,   -- when the signer signed it
    seen_at    BIGINT NOT NULL,   -- when the ledger accepted it
    PRIMARY KEY (signer_id, nonce)
);

CREATE INDEX freeze_nonces_issued ON freeze_nonces (issued_at);

CREATE INDEX audit_entries_repairs ON audit_entries (seq) WHERE kind = 'repair';

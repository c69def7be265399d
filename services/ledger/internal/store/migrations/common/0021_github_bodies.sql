-- A signed body seen before is a repeat, whatever its X-GitHub-Delivery:
-- the signature covers the body and not the header, so a captured body
-- sent with a fresh delivery id would otherwise be recorded again. Keyed
-- by the body's SHA-256 (hex), kept as long as the contribution it
-- recorded (docs/ledger.md, "GitHub webhook"). Written in the delivery's
-- transaction before the contribution, hence the deferred reference.
CREATE TABLE github_bodies (
    body_sha256     TEXT PRIMARY KEY,
    contribution_id TEXT NOT NULL UNIQUE REFERENCES contributions (id) DEFERRABLE INITIALLY DEFERRED,
    received_at     BIGINT NOT NULL
);

-- Idempotency-Key records of task creation and claims (the platform's
-- idempotency package): the same key and body answer the stored response,
-- the same key with another body is refused. Scoped by operation and caller.
CREATE TABLE idempotency_keys (
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);

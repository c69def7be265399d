-- API tokens: credentials for machines (a worker, a CI job) and people
-- who are not contributors, each with one role. Only the token's hash is
-- kept; a revoked token stays listed with its revocation time. Times are
-- Unix microseconds (UTC).
CREATE TABLE api_tokens (
    id          TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,    -- hex SHA-256 of the token
    name        TEXT NOT NULL,
    role        TEXT NOT NULL,           -- viewer, worker, operator or admin
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT,                  -- NULL: no expiry
    revoked_at  BIGINT                   -- NULL: in force
);

CREATE INDEX api_tokens_created ON api_tokens (created_at);

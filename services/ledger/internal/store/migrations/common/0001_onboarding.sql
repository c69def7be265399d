-- Contributors and their sessions. Times are Unix microseconds (UTC).
CREATE TABLE contributors (
    id          TEXT PRIMARY KEY,
    handle      TEXT UNIQUE,            -- NULL for contributors created by a contribution
    trust_level TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE sessions (
    token_hash     TEXT PRIMARY KEY,     -- hex SHA-256 of the token; the token is never stored
    contributor_id TEXT NOT NULL REFERENCES contributors (id),
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT                -- NULL: no expiry
);

CREATE INDEX sessions_contributor ON sessions (contributor_id);

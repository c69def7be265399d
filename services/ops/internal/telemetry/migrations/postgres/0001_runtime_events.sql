-- Runtime telemetry: one row per request the gateway served. Only the route
-- pattern, method, status and duration are kept: never a raw path, query
-- string, header or body. Times are Unix microseconds (UTC).
CREATE TABLE runtime_events (
    id          BIGSERIAL PRIMARY KEY,
    occurred_at BIGINT NOT NULL,
    method      TEXT NOT NULL,
    route       TEXT NOT NULL,
    status      INTEGER NOT NULL,
    duration_ms DOUBLE PRECISION NOT NULL,
    recorded_at BIGINT NOT NULL
);

CREATE INDEX runtime_events_occurred ON runtime_events (occurred_at);

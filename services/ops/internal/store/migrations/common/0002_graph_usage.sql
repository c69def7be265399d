-- The graph layer (uniform nodes and edges) and provider usage snapshots.
-- Ids are UUIDs as text; times are Unix microseconds (UTC); payloads are JSON
-- objects kept as compact text, identical on both engines (nothing queries
-- inside them yet).
CREATE TABLE graph_nodes (
    id          TEXT PRIMARY KEY,
    node_type   TEXT NOT NULL,
    external_id TEXT,                    -- NULL: the node has none
    payload     TEXT NOT NULL,
    created_at  BIGINT NOT NULL,
    updated_at  BIGINT NOT NULL
);

-- Upserts are idempotent by (node_type, external_id); nodes without an
-- external id are not constrained.
CREATE UNIQUE INDEX graph_nodes_type_external ON graph_nodes (node_type, external_id)
    WHERE external_id IS NOT NULL;

CREATE TABLE graph_edges (
    id           TEXT PRIMARY KEY,
    edge_type    TEXT NOT NULL,
    from_node_id TEXT NOT NULL REFERENCES graph_nodes (id),
    to_node_id   TEXT NOT NULL REFERENCES graph_nodes (id),
    weight       DOUBLE PRECISION NOT NULL,
    payload      TEXT NOT NULL,
    created_at   BIGINT NOT NULL
);

-- Typed traversal in both directions.
CREATE INDEX graph_edges_type_from ON graph_edges (edge_type, from_node_id);
CREATE INDEX graph_edges_type_to ON graph_edges (edge_type, to_node_id);
-- Untyped traversal (a node's outgoing or incoming edges of any type).
CREATE INDEX graph_edges_from ON graph_edges (from_node_id);
CREATE INDEX graph_edges_to ON graph_edges (to_node_id);

-- Provider usage as collected live or posted by agents; metrics is a JSON
-- array of {name, value, limit, unit, is_summary}.
CREATE TABLE usage_snapshots (
    id           TEXT PRIMARY KEY,
    provider     TEXT NOT NULL,
    family       TEXT NOT NULL,
    source       TEXT NOT NULL,          -- 'live' or 'ingest'
    metrics      TEXT NOT NULL,
    collected_at BIGINT NOT NULL,
    created_at   BIGINT NOT NULL
);

CREATE INDEX usage_snapshots_provider ON usage_snapshots (provider, collected_at);

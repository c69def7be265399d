-- A kept count of the graph's edges, the total GET /api/graph/edges
-- answers without a filter: the page counted every edge on each request
-- (issue 38). A trigger counts each edge as it is inserted, in the
-- transaction that inserts it; edges are never deleted. The table is
-- locked while it is counted, so no edge slips between the count and the
-- trigger.
LOCK TABLE graph_edges IN SHARE MODE;

-- A count is the sum of its shards: each connection adds to the shard of
-- its backend's pid, so concurrent inserts do not queue on one row's lock
-- (as the ledger's row_counts, migration 0027 there, says).
CREATE TABLE row_counts (
    name  TEXT NOT NULL,
    shard INTEGER NOT NULL,
    n     BIGINT NOT NULL,
    PRIMARY KEY (name, shard)
);
INSERT INTO row_counts (name, shard, n) SELECT 'graph_edges', 0, COUNT(*) FROM graph_edges;

-- search_path FROM CURRENT: the function reads the row_counts of the
-- schema it was created in, whoever's session fires it.
CREATE FUNCTION count_inserted_row() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO row_counts (name, shard, n) VALUES (TG_TABLE_NAME, pg_backend_pid() % 16, 1)
        ON CONFLICT (name, shard) DO UPDATE SET n = row_counts.n + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER graph_edges_counted AFTER INSERT ON graph_edges
    FOR EACH ROW EXECUTE FUNCTION count_inserted_row();

-- Kept counts of each node's edges, the totals a node's page (GET
-- /api/graph/nodes/{id}) and its edge list answer: they were counted over
-- the node's index ranges on each request, a walk of every edge of a hub
-- however small the page (issue 38). A trigger adds each edge to its two
-- endpoints' counts as it is inserted, in the transaction that inserts
-- it; edges are never deleted. outgoing counts the edges from the node,
-- incoming those to it, loops those both from and to it (its edges in
-- both directions are outgoing + incoming - loops). The table is locked
-- while it is counted, so no edge slips between the count and the
-- trigger.
LOCK TABLE graph_edges IN SHARE MODE;

-- A node's count is the sum of its shards: each connection adds to the
-- shard of its backend's pid, so concurrent edges of one hub do not queue
-- on one row's lock (as row_counts, migration 0005, does).
CREATE TABLE node_edge_counts (
    node_id  TEXT NOT NULL,
    shard    INTEGER NOT NULL,
    outgoing BIGINT NOT NULL,
    incoming BIGINT NOT NULL,
    loops    BIGINT NOT NULL,
    PRIMARY KEY (node_id, shard)
);
INSERT INTO node_edge_counts (node_id, shard, outgoing, incoming, loops)
SELECT node_id, 0, SUM(outgoing), SUM(incoming), SUM(loops) FROM (
    SELECT from_node_id AS node_id, 1 AS outgoing, 0 AS incoming,
        CASE WHEN from_node_id = to_node_id THEN 1 ELSE 0 END AS loops FROM graph_edges
    UNION ALL
    SELECT to_node_id, 0, 1, 0 FROM graph_edges
) e GROUP BY node_id;

-- search_path FROM CURRENT: the function writes the node_edge_counts of
-- the schema it was created in, whoever's session fires it.
CREATE FUNCTION count_node_edge() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    loop_n BIGINT := CASE WHEN NEW.from_node_id = NEW.to_node_id THEN 1 ELSE 0 END;
BEGIN
    INSERT INTO node_edge_counts (node_id, shard, outgoing, incoming, loops)
        VALUES (NEW.from_node_id, pg_backend_pid() % 16, 1, 0, loop_n)
        ON CONFLICT (node_id, shard) DO UPDATE SET outgoing = node_edge_counts.outgoing + 1,
            loops = node_edge_counts.loops + excluded.loops;
    INSERT INTO node_edge_counts (node_id, shard, outgoing, incoming, loops)
        VALUES (NEW.to_node_id, pg_backend_pid() % 16, 0, 1, 0)
        ON CONFLICT (node_id, shard) DO UPDATE SET incoming = node_edge_counts.incoming + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER graph_edges_counted_by_node AFTER INSERT ON graph_edges
    FOR EACH ROW EXECUTE FUNCTION count_node_edge();

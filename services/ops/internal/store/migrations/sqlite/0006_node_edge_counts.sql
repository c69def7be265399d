-- Kept counts of each node's edges (postgres/0006_node_edge_counts.sql
-- says why). SQLite has one writer: no edge is inserted between the count
-- and the trigger. One shard: nothing to spread.
CREATE TABLE node_edge_counts (
    node_id  TEXT NOT NULL,
    shard    INTEGER NOT NULL,
    outgoing INTEGER NOT NULL,
    incoming INTEGER NOT NULL,
    loops    INTEGER NOT NULL,
    PRIMARY KEY (node_id, shard)
);
INSERT INTO node_edge_counts (node_id, shard, outgoing, incoming, loops)
SELECT node_id, 0, SUM(outgoing), SUM(incoming), SUM(loops) FROM (
    SELECT from_node_id AS node_id, 1 AS outgoing, 0 AS incoming,
        CASE WHEN from_node_id = to_node_id THEN 1 ELSE 0 END AS loops FROM graph_edges
    UNION ALL
    SELECT to_node_id, 0, 1, 0 FROM graph_edges
) e GROUP BY node_id;

CREATE TRIGGER graph_edges_counted_by_node AFTER INSERT ON graph_edges
BEGIN
    INSERT INTO node_edge_counts (node_id, shard, outgoing, incoming, loops)
        VALUES (NEW.from_node_id, 0, 1, 0, CASE WHEN NEW.from_node_id = NEW.to_node_id THEN 1 ELSE 0 END)
        ON CONFLICT (node_id, shard) DO UPDATE SET outgoing = outgoing + 1, loops = loops + excluded.loops;
    INSERT INTO node_edge_counts (node_id, shard, outgoing, incoming, loops)
        VALUES (NEW.to_node_id, 0, 0, 1, 0)
        ON CONFLICT (node_id, shard) DO UPDATE SET incoming = incoming + 1;
END;

-- A kept count of the graph's edges (postgres/0005_edge_count.sql says
-- why). SQLite has one writer: no edge is inserted between the count and
-- the trigger.
-- One shard: SQLite has one writer at a time, nothing to spread.
CREATE TABLE row_counts (
    name  TEXT NOT NULL,
    shard INTEGER NOT NULL,
    n     INTEGER NOT NULL,
    PRIMARY KEY (name, shard)
);
INSERT INTO row_counts (name, shard, n) SELECT 'graph_edges', 0, COUNT(*) FROM graph_edges;

CREATE TRIGGER graph_edges_counted AFTER INSERT ON graph_edges
BEGIN
    UPDATE row_counts SET n = n + 1 WHERE name = 'graph_edges' AND shard = 0;
END;

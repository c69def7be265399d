-- A node's edges are listed oldest first (ORDER BY created_at, id), a
-- page at a time. The indexes on the endpoints alone found a hub's edges
-- but not in that order: every page sorted all of them (a node with 10^6
-- edges: 2.3 s a page). Each endpoint index, typed or not, now ends in
-- (created_at, id), so a page is a range of one index (or, for both
-- directions, the merge of two ranges); (created_at, id) serves the list
-- with no endpoint.
DROP INDEX graph_edges_type_from;
DROP INDEX graph_edges_type_to;
DROP INDEX graph_edges_from;
DROP INDEX graph_edges_to;
CREATE INDEX graph_edges_type_from ON graph_edges (edge_type, from_node_id, created_at, id);
CREATE INDEX graph_edges_type_to ON graph_edges (edge_type, to_node_id, created_at, id);
CREATE INDEX graph_edges_from ON graph_edges (from_node_id, created_at, id);
CREATE INDEX graph_edges_to ON graph_edges (to_node_id, created_at, id);
CREATE INDEX graph_edges_created ON graph_edges (created_at, id);

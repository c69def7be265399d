package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// nodeID is the id of the i-th seeded node (a valid UUID).
func nodeID(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-000000000000", i) }

// TestTraversalUsesTheTypedIndexesOnPostgres seeds enough edges for the
// planner's statistics to matter, analyzes the table, and checks that the
// typed traversals the API runs use (edge_type, from_node_id) and
// (edge_type, to_node_id).
func TestTraversalUsesTheTypedIndexesOnPostgres(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.Postgres, "ops", store.Migrations())
	ctx := context.Background()
	const nodes, edges, types = 200, 20000, 50
	_, err := db.Exec(ctx, `INSERT INTO graph_nodes (id, node_type, external_id, payload, created_at, updated_at)
		SELECT lpad(to_hex(g), 8, '0') || '-0000-4000-8000-000000000000', 'thing', NULL, '{}', g, g
		FROM generate_series(0, $1 - 1) g`, nodes)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `INSERT INTO graph_edges (id, edge_type, from_node_id, to_node_id, weight, payload, created_at)
		SELECT gen_random_uuid()::text, 'type' || floor(random() * $2)::int,
			lpad(to_hex(floor(random() * $3)::int), 8, '0') || '-0000-4000-8000-000000000000',
			lpad(to_hex(floor(random() * $3)::int), 8, '0') || '-0000-4000-8000-000000000000',
			1, '{}', g
		FROM generate_series(1, $1) g`, edges, types, nodes)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `ANALYZE graph_edges`)
	require.NoError(t, err)

	for _, tc := range []struct {
		name  string
		f     store.EdgeFilter
		index string
	}{
		{"list by type and source", store.EdgeFilter{EdgeType: "type7", FromNodeID: nodeID(3)}, "graph_edges_type_from"},
		{"list by type and target", store.EdgeFilter{EdgeType: "type7", ToNodeID: nodeID(3)}, "graph_edges_type_to"},
		{"a node's outgoing edges of a type", store.EdgeFilter{EdgeType: "type7", Node: nodeID(3), Direction: "outgoing"}, "graph_edges_type_from"},
		{"a node's incoming edges of a type", store.EdgeFilter{EdgeType: "type7", Node: nodeID(3), Direction: "incoming"}, "graph_edges_type_to"},
	} {
		tc.f.Limit = 50
		query, args := edgesQuery(tc.f)
		plan := explain(t, db, "EXPLAIN "+query, args)
		require.Contains(t, plan, tc.index, "%s: plan\n%s", tc.name, plan)
		require.NotContains(t, plan, "Seq Scan", "%s: plan\n%s", tc.name, plan)
	}
}

// TestAHubsEdgesAreIndexRanges: a node's edges, in any direction, typed
// or not, read a page as ranges of an index in the page's order — no
// sequential scan and no sort of the node's edges — so a page costs the
// same for a hub with a million edges as for a leaf (it sorted them all,
// 2.3 s a page). The plan checked is the generic one Postgres caches
// (dbtest.GenericPlan), told to avoid both where it can (enable_seqscan,
// enable_sort off): a plan that still has one cannot do without it.
func TestAHubsEdgesAreIndexRanges(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.Postgres, "ops", store.Migrations())
	ctx := context.Background()
	// 200 nodes, 20 000 edges; node 0, the hub, is an end of 2 000 of them.
	_, err := db.Exec(ctx, `INSERT INTO graph_nodes (id, node_type, external_id, payload, created_at, updated_at)
		SELECT lpad(to_hex(g), 8, '0') || '-0000-4000-8000-000000000000', 'thing', NULL, '{}', g, g
		FROM generate_series(0, 199) g`)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `INSERT INTO graph_edges (id, edge_type, from_node_id, to_node_id, weight, payload, created_at)
		SELECT gen_random_uuid()::text, 'type' || (g % 3),
			CASE WHEN g % 20 = 0 THEN $1 ELSE lpad(to_hex(1 + g % 199), 8, '0') || '-0000-4000-8000-000000000000' END,
			CASE WHEN g % 20 = 1 THEN $1 ELSE lpad(to_hex(1 + (g * 7) % 199), 8, '0') || '-0000-4000-8000-000000000000' END,
			1, '{}', g FROM generate_series(1, 20000) g`, nodeID(0))
	require.NoError(t, err)
	_, err = db.Exec(ctx, `ANALYZE graph_edges`)
	require.NoError(t, err)
	filters := []store.EdgeFilter{
		{Node: nodeID(0), Direction: "both"},
		{Node: nodeID(0), Direction: "both", EdgeType: "type1"},
		{Node: nodeID(0), Direction: "outgoing"},
		{Node: nodeID(0), Direction: "incoming"},
		{FromNodeID: nodeID(0)},
		{},
	}
	want := []string{
		`(?s)graph_edges_from .*graph_edges_to `,
		`(?s)graph_edges_type_from .*graph_edges_type_to `,
		`graph_edges_from `,
		`graph_edges_to `,
		`graph_edges_from `,
		`graph_edges_created `,
	}
	for i, f := range filters {
		f.Limit, f.Offset = 50, 100
		query, args := edgesQuery(f)
		plan := dbtest.GenericPlan(t, db, query, args, "enable_seqscan = off", "enable_sort = off", "enable_bitmapscan = off")
		require.NotContains(t, plan, "Seq Scan", "%+v: plan\n%s", f, plan)
		require.NotRegexp(t, `(^|->)\s*Sort\s`, plan, "%+v: no sort of the node's edges; plan\n%s", f, plan)
		require.Regexp(t, want[i], plan, "%+v: plan\n%s", f, plan)
	}
}

// TestTraversalUsesTheTypedIndexesOnSQLite checks the same on SQLite, whose
// planner prefers the index matching the most equality constraints.
func TestTraversalUsesTheTypedIndexesOnSQLite(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.SQLite, "ops", store.Migrations())
	for f, index := range map[*store.EdgeFilter]string{
		{EdgeType: "t", FromNodeID: nodeID(1)}: "graph_edges_type_from",
		{EdgeType: "t", ToNodeID: nodeID(1)}:   "graph_edges_type_to",
	} {
		f.Limit = 50
		query, args := edgesQuery(*f)
		plan := explain(t, db, "EXPLAIN QUERY PLAN "+query, args)
		require.Contains(t, plan, index, "plan:\n%s", plan)
	}
}

// explain returns a plan's text, one line per row (the last column of each
// row holds the text on both engines).
func explain(t *testing.T, db *database.DB, query string, args []any) string {
	t.Helper()
	rows, err := db.Query(context.Background(), query, args...)
	require.NoError(t, err)
	defer rows.Close()
	var lines []string
	for rows.Next() {
		if db.Engine() == database.Postgres {
			var line string
			require.NoError(t, rows.Scan(&line))
			lines = append(lines, line)
			continue
		}
		var id, parent, unused int
		var detail string
		require.NoError(t, rows.Scan(&id, &parent, &unused, &detail))
		lines = append(lines, detail)
	}
	require.NoError(t, rows.Err())
	return strings.Join(lines, "\n")
}

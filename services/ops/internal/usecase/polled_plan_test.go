package usecase_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// opsGrowing are the ops tables that grow with history (usage_snapshots
// does not: it keeps usecase.SnapshotsKept a provider).
var opsGrowing = []string{"graph_nodes", "graph_edges", "monitor_checks"}

// TestPolledRoutesReadIndexRanges: every statement the graph routes, the
// automation usage and the monitor's latest check (what GET
// /api/health/coherence answers from) send reads the tables that grow
// with history by ranges of their indexes, in the generic plan Postgres
// caches for it (dbtest.RequireIndexReads).
func TestPolledRoutesReadIndexRanges(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.Postgres, "ops", store.Migrations())
	var rec dbtest.Recording
	app := usecase.New(db, func(q database.Querier) usecase.Repos { return repos(rec.Wrap(q)) },
		usecase.Config{Clock: clock.NewFake(t0)})
	t.Cleanup(app.Close)
	ctx := context.Background()
	var ids []string
	for range 3 {
		n, _, err := app.UpsertNode(ctx, usecase.UpsertNodeCmd{NodeType: "idea", Payload: map[string]any{}})
		require.NoError(t, err)
		ids = append(ids, n.ID)
	}
	for _, to := range ids[1:] {
		_, err := app.CreateEdge(ctx, usecase.CreateEdgeCmd{EdgeType: "depends_on", FromNodeID: ids[0], ToNodeID: to})
		require.NoError(t, err)
	}
	_, err := db.Exec(ctx, `ANALYZE`)
	require.NoError(t, err)

	dbtest.RequireCallsReadIndexRanges(t, db, &rec, map[string]func() error{
		"GET /api/graph/nodes/{id}":       func() error { _, err := app.Node(ctx, ids[0]); return err },
		"GET /api/graph/nodes/{id}/edges": func() error { _, err := app.NodeEdges(ctx, usecase.NodeEdgesCmd{NodeID: ids[0]}); return err },
		"GET /api/graph/edges?from_node_id=": func() error {
			_, err := app.Edges(ctx, usecase.EdgesCmd{FromNodeID: ids[0]})
			return err
		},
		"GET /api/graph/edges": func() error { _, err := app.Edges(ctx, usecase.EdgesCmd{}); return err },
		"GET /api/graph/edges?edge_type=": func() error {
			_, err := app.Edges(ctx, usecase.EdgesCmd{EdgeType: "depends_on"})
			return err
		},
		"GET /api/automation/usage": func() error { _, err := app.AutomationUsage(ctx); return err },
		"the monitor's latest check": func() error {
			_, _, err := app.LatestCheck(ctx)
			return err
		},
	}, opsGrowing...)
}

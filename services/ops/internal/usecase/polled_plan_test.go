package usecase_test

import (
	"context"
	"strings"
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
var opsGrowing = []string{"graph_nodes", "graph_edges", "monitor_checks", "node_edge_counts"}

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

// TestANodesTotalsAreKept: a node's page and its edge list answer their
// totals from the node's kept counts (migration 0006), on both engines:
// no statement counts its edges, which walked every edge of a hub
// however small the page (2.3 s a page at 10^6 edges). Loops count once
// in both directions.
func TestANodesTotalsAreKept(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, usecase.Config{})
		ctx := context.Background()
		var ids []string
		for range 3 {
			n, _, err := e.app.UpsertNode(ctx, usecase.UpsertNodeCmd{NodeType: "idea", Payload: map[string]any{}})
			require.NoError(t, err)
			ids = append(ids, n.ID)
		}
		for _, to := range []string{ids[1], ids[2], ids[0]} {
			_, err := e.app.CreateEdge(ctx, usecase.CreateEdgeCmd{EdgeType: "depends_on", FromNodeID: ids[0], ToNodeID: to})
			require.NoError(t, err)
		}
		_, err := e.app.CreateEdge(ctx, usecase.CreateEdgeCmd{EdgeType: "relates_to", FromNodeID: ids[1], ToNodeID: ids[0]})
		require.NoError(t, err)

		var rec dbtest.Recording
		app := usecase.New(e.db, func(q database.Querier) usecase.Repos { return repos(rec.Wrap(q)) }, usecase.Config{Clock: e.clock})
		t.Cleanup(app.Close)
		node, err := app.Node(ctx, ids[0])
		require.NoError(t, err)
		require.Equal(t, 3, node.OutgoingTotal, "two edges out and the loop")
		for dir, want := range map[string]int{"outgoing": 3, "incoming": 2, "both": 4} {
			page, err := app.NodeEdges(ctx, usecase.NodeEdgesCmd{NodeID: ids[0], Direction: dir})
			require.NoError(t, err)
			require.Equal(t, want, page.Total, dir)
			require.Len(t, page.Edges, want, dir)
		}
		stmts := rec.Take()
		require.NotEmpty(t, stmts)
		for _, st := range stmts {
			require.NotContains(t, strings.ToUpper(st.Query), "COUNT(", "a node's totals are kept")
		}
	})
}

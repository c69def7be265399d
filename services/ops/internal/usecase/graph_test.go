package usecase_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestEdgesNeedBothEndpoints(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, usecase.Config{})
		ctx := context.Background()
		a, created, err := e.app.UpsertNode(ctx, usecase.UpsertNodeCmd{NodeType: "thing", Payload: map[string]any{}})
		require.NoError(t, err)
		require.True(t, created)
		missing := uuid.NewString()
		for _, tc := range []struct{ from, to, field string }{{missing, a.ID, "from_node_id"}, {a.ID, missing, "to_node_id"}} {
			_, err := e.app.CreateEdge(ctx, usecase.CreateEdgeCmd{EdgeType: "links", FromNodeID: tc.from, ToNodeID: tc.to})
			fe, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, fault.NotFound, fe.Kind)
			require.Equal(t, tc.field+": node "+missing+" not found", fe.Detail)
		}
		require.Zero(t, e.count(t, "graph_edges"), "nothing was written")

		edge, err := e.app.CreateEdge(ctx, usecase.CreateEdgeCmd{EdgeType: "links", FromNodeID: strings.ToUpper(a.ID), ToNodeID: a.ID})
		require.NoError(t, err)
		require.Equal(t, a.ID, edge.FromNodeID, "ids are stored in canonical form")
		require.Equal(t, t0, edge.CreatedAt)
		v, err := e.app.Node(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, 1, v.OutgoingTotal)
		require.Equal(t, edge, v.Outgoing[0], "the answer is what a read returns")
	})
}

func TestGraphRequestsAreValidatedWhole(t *testing.T) {
	t.Parallel()
	e := setup(t, database.SQLite, usecase.Config{})
	ctx := context.Background()
	empty := ""
	_, _, err := e.app.UpsertNode(ctx, usecase.UpsertNodeCmd{ExternalID: &empty})
	requireFields(t, err, "node_type", "external_id", "payload")
	_, err = e.app.CreateEdge(ctx, usecase.CreateEdgeCmd{FromNodeID: "x"})
	requireFields(t, err, "edge_type", "from_node_id", "to_node_id")
	limit := int32(0)
	_, err = e.app.NodeEdges(ctx, usecase.NodeEdgesCmd{NodeID: "x", Direction: "up", Limit: &limit, Offset: -1})
	requireFields(t, err, "node_id", "direction", "limit", "offset")
	require.Zero(t, e.count(t, "graph_nodes"))

	_, err = e.app.NodeEdges(ctx, usecase.NodeEdgesCmd{NodeID: uuid.NewString()})
	require.Equal(t, fault.NotFound, fault.KindOf(err), "an unknown node is a 404, not an empty page")
	_, err = e.app.Node(ctx, uuid.NewString())
	require.Equal(t, fault.NotFound, fault.KindOf(err))
}

// requireFields checks err is one validation failure naming exactly fields.
func requireFields(t *testing.T, err error, fields ...string) {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want a validation failure, got %v", err)
	require.Equal(t, fault.Invalid, fe.Kind, "%v", err)
	var got []string
	for _, f := range fe.Fields {
		got = append(got, f.Field)
	}
	require.Equal(t, fields, got)
}

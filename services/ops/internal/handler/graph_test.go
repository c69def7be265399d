package handler_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func payload(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	require.NoError(t, err)
	return s
}

func str(s string) *string { return &s }

func i32(v int32) *int32 { return &v }

// requireFields checks err is a validation failure naming exactly fields.
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

func TestGraphValidation(t *testing.T) {
	t.Parallel()
	h := setup(t, usecase.Config{})
	ctx := context.Background()
	obj := payload(t, map[string]any{"k": "v"})
	valid := uuid.NewString()

	t.Run("nodes", func(t *testing.T) {
		tests := []struct {
			name   string
			req    *opsv1.UpsertNodeRequest
			fields []string
		}{
			{"no node_type", &opsv1.UpsertNodeRequest{Payload: obj}, []string{"node_type"}},
			{"node_type too long", &opsv1.UpsertNodeRequest{NodeType: strings.Repeat("t", 65), Payload: obj}, []string{"node_type"}},
			{"empty external_id", &opsv1.UpsertNodeRequest{NodeType: "t", ExternalId: str(""), Payload: obj}, []string{"external_id"}},
			{"external_id too long", &opsv1.UpsertNodeRequest{NodeType: "t", ExternalId: str(strings.Repeat("x", 257)), Payload: obj}, []string{"external_id"}},
			{"no payload", &opsv1.UpsertNodeRequest{NodeType: "t"}, []string{"payload"}},
			{"everything wrong", &opsv1.UpsertNodeRequest{ExternalId: str("")}, []string{"node_type", "external_id", "payload"}},
		}
		for _, tc := range tests {
			_, err := h.UpsertNode(ctx, tc.req)
			requireFields(t, err, tc.fields...)
		}
	})

	t.Run("edges", func(t *testing.T) {
		nan := func() *float64 { v := 0.0; v /= v; return &v }()
		tests := []struct {
			name   string
			req    *opsv1.CreateEdgeRequest
			fields []string
		}{
			{"no edge_type", &opsv1.CreateEdgeRequest{FromNodeId: valid, ToNodeId: valid}, []string{"edge_type"}},
			{"bad ids", &opsv1.CreateEdgeRequest{EdgeType: "e", FromNodeId: "1", ToNodeId: ""}, []string{"from_node_id", "to_node_id"}},
			{"weight not finite", &opsv1.CreateEdgeRequest{EdgeType: "e", FromNodeId: valid, ToNodeId: valid, Weight: nan}, []string{"weight"}},
		}
		for _, tc := range tests {
			_, err := h.CreateEdge(ctx, tc.req)
			requireFields(t, err, tc.fields...)
		}
	})

	t.Run("lists", func(t *testing.T) {
		_, err := h.ListNodeEdges(ctx, &opsv1.ListNodeEdgesRequest{NodeId: "x", Direction: "up", Limit: i32(0), Offset: -1})
		requireFields(t, err, "node_id", "direction", "limit", "offset")
		_, err = h.ListEdges(ctx, &opsv1.ListEdgesRequest{FromNodeId: "x", ToNodeId: "y", EdgeType: strings.Repeat("e", 65), Limit: i32(501)})
		requireFields(t, err, "edge_type", "from_node_id", "to_node_id", "limit")
		_, err = h.GetNode(ctx, &opsv1.GetNodeRequest{NodeId: "not-a-uuid"})
		requireFields(t, err, "node_id")
	})

	t.Run("unknown nodes are 404s", func(t *testing.T) {
		_, err := h.GetNode(ctx, &opsv1.GetNodeRequest{NodeId: valid})
		require.Equal(t, fault.NotFound, fault.KindOf(err))
		_, err = h.ListNodeEdges(ctx, &opsv1.ListNodeEdgesRequest{NodeId: valid})
		require.Equal(t, fault.NotFound, fault.KindOf(err))
		_, err = h.CreateEdge(ctx, &opsv1.CreateEdgeRequest{EdgeType: "e", FromNodeId: valid, ToNodeId: valid})
		fe, _ := fault.As(err)
		require.Equal(t, fault.NotFound, fe.Kind)
		require.Equal(t, "from_node_id: node "+valid+" not found", fe.Detail)
	})
}

func TestGraphRoundTrip(t *testing.T) {
	t.Parallel()
	h := setup(t, usecase.Config{})
	ctx := context.Background()

	a, err := h.UpsertNode(ctx, &opsv1.UpsertNodeRequest{NodeType: "idea", ExternalId: str("idea-1"), Payload: payload(t, map[string]any{"name": "A", "n": 1.0})})
	require.NoError(t, err)
	require.True(t, a.GetCreated())
	again, err := h.UpsertNode(ctx, &opsv1.UpsertNodeRequest{NodeType: "idea", ExternalId: str("idea-1"), Payload: payload(t, map[string]any{"name": "A2"})})
	require.NoError(t, err)
	require.False(t, again.GetCreated())
	require.Equal(t, a.GetNode().GetId(), again.GetNode().GetId())
	require.Equal(t, map[string]any{"name": "A2"}, again.GetNode().GetPayload().AsMap())

	b, err := h.UpsertNode(ctx, &opsv1.UpsertNodeRequest{NodeType: "asset", Payload: payload(t, map[string]any{})})
	require.NoError(t, err)
	require.Nil(t, b.GetNode().GetExternalId(), "no external id: null")

	upper := strings.ToUpper(b.GetNode().GetId())
	e, err := h.CreateEdge(ctx, &opsv1.CreateEdgeRequest{EdgeType: "produces", FromNodeId: a.GetNode().GetId(), ToNodeId: upper})
	require.NoError(t, err)
	require.Equal(t, b.GetNode().GetId(), e.GetEdge().GetToNodeId(), "ids are stored in canonical form")
	require.Equal(t, 1.0, e.GetEdge().GetWeight(), "the default weight")
	require.Equal(t, map[string]any{}, e.GetEdge().GetPayload().AsMap(), "the default payload")

	got, err := h.GetNode(ctx, &opsv1.GetNodeRequest{NodeId: a.GetNode().GetId()})
	require.NoError(t, err)
	require.Equal(t, "idea-1", got.GetExternalId().GetValue())
	require.Len(t, got.GetOutgoingEdges(), 1)
	require.Equal(t, e.GetEdge().GetId(), got.GetOutgoingEdges()[0].GetId())
	require.Equal(t, e.GetEdge().GetCreatedAt(), got.GetOutgoingEdges()[0].GetCreatedAt(), "times read back as written")
	require.Equal(t, int64(1), got.GetOutgoingEdgeCount())

	in, err := h.ListNodeEdges(ctx, &opsv1.ListNodeEdgesRequest{NodeId: b.GetNode().GetId(), Direction: "incoming"})
	require.NoError(t, err)
	require.Equal(t, int64(1), in.GetPagination().GetTotal())
	require.Equal(t, int32(50), in.GetPagination().GetLimit(), "the default page size")
	out, err := h.ListNodeEdges(ctx, &opsv1.ListNodeEdgesRequest{NodeId: b.GetNode().GetId(), Direction: "outgoing"})
	require.NoError(t, err)
	require.Empty(t, out.GetEdges())
	require.Equal(t, int64(0), out.GetPagination().GetTotal())
}

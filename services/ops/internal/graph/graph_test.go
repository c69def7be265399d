package graph_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func fields(errs []fault.FieldError) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func TestParseDirection(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]graph.Direction{
		"": graph.Both, "both": graph.Both, "outgoing": graph.Outgoing, "out": graph.Outgoing,
		"incoming": graph.Incoming, "in": graph.Incoming,
	} {
		got, err := graph.ParseDirection(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, "direction %q", in)
	}
	for _, in := range []string{"OUT", "sideways", " both"} {
		_, err := graph.ParseDirection(in)
		require.Equal(t, fault.Invalid, fault.KindOf(err), "direction %q", in)
	}
}

func TestCheckType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in    string
		valid bool
	}{
		{"idea", true},
		{strings.Repeat("n", graph.MaxTypeLen), true},
		{strings.Repeat("é", graph.MaxTypeLen), true}, // characters, not bytes
		{strings.Repeat("n", graph.MaxTypeLen+1), false},
		{"", false},
		{"   ", false},
		{"\xff", false},
	}
	for _, tc := range tests {
		errs := graph.CheckType("node_type", tc.in)
		if tc.valid {
			require.Empty(t, errs, "%q", tc.in)
		} else {
			require.Equal(t, []string{"node_type"}, fields(errs), "%q", tc.in)
		}
	}
}

func TestCheckExternalID(t *testing.T) {
	t.Parallel()
	require.Empty(t, graph.CheckExternalID("github:foundry/1"))
	require.Empty(t, graph.CheckExternalID(strings.Repeat("x", graph.MaxExternalIDLen)))
	require.Equal(t, []string{"external_id"}, fields(graph.CheckExternalID(strings.Repeat("x", graph.MaxExternalIDLen+1))))
	require.Equal(t, []string{"external_id"}, fields(graph.CheckExternalID("")))
}

func TestParseID(t *testing.T) {
	t.Parallel()
	got, errs := graph.ParseID("node_id", "3F2504E0-4F89-11D3-9A0C-0305E82C3301")
	require.Empty(t, errs)
	require.Equal(t, "3f2504e0-4f89-11d3-9a0c-0305e82c3301", got, "canonical lowercase")
	for _, bad := range []string{"", "42", "3f2504e04f8911d39a0c0305e82c3301", "{3f2504e0-4f89-11d3-9a0c-0305e82c3301}"} {
		_, errs := graph.ParseID("node_id", bad)
		require.Equal(t, []string{"node_id"}, fields(errs), "%q", bad)
	}
	got, errs = graph.ParseOptionalID("from_node_id", "")
	require.Empty(t, errs)
	require.Empty(t, got)
}

func TestWeight(t *testing.T) {
	t.Parallel()
	w, errs := graph.Weight(nil)
	require.Empty(t, errs)
	require.Equal(t, graph.DefaultWeight, w)
	half := 0.5
	w, errs = graph.Weight(&half)
	require.Empty(t, errs)
	require.Equal(t, 0.5, w)
	nan := math.NaN()
	_, errs = graph.Weight(&nan)
	require.Equal(t, []string{"weight"}, fields(errs))
}

func TestPayload(t *testing.T) {
	t.Parallel()
	got, errs := graph.Payload("payload", map[string]any{"b": 1.0, "a": "x"}, true)
	require.Empty(t, errs)
	require.Equal(t, `{"a":"x","b":1}`, got, "compact, keys sorted")
	_, errs = graph.Payload("payload", nil, true)
	require.Equal(t, []string{"payload"}, fields(errs), "a node's payload is required")
	got, errs = graph.Payload("payload", nil, false)
	require.Empty(t, errs)
	require.Equal(t, "{}", got, "an edge's payload defaults to {}")
	_, errs = graph.Payload("payload", map[string]any{"x": math.Inf(1)}, true)
	require.Equal(t, []string{"payload"}, fields(errs))
}

func TestPage(t *testing.T) {
	t.Parallel()
	i32 := func(v int32) *int32 { return &v }
	tests := []struct {
		limit      *int32
		offset     int32
		wantLimit  int
		wantFields []string
	}{
		{nil, 0, graph.DefaultLimit, nil},
		{i32(1), 5, 1, nil},
		{i32(graph.MaxLimit), 0, graph.MaxLimit, nil},
		{i32(0), 0, 0, []string{"limit"}},
		{i32(graph.MaxLimit + 1), 0, 0, []string{"limit"}},
		{nil, -1, 0, []string{"offset"}},
	}
	for _, tc := range tests {
		limit, offset, errs := graph.Page(tc.limit, tc.offset)
		require.Equal(t, tc.wantFields, fields(errs))
		if tc.wantFields == nil {
			require.Equal(t, tc.wantLimit, limit)
			require.Equal(t, int(tc.offset), offset)
		}
	}
}

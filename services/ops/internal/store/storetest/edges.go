package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/store"
)

func runEdges(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("an edge needs both endpoints: the schema refuses a missing one", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := mustNode(t, h, "a")
		missing := uuid.NewString()
		for _, e := range []store.Edge{edge("links", missing, a.ID, t0), edge("links", a.ID, missing, t0)} {
			require.Error(t, h.write(func(r repos) error { return r.edges.Create(ctx, e) }))
		}
		_, total, err := h.read().edges.List(ctx, store.EdgeFilter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 0, total, "nothing was written")
	})

	t.Run("an unknown node has no edges", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		edges, total, err := h.read().edges.List(context.Background(), store.EdgeFilter{Node: uuid.NewString(), Direction: graph.Both, Limit: 10})
		require.NoError(t, err)
		require.Empty(t, edges)
		require.Zero(t, total)
	})

	// The totals of a node's edges are its kept counts (migration 0006),
	// the others ranges of an index: each case checks its total too.
	t.Run("traversal both ways, by type", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a, b, c := mustNode(t, h, "a"), mustNode(t, h, "b"), mustNode(t, h, "c")
		ab := edge("depends_on", a.ID, b.ID, t0)
		ac := edge("relates_to", a.ID, c.ID, t0.Add(time.Second))
		ca := edge("depends_on", c.ID, a.ID, t0.Add(2*time.Second))
		bb := edge("relates_to", b.ID, b.ID, t0.Add(3*time.Second))
		createEdges(t, h, ab, ac, ca, bb)
		tests := []struct {
			name string
			f    store.EdgeFilter
			want []store.Edge
		}{
			{"outgoing", store.EdgeFilter{Node: a.ID, Direction: graph.Outgoing}, []store.Edge{ab, ac}},
			{"incoming", store.EdgeFilter{Node: a.ID, Direction: graph.Incoming}, []store.Edge{ca}},
			{"both", store.EdgeFilter{Node: a.ID, Direction: graph.Both}, []store.Edge{ab, ac, ca}},
			{"both, typed", store.EdgeFilter{Node: a.ID, Direction: graph.Both, EdgeType: "depends_on"}, []store.Edge{ab, ca}},
			{"a self-loop is listed once", store.EdgeFilter{Node: b.ID, Direction: graph.Both}, []store.Edge{ab, bb}},
			{"a self-loop is outgoing", store.EdgeFilter{Node: b.ID, Direction: graph.Outgoing}, []store.Edge{bb}},
			{"and incoming", store.EdgeFilter{Node: b.ID, Direction: graph.Incoming}, []store.Edge{ab, bb}},
			{"an end only", store.EdgeFilter{Node: c.ID, Direction: graph.Incoming}, []store.Edge{ac}},
			{"by type and from", store.EdgeFilter{EdgeType: "depends_on", FromNodeID: c.ID}, []store.Edge{ca}},
			{"by type and to", store.EdgeFilter{EdgeType: "depends_on", ToNodeID: b.ID}, []store.Edge{ab}},
			{"by type", store.EdgeFilter{EdgeType: "relates_to"}, []store.Edge{ac, bb}},
			{"by both endpoints", store.EdgeFilter{FromNodeID: a.ID, ToNodeID: c.ID}, []store.Edge{ac}},
			{"no match", store.EdgeFilter{EdgeType: "nope"}, []store.Edge{}},
			{"every edge (a kept count)", store.EdgeFilter{}, []store.Edge{ab, ac, ca, bb}},
		}
		for _, tc := range tests {
			tc.f.Limit = 50
			got, total, err := h.read().edges.List(ctx, tc.f)
			require.NoError(t, err, tc.name)
			require.Equal(t, tc.want, got, tc.name)
			require.Equal(t, len(tc.want), total, tc.name)
		}
	})

	t.Run("pagination is stable: created_at, then id", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a, b := mustNode(t, h, "a"), mustNode(t, h, "b")
		var want []store.Edge
		for i := range 7 {
			e := edge("next", a.ID, b.ID, t0.Add(time.Duration(i/2)*time.Second)) // pairs share a timestamp
			createEdges(t, h, e)
			want = append(want, e)
		}
		sortEdges(want)
		var got []store.Edge
		for offset := 0; offset < 9; offset += 3 {
			page, total, err := h.read().edges.List(ctx, store.EdgeFilter{EdgeType: "next", FromNodeID: a.ID, Limit: 3, Offset: offset})
			require.NoError(t, err)
			require.Equal(t, 7, total)
			require.LessOrEqual(t, len(page), 3)
			got = append(got, page...)
		}
		require.Equal(t, want, got, "pages concatenate to the whole, in order, without repeats")

		// Both directions merge the node's outgoing and incoming edges
		// (a loop once), page by page.
		c := mustNode(t, h, "c")
		both := append([]store.Edge(nil), want...)
		for i := range 5 {
			e := edge("back", b.ID, a.ID, t0.Add(time.Duration(i)*time.Second+time.Millisecond))
			if i == 4 {
				e = edge("loop", a.ID, a.ID, t0.Add(time.Duration(i)*time.Second))
			}
			createEdges(t, h, e)
			both = append(both, e)
		}
		createEdges(t, h, edge("elsewhere", b.ID, c.ID, t0))
		sortEdges(both)
		got = nil
		for offset := 0; offset < 14; offset += 4 {
			page, total, err := h.read().edges.List(ctx, store.EdgeFilter{Node: a.ID, Direction: graph.Both, Limit: 4, Offset: offset})
			require.NoError(t, err)
			require.Equal(t, 12, total)
			got = append(got, page...)
		}
		require.Equal(t, both, got, "both directions page in order, the loop once")

		page, total, err := h.read().edges.List(ctx, store.EdgeFilter{Node: a.ID, Direction: graph.Outgoing, Limit: 3, Offset: 100})
		require.NoError(t, err)
		require.Empty(t, page)
		require.Equal(t, 8, total, "the total does not depend on the page (seven edges to b, the loop)")
	})
}

func edge(edgeType, from, to string, at time.Time) store.Edge {
	return store.Edge{ID: uuid.NewString(), EdgeType: edgeType, FromNodeID: from, ToNodeID: to, Weight: 0.5, Payload: `{}`, CreatedAt: at}
}

// createEdges stores edges, one transaction each.
func createEdges(t *testing.T, h Harness, edges ...store.Edge) {
	t.Helper()
	for _, e := range edges {
		require.NoError(t, h.write(func(r repos) error { return r.edges.Create(context.Background(), e) }))
	}
}

func sortEdges(es []store.Edge) {
	slices.SortFunc(es, func(a, b store.Edge) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

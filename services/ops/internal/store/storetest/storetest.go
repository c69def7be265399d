// Package storetest is the ops store conformance suite: every engine's
// implementation must pass it.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC)

// Run runs the suite; newStore returns an empty store for one subtest.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("a node without an external id is always new", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a, created, err := s.UpsertNode(ctx, node("idea", "", `{"n":1}`, t0))
		require.NoError(t, err)
		require.True(t, created)
		b, created, err := s.UpsertNode(ctx, node("idea", "", `{"n":1}`, t0))
		require.NoError(t, err)
		require.True(t, created)
		require.NotEqual(t, a.ID, b.ID)

		got, err := s.Node(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, a, got)
		require.Equal(t, t0, got.CreatedAt, "microsecond timestamps round-trip")
		require.Empty(t, got.ExternalID)
	})

	t.Run("upsert by (node_type, external_id) is idempotent", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		first, created, err := s.UpsertNode(ctx, node("repo", "github:foundry", `{"stars":1}`, t0))
		require.NoError(t, err)
		require.True(t, created)

		again, created, err := s.UpsertNode(ctx, node("repo", "github:foundry", `{"stars":2}`, t0.Add(time.Hour)))
		require.NoError(t, err)
		require.False(t, created, "the same pair is an update")
		require.Equal(t, first.ID, again.ID)
		require.Equal(t, `{"stars":2}`, again.Payload, "the payload is replaced")
		require.Equal(t, t0, again.CreatedAt, "created_at is kept")
		require.Equal(t, t0.Add(time.Hour), again.UpdatedAt)

		other, created, err := s.UpsertNode(ctx, node("person", "github:foundry", `{}`, t0))
		require.NoError(t, err)
		require.True(t, created, "another node_type is another node")
		require.NotEqual(t, first.ID, other.ID)
	})

	t.Run("20 concurrent identical upserts make one node", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		const racers = 20
		ids := make([]string, racers)
		createdBy := make([]bool, racers)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				n, created, err := s.UpsertNode(ctx, node("task", "race", `{"i":0}`, t0))
				ids[i], createdBy[i], errs[i] = n.ID, created, err
			})
		}
		wg.Wait()
		creations := 0
		for i := range racers {
			require.NoError(t, errs[i])
			require.Equal(t, ids[0], ids[i], "every upsert returns the same node")
			if createdBy[i] {
				creations++
			}
		}
		require.Equal(t, 1, creations, "exactly one upsert created the node")
		_, err := s.Node(ctx, ids[0])
		require.NoError(t, err)
	})

	t.Run("unknown node", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		_, err := s.Node(context.Background(), uuid.NewString())
		require.ErrorIs(t, err, store.ErrNotFound)
		_, _, err = s.Edges(context.Background(), store.EdgeFilter{Node: uuid.NewString(), Direction: graph.Both, Limit: 10})
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("an edge needs both endpoints", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a := mustNode(t, s, "a")
		missing := uuid.NewString()
		for _, tc := range []struct {
			from, to, field string
		}{{missing, a.ID, "from_node_id"}, {a.ID, missing, "to_node_id"}} {
			err := s.CreateEdge(ctx, edge("links", tc.from, tc.to, t0))
			require.ErrorIs(t, err, store.ErrNotFound)
			var ee *store.EndpointError
			require.True(t, errors.As(err, &ee))
			require.Equal(t, tc.field, ee.Field)
			require.Equal(t, missing, ee.NodeID)
		}
		_, total, err := s.Edges(ctx, store.EdgeFilter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 0, total, "nothing was written")
	})

	t.Run("traversal both ways, by type", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a, b, c := mustNode(t, s, "a"), mustNode(t, s, "b"), mustNode(t, s, "c")
		ab := edge("depends_on", a.ID, b.ID, t0)
		ac := edge("relates_to", a.ID, c.ID, t0.Add(time.Second))
		ca := edge("depends_on", c.ID, a.ID, t0.Add(2*time.Second))
		bb := edge("relates_to", b.ID, b.ID, t0.Add(3*time.Second))
		for _, e := range []store.Edge{ab, ac, ca, bb} {
			require.NoError(t, s.CreateEdge(ctx, e))
		}
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
			{"by type and from", store.EdgeFilter{EdgeType: "depends_on", FromNodeID: c.ID}, []store.Edge{ca}},
			{"by type and to", store.EdgeFilter{EdgeType: "depends_on", ToNodeID: b.ID}, []store.Edge{ab}},
			{"by type", store.EdgeFilter{EdgeType: "relates_to"}, []store.Edge{ac, bb}},
			{"by both endpoints", store.EdgeFilter{FromNodeID: a.ID, ToNodeID: c.ID}, []store.Edge{ac}},
			{"no match", store.EdgeFilter{EdgeType: "nope"}, []store.Edge{}},
		}
		for _, tc := range tests {
			tc.f.Limit = 50
			got, total, err := s.Edges(ctx, tc.f)
			require.NoError(t, err, tc.name)
			require.Equal(t, tc.want, got, tc.name)
			require.Equal(t, len(tc.want), total, tc.name)
		}
	})

	t.Run("pagination is stable: created_at, then id", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a, b := mustNode(t, s, "a"), mustNode(t, s, "b")
		var want []store.Edge
		for i := range 7 {
			e := edge("next", a.ID, b.ID, t0.Add(time.Duration(i/2)*time.Second)) // pairs share a timestamp
			require.NoError(t, s.CreateEdge(ctx, e))
			want = append(want, e)
		}
		sortEdges(want)
		var got []store.Edge
		for offset := 0; offset < 9; offset += 3 {
			page, total, err := s.Edges(ctx, store.EdgeFilter{EdgeType: "next", FromNodeID: a.ID, Limit: 3, Offset: offset})
			require.NoError(t, err)
			require.Equal(t, 7, total)
			require.LessOrEqual(t, len(page), 3)
			got = append(got, page...)
		}
		require.Equal(t, want, got, "pages concatenate to the whole, in order, without repeats")
		page, total, err := s.Edges(ctx, store.EdgeFilter{Node: a.ID, Direction: graph.Outgoing, Limit: 3, Offset: 100})
		require.NoError(t, err)
		require.Empty(t, page)
		require.Equal(t, 7, total, "the total does not depend on the page")
	})

	t.Run("latest usage snapshot per provider", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		latest, err := s.LatestUsageSnapshots(ctx)
		require.NoError(t, err)
		require.Empty(t, latest)

		limit := 100.0
		add := func(provider, family string, at time.Time, value float64) store.UsageSnapshot {
			snap := store.UsageSnapshot{
				ID: uuid.NewString(), Family: family, Source: "ingest", CreatedAt: t0,
				Snapshot: usage.Snapshot{Provider: provider, CollectedAt: at, Metrics: []usage.Metric{
					{Name: "tokens", Value: value, Limit: &limit, Unit: "tokens", IsSummary: true},
					{Name: "requests", Value: 1},
				}},
			}
			require.NoError(t, s.AddUsageSnapshot(ctx, snap))
			return snap
		}
		add("openai", usage.OpenAI, t0, 1)
		newest := add("openai", usage.OpenAI, t0.Add(time.Hour), 2)
		add("openai", usage.OpenAI, t0.Add(time.Minute), 3) // arrives late, collected earlier
		code := add("claude-code", usage.Claude, t0, 4)

		latest, err = s.LatestUsageSnapshots(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.UsageSnapshot{code, newest}, latest, "one per provider, ordered by provider, by collection time")
	})
}

func node(nodeType, externalID, payload string, at time.Time) store.Node {
	return store.Node{ID: uuid.NewString(), NodeType: nodeType, ExternalID: externalID, Payload: payload, CreatedAt: at, UpdatedAt: at}
}

func mustNode(t *testing.T, s store.Store, name string) store.Node {
	t.Helper()
	n, _, err := s.UpsertNode(context.Background(), node("thing", name, fmt.Sprintf(`{"name":%q}`, name), t0))
	require.NoError(t, err)
	return n
}

func edge(edgeType, from, to string, at time.Time) store.Edge {
	return store.Edge{ID: uuid.NewString(), EdgeType: edgeType, FromNodeID: from, ToNodeID: to, Weight: 0.5, Payload: `{}`, CreatedAt: at}
}

func sortEdges(es []store.Edge) {
	slices.SortFunc(es, func(a, b store.Edge) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

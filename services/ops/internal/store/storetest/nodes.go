package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/store"
)

func runNodes(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("a node without an external id is always new", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		a, created := upsert(t, h, node("idea", "", `{"n":1}`, t0))
		require.True(t, created)
		b, created := upsert(t, h, node("idea", "", `{"n":1}`, t0))
		require.True(t, created)
		require.NotEqual(t, a.ID, b.ID)

		got, err := h.read().nodes.Get(context.Background(), a.ID)
		require.NoError(t, err)
		require.Equal(t, a, got)
		require.Equal(t, t0, got.CreatedAt, "microsecond timestamps round-trip")
		require.Empty(t, got.ExternalID)
	})

	t.Run("upsert by (node_type, external_id) is idempotent", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		first, created := upsert(t, h, node("repo", "github:foundry", `{"stars":1}`, t0))
		require.True(t, created)

		again, created := upsert(t, h, node("repo", "github:foundry", `{"stars":2}`, t0.Add(time.Hour)))
		require.False(t, created, "the same pair is an update")
		require.Equal(t, first.ID, again.ID)
		require.Equal(t, `{"stars":2}`, again.Payload, "the payload is replaced")
		require.Equal(t, t0, again.CreatedAt, "created_at is kept")
		require.Equal(t, t0.Add(time.Hour), again.UpdatedAt)

		other, created := upsert(t, h, node("person", "github:foundry", `{}`, t0))
		require.True(t, created, "another node_type is another node")
		require.NotEqual(t, first.ID, other.ID)
	})

	t.Run("20 concurrent identical upserts make one node", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		const racers = 20
		ids := make([]string, racers)
		createdBy := make([]bool, racers)
		errs := make([]error, racers)
		var wg sync.WaitGroup
		for i := range racers {
			wg.Go(func() {
				errs[i] = h.write(func(r repos) error {
					n, created, err := r.nodes.Upsert(ctx, node("task", "race", `{"i":0}`, t0))
					ids[i], createdBy[i] = n.ID, created
					return err
				})
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
		_, err := h.read().nodes.Get(ctx, ids[0])
		require.NoError(t, err)
	})

	t.Run("unknown node", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		_, err := h.read().nodes.Get(context.Background(), uuid.NewString())
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func node(nodeType, externalID, payload string, at time.Time) store.Node {
	return store.Node{ID: uuid.NewString(), NodeType: nodeType, ExternalID: externalID, Payload: payload, CreatedAt: at, UpdatedAt: at}
}

// upsert upserts n in one transaction.
func upsert(t *testing.T, h Harness, n store.Node) (store.Node, bool) {
	t.Helper()
	var (
		got     store.Node
		created bool
	)
	require.NoError(t, h.write(func(r repos) error {
		var err error
		got, created, err = r.nodes.Upsert(context.Background(), n)
		return err
	}))
	return got, created
}

func mustNode(t *testing.T, h Harness, name string) store.Node {
	t.Helper()
	n, _ := upsert(t, h, node("thing", name, fmt.Sprintf(`{"name":%q}`, name), t0))
	return n
}

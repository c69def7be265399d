package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
)

func runUsage(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("latest usage snapshot per provider", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		latest, err := h.read().usage.Latest(ctx)
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
			addSnapshots(t, h, snap)
			return snap
		}
		add("openai", usage.OpenAI, t0, 1)
		newest := add("openai", usage.OpenAI, t0.Add(time.Hour), 2)
		add("openai", usage.OpenAI, t0.Add(time.Minute), 3) // arrives late, collected earlier
		code := add("claude-code", usage.Claude, t0, 4)

		latest, err = h.read().usage.Latest(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.UsageSnapshot{code, newest}, latest, "one per provider, ordered by provider, by collection time")
	})

	t.Run("trim keeps a provider's most recent snapshots", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		snap := func(provider string, at time.Time) store.UsageSnapshot {
			return store.UsageSnapshot{
				ID: uuid.NewString(), Family: usage.OpenAI, Source: "live", CreatedAt: t0,
				Snapshot: usage.Snapshot{Provider: provider, CollectedAt: at, Metrics: []usage.Metric{{Name: "m"}}},
			}
		}
		for i := range 5 {
			addSnapshots(t, h, snap("openai", t0.Add(time.Duration(i)*time.Minute)))
		}
		other := snap("openai-codex", t0)
		addSnapshots(t, h, other)

		var trimmed int64
		require.NoError(t, h.write(func(r repos) error {
			var err error
			trimmed, err = r.usage.Trim(ctx, "openai", 2)
			return err
		}))
		require.Equal(t, int64(3), trimmed)
		latest, err := h.read().usage.Latest(ctx)
		require.NoError(t, err)
		require.Len(t, latest, 2, "trimming is per provider")
		require.Equal(t, t0.Add(4*time.Minute), latest[0].CollectedAt, "the newest is kept")

		require.NoError(t, h.write(func(r repos) error {
			var err error
			trimmed, err = r.usage.Trim(ctx, "openai", 2)
			return err
		}))
		require.Zero(t, trimmed, "nothing more to trim")
	})
}

// addSnapshots stores snapshots, one transaction each.
func addSnapshots(t *testing.T, h Harness, snaps ...store.UsageSnapshot) {
	t.Helper()
	for _, s := range snaps {
		require.NoError(t, h.write(func(r repos) error { return r.usage.Add(context.Background(), s) }))
	}
}

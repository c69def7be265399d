package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/store"
)

func runChecks(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("the latest check round-trips what is stored", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		_, err := h.read().checks.Latest(ctx)
		require.ErrorIs(t, err, store.ErrNotFound, "no check yet")

		older := completed(t0, monitor.Normal, monitor.Normal, false)
		newer := monitor.Record{
			ID: uuid.NewString(), CheckedAt: t0.Add(time.Minute), Holder: "ops-b",
			Check: monitor.Check{
				ReserveRatio: 0.75, ChainValid: false, FirstDivergent: 12, BreakerTripped: true, Mode: monitor.Warning,
				Mismatched: []string{"available:ada", "available:bob", "held:ada"},
			},
			Mismatched: 3,
			Decision:   monitor.Decision{Mode: monitor.Frozen, Reasons: []string{"audit chain broken", "balances"}, Score: 40},
			Applied:    true, Error: "",
		}
		insertChecks(t, h, older, newer)
		got, err := h.read().checks.Latest(ctx)
		require.NoError(t, err)
		want := newer
		want.Check.Mismatched = nil // only their count is kept
		require.Equal(t, want, got)
	})

	t.Run("the streak counts failures since the newest completed check", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		streak := func() monitor.Streak {
			s, err := h.read().checks.Streak(ctx)
			require.NoError(t, err)
			return s
		}
		require.Equal(t, monitor.Streak{}, streak(), "nothing recorded")

		insertChecks(t, h, completed(t0, monitor.Normal, monitor.Normal, false))
		require.Equal(t, monitor.Streak{LastMode: monitor.Normal}, streak())

		insertChecks(t, h, failed(t0.Add(time.Minute), monitor.Unknown, false), failed(t0.Add(2*time.Minute), monitor.Unknown, false))
		require.Equal(t, monitor.Streak{Failed: 2, LastMode: monitor.Normal}, streak(), "a failed check knows no mode")

		insertChecks(t, h, failed(t0.Add(3*time.Minute), monitor.Warning, true))
		require.Equal(t, monitor.Streak{Failed: 3, LastMode: monitor.Warning}, streak(), "an applied escalation changed the mode")

		insertChecks(t, h, completed(t0.Add(4*time.Minute), monitor.Warning, monitor.ReadOnly, true))
		require.Equal(t, monitor.Streak{LastMode: monitor.ReadOnly}, streak(), "a completed check restarts the count")

		insertChecks(t, h, completed(t0.Add(5*time.Minute), monitor.ReadOnly, monitor.Normal, false))
		require.Equal(t, monitor.Streak{LastMode: monitor.ReadOnly}, streak(), "not applied: the mode it saw")
	})

	t.Run("prune deletes the checks made before a time", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		keep := completed(t0.Add(time.Hour), monitor.Normal, monitor.Normal, false)
		insertChecks(t, h, completed(t0, monitor.Normal, monitor.Normal, false), failed(t0.Add(time.Minute), monitor.Unknown, false), keep)
		var n int64
		require.NoError(t, h.write(func(r repos) error {
			var err error
			n, err = r.checks.Prune(ctx, t0.Add(time.Hour))
			return err
		}))
		require.Equal(t, int64(2), n)
		got, err := h.read().checks.Latest(ctx)
		require.NoError(t, err)
		require.Equal(t, keep.ID, got.ID)
	})
}

// completed is a completed check that saw mode and decided decided.
func completed(at time.Time, mode, decided string, applied bool) monitor.Record {
	return monitor.Record{
		ID: uuid.NewString(), CheckedAt: at, Holder: "ops-a",
		Check:    monitor.Check{ReserveRatio: 1.2, ChainValid: true, Mode: mode},
		Decision: monitor.Decision{Mode: decided, Reasons: []string{}, Score: 100}, Applied: applied,
	}
}

// failed is a check that could not reach the ledger.
func failed(at time.Time, decided string, applied bool) monitor.Record {
	return monitor.Record{
		ID: uuid.NewString(), CheckedAt: at, Holder: "ops-a",
		Decision: monitor.Decision{Mode: decided, Reasons: []string{"the ledger could not be checked"}}, Applied: applied,
		Error: "ledger down",
	}
}

// insertChecks records checks, one transaction each.
func insertChecks(t *testing.T, h Harness, recs ...monitor.Record) {
	t.Helper()
	for _, rec := range recs {
		require.NoError(t, h.write(func(r repos) error { return r.checks.Insert(context.Background(), rec) }))
	}
}

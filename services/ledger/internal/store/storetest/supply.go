package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runSupply checks the supply history's days: a save replaces its UTC
// day's values, and a window reads its days plus the last day before it.
func runSupply(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("a day keeps its last values; a window reads its days and the one before", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
		save := func(at time.Time, outstanding money.Micros, ratio float64) {
			t.Helper()
			require.NoError(t, h.write(func(r repos) error {
				return r.credit.SaveSupplyDay(ctx, store.SupplyDay{Day: at, OutstandingCC: outstanding, TreasuryUSD: 2 * outstanding, ReserveRatio: ratio})
			}))
		}
		save(day.Add(time.Hour), 10, 1.5)
		save(day.Add(23*time.Hour), 20, 2) // the same day: replaces
		save(day.AddDate(0, 0, 3).Add(time.Minute), 30, 3)
		read := func(from, to time.Time) []store.SupplyDay {
			t.Helper()
			got, err := h.read().credit.SupplyDays(ctx, from, to)
			require.NoError(t, err)
			return got
		}
		first := store.SupplyDay{Day: day, OutstandingCC: 20, TreasuryUSD: 40, ReserveRatio: 2}
		fourth := store.SupplyDay{Day: day.AddDate(0, 0, 3), OutstandingCC: 30, TreasuryUSD: 60, ReserveRatio: 3}
		require.Equal(t, []store.SupplyDay{first, fourth}, read(day, day.AddDate(0, 0, 10)))
		require.Equal(t, []store.SupplyDay{first, fourth}, read(day.AddDate(0, 0, 2), day.AddDate(0, 0, 10)),
			"the last day before the window comes first")
		require.Equal(t, []store.SupplyDay{first}, read(day.AddDate(0, 0, 1), day.AddDate(0, 0, 3)), "before the window only")
		empty := read(day.AddDate(0, 0, -5), day)
		require.NotNil(t, empty)
		require.Empty(t, empty)
	})
}

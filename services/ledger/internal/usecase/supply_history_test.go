package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// TestSupplyHistory: each day ends with the backing of its last supply
// movement, a day without one carries the day before's, the days before
// the first movement are unknown, and a stake (no change of supply)
// changes nothing.
func TestSupplyHistory(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		e.clock.Advance(24 * time.Hour) // day 1: two deposits
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "d1", Actor: "admin"}, nil)
		require.NoError(t, err)
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "d2", Actor: "admin"}, nil)
		require.NoError(t, err)
		e.clock.Advance(48 * time.Hour) // day 3: a withdrawal
		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(995 * cc)}, nil)
		require.NoError(t, err)

		days, err := e.app.SupplyHistory(ctx, ptr32(5))
		require.NoError(t, err)
		require.Len(t, days, 5)
		day0 := t0.UTC().Truncate(24 * time.Hour)
		for i, d := range days {
			require.Equal(t, day0.AddDate(0, 0, i-1), d.Day)
		}
		require.False(t, days[0].Known, "before the ledger began")
		require.False(t, days[1].Known, "no supply movement yet")
		require.True(t, days[2].Known)
		require.Equal(t, money.Micros(1990*cc), days[2].OutstandingCC, "after both deposits: the day's last values")
		require.Equal(t, money.Micros(20*cc), days[2].TreasuryUSD)
		require.Equal(t, days[2], withDay(days[3], days[2].Day), "a quiet day carries the one before")
		require.Equal(t, money.Micros(995*cc), days[4].OutstandingCC)
		require.Greater(t, days[4].ReserveRatio, 1.0)

		_, err = e.app.SupplyHistory(ctx, ptr32(0))
		fe, ok := fault.As(err)
		require.True(t, ok)
		require.Equal(t, "days", fe.Fields[0].Field)
	})
}

func ptr32(v int32) *int32 { return &v }

// withDay is p as of another day.
func withDay(p usecase.SupplyPoint, day time.Time) usecase.SupplyPoint {
	p.Day = day
	return p
}

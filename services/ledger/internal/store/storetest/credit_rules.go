package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runCreditRules covers the queries behind the credit rules: the unstakes
// of a rolling window (the cooldown tier) and the oracle readings with the
// breaker state they left.
func runCreditRules(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("unstakes since a time, by contributor and idea", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		mint(t, h, 1, "ada", 100*cc)
		mint(t, h, 2, "bob", 100*cc)
		stake := func(seq int64, who, idea string, amount money.Micros) {
			apply(t, h, seq, who, idea, credit.Transfer(credit.KindStake, credit.Available(who), credit.Staked(who, idea), amount))
		}
		unstake := func(seq int64, who, idea string, amount money.Micros) {
			apply(t, h, seq, who, idea, credit.Transfer(credit.KindUnstake, credit.Staked(who, idea), credit.Available(who), amount))
		}
		stake(3, "ada", "i1", 50*cc)
		stake(4, "ada", "i2", 20*cc)
		stake(5, "bob", "i1", 30*cc)
		unstake(10, "ada", "i1", 5*cc) // at base+10s
		unstake(11, "ada", "i1", 7*cc)
		unstake(12, "ada", "i2", 3*cc)
		unstake(13, "bob", "i1", 11*cc)
		unstake(14, "ada", "i1", 1) // one micro-CC

		sum := func(who, idea string, since time.Time) money.Micros {
			t.Helper()
			got, err := h.read().credit.UnstakedSince(ctx, who, idea, since)
			require.NoError(t, err)
			return got
		}
		require.Equal(t, money.Micros(12*cc+1), sum("ada", "i1", base), "ada's unstakes from i1 only")
		require.Equal(t, money.Micros(7*cc+1), sum("ada", "i1", base.Add(10*time.Second)), "an unstake exactly at since is outside")
		require.Equal(t, money.Micros(7*cc+1), sum("ada", "i1", base.Add(10*time.Second+999*time.Microsecond)))
		require.Equal(t, money.Micros(1), sum("ada", "i1", base.Add(13*time.Second)))
		require.Zero(t, sum("ada", "i1", base.Add(14*time.Second)))
		require.Equal(t, money.Micros(3*cc), sum("ada", "i2", base), "the stake of 20 CC is not an unstake")
		require.Equal(t, money.Micros(11*cc), sum("bob", "i1", base))
		require.Zero(t, sum("bob", "i2", base), "none: zero")
		require.Zero(t, sum("nobody", "i1", base))
	})

	t.Run("oracle readings keep their source, verdict and breaker state", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		_, err := h.read().credit.LatestReading(ctx)
		require.ErrorIs(t, err, store.ErrNotFound)

		opened := base.Add(2 * time.Minute)
		for i, r := range []store.OracleReading{
			{ID: "r1", Source: "http", Verdict: credit.Accepted, State: credit.BreakerState{LastGood: 100 * cc}},
			{ID: "r2", Source: "http", Verdict: credit.Tripped, State: credit.BreakerState{Tripped: true, LastGood: 100 * cc, TrippedAt: opened}},
			{ID: "r3", Source: "manual", Verdict: credit.Held, State: credit.BreakerState{Tripped: true, Clean: 2, LastGood: 100 * cc, TrippedAt: opened}},
		} {
			r.Reading = credit.Reading{Price: money.Micros(100+50*i) * cc, At: base.Add(time.Duration(i+1) * time.Minute)}
			require.NoError(t, h.write(func(rs repos) error { return rs.credit.InsertReading(ctx, r) }))
		}
		last, err := h.read().credit.LatestReading(ctx)
		require.NoError(t, err)
		require.Equal(t, "r3", last.ID)
		require.Equal(t, "manual", last.Source)
		require.Equal(t, credit.Held, last.Verdict)
		require.Equal(t, credit.BreakerState{Tripped: true, Clean: 2, LastGood: 100 * cc, TrippedAt: opened}, last.State)
		require.Equal(t, credit.Reading{Price: 200 * cc, At: base.Add(3 * time.Minute), Source: "manual", Verdict: credit.Held}, last.Reading)

		got, err := h.read().credit.ReadingsSince(ctx, base.Add(time.Minute))
		require.NoError(t, err)
		require.Equal(t, []credit.Reading{
			{Price: 100 * cc, At: base.Add(time.Minute), Source: "http", Verdict: credit.Accepted},
			{Price: 150 * cc, At: base.Add(2 * time.Minute), Source: "http", Verdict: credit.Tripped},
			{Price: 200 * cc, At: base.Add(3 * time.Minute), Source: "manual", Verdict: credit.Held},
		}, got)
		require.True(t, got[0].Accepted())
		require.False(t, got[1].Accepted())

		// A closed breaker has no trip time, whatever the state carried.
		require.NoError(t, h.write(func(rs repos) error {
			return rs.credit.InsertReading(ctx, store.OracleReading{ID: "r4", Source: "http", Verdict: credit.Recovered,
				Reading: credit.Reading{Price: 101 * cc, At: base.Add(9 * time.Minute)},
				State:   credit.BreakerState{LastGood: 101 * cc, TrippedAt: opened}})
		}))
		last, err = h.read().credit.LatestReading(ctx)
		require.NoError(t, err)
		require.Equal(t, credit.BreakerState{LastGood: 101 * cc}, last.State)
	})
}

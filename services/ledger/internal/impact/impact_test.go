package impact_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

const cc money.Micros = money.Scale

func TestEarned(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                   string
		amount, quantity, rate money.Micros
		want                   money.Micros
	}{
		{"2 900 CC, 10 units at 1 %", 2900 * cc, 10 * cc, impact.DefaultUsageRate, 290 * cc},
		{"a fraction of a unit", 100 * cc, cc / 2, impact.DefaultUsageRate, cc / 2},
		{"rounded down to the micro-CC", 1, cc, impact.DefaultUsageRate, 0},
		{"another rate: 5 %", 40 * cc, 3 * cc, 50_000, 6 * cc},
		{"nothing staked", 0, 10 * cc, impact.DefaultUsageRate, 0},
		{"capped, not wrapped", 1_000_000_000 * cc, impact.MaxQuantity, 1_000 * cc, impact.MaxEarned},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, impact.Earned(tc.amount, tc.quantity, tc.rate))
		})
	}
	require.Equal(t, impact.MaxEarned, impact.AddEarned(impact.MaxEarned-1, 2), "the sum is capped too")
	require.Equal(t, 5*cc, impact.AddEarned(2*cc, 3*cc))
}

func TestPay(t *testing.T) {
	t.Parallel()
	t.Run("in proportion to earned attribution, exact by largest remainder", func(t *testing.T) {
		ps := []impact.Position{
			{ContributorID: "ada", Amount: 1000 * cc, Earned: 10 * cc},
			{ContributorID: "bob", Amount: 500 * cc, Earned: 10 * cc},
			{ContributorID: "cy", Amount: 10 * cc, Earned: 10 * cc},
		}
		got := impact.Pay(100*cc, ps)
		require.Equal(t, []money.Micros{33_333_334, 33_333_333, 33_333_333}, got, "equal earned: equal parts, the odd micro-CC first")
		require.Equal(t, 100*cc, got[0]+got[1]+got[2])
	})
	t.Run("earned weighs, not the amount staked", func(t *testing.T) {
		got := impact.Pay(99*cc, []impact.Position{{ContributorID: "ada", Amount: 10 * cc, Earned: 2 * cc},
			{ContributorID: "bob", Amount: 1000 * cc, Earned: cc}})
		require.Equal(t, []money.Micros{66 * cc, 33 * cc}, got)
	})
	t.Run("a position that earned nothing beside ones that did gets nothing", func(t *testing.T) {
		got := impact.Pay(10*cc, []impact.Position{{ContributorID: "ada", Amount: cc, Earned: cc},
			{ContributorID: "late", Amount: 1000 * cc}})
		require.Equal(t, []money.Micros{10 * cc, 0}, got)
	})
	t.Run("before any usage, by the CC staked", func(t *testing.T) {
		got := impact.Pay(30*cc, []impact.Position{{ContributorID: "ada", Amount: 200 * cc}, {ContributorID: "bob", Amount: 100 * cc}})
		require.Equal(t, []money.Micros{20 * cc, 10 * cc}, got)
	})
	t.Run("no positions", func(t *testing.T) {
		require.Empty(t, impact.Pay(30*cc, nil))
	})
}

func TestGainPct(t *testing.T) {
	t.Parallel()
	require.Equal(t, 0.0, impact.GainPct(5*cc, 0))
	require.Equal(t, 20.0, impact.GainPct(20*cc, 100*cc))
	require.Equal(t, 33.33, impact.GainPct(cc, 3*cc), "two decimals, no float noise")
	require.Equal(t, 250.0, impact.GainPct(5*cc, 2*cc))
}

func TestProject(t *testing.T) {
	t.Parallel()
	stage := credit.Project("testing", 0.5) // 0.8× – 1.8×
	got, fromHistory := impact.Project(stage, 0, 100*cc)
	require.False(t, fromHistory)
	require.Equal(t, stage, got, "no revenue yet: the stage's heuristic")
	got, fromHistory = impact.Project(stage, 50*cc, 0)
	require.False(t, fromHistory, "nothing staked: nothing to divide by")
	require.Equal(t, stage, got)

	got, fromHistory = impact.Project(stage, 9950*cc, 1600*cc)
	require.True(t, fromHistory)
	require.Equal(t, 7.2188, got.LowMultiplier, "1 + 9950/1600: the stake back and what a CC staked was paid")
	require.Equal(t, 8.0188, got.HighMultiplier, "plus the stage's upside of 0.8")
	require.Equal(t, stage.StageUnlockPct, got.StageUnlockPct)
}

func TestDecodeDelivery(t *testing.T) {
	t.Parallel()
	d, err := impact.DecodeDelivery([]byte(`{"idea_id":"i","quantity":2.5,"unit":"u","evidence":"e","reference":"r"}`))
	require.NoError(t, err)
	require.Equal(t, impact.Delivery{IdeaID: "i", Quantity: 2.5, Unit: "u", Evidence: "e", Reference: "r"}, d)
	for _, bad := range []string{`{"idea_id":"i","extra":1}`, `{"idea_id":`, `[]`, `{} {}`, `{"quantity":"2"}`} {
		_, err := impact.DecodeDelivery([]byte(bad))
		require.Equal(t, fault.Invalid, fault.KindOf(err), bad)
	}
	_, err = impact.DecodeDelivery(make([]byte, impact.MaxDelivery+1))
	require.Equal(t, fault.Invalid, fault.KindOf(err), "too large")
}

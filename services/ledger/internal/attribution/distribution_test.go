package attribution_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

func units(x float64) money.Micros {
	m, err := money.FromFloat(x)
	if err != nil {
		panic(err)
	}
	return m
}

func coherence(x float64) attribution.Coherence { return attribution.Coherence(x*1000 + 0.5) }

// amounts renders payouts as "id=amount" for readable comparisons.
func amounts(ps []attribution.Payout) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = fmt.Sprintf("%s=%.2f", p.ContributorID, p.Amount.Float64())
	}
	return out
}

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		value  float64
		stakes []attribution.Stake
		want   []string
	}{
		{
			name:  "the worked example",
			value: 100,
			stakes: []attribution.Stake{
				{ContributorID: "A", Cost: units(100), Coherence: coherence(0.5)},
				{ContributorID: "B", Cost: units(100), Coherence: coherence(1.0)},
			},
			want: []string{"B=60.00", "A=40.00"},
		},
		{
			name:  "a contributor's stakes add up",
			value: 90,
			stakes: []attribution.Stake{
				{ContributorID: "A", Cost: units(50), Coherence: coherence(0.5)},
				{ContributorID: "A", Cost: units(50), Coherence: coherence(1.0)},
				{ContributorID: "B", Cost: units(50), Coherence: coherence(1.0)},
			},
			// A: 50 + 75 = 125, B: 75; total 200.
			want: []string{"A=56.25", "B=33.75"},
		},
		{
			name:  "thirds round down and leave a cent undistributed",
			value: 100,
			stakes: []attribution.Stake{
				{ContributorID: "c", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "a", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "b", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"a=33.33", "b=33.33", "c=33.33"},
		},
		{
			name:  "halves of a cent round up, so payouts may exceed the value",
			value: 0.01,
			stakes: []attribution.Stake{
				{ContributorID: "a", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "b", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"a=0.01", "b=0.01"},
		},
		{
			name:  "just under half a cent rounds down",
			value: 0.009998,
			stakes: []attribution.Stake{
				{ContributorID: "a", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "b", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"a=0.00", "b=0.00"},
		},
		{
			name:  "a zero-cost contributor gets a zero payout",
			value: 10,
			stakes: []attribution.Stake{
				{ContributorID: "free", Cost: 0, Coherence: coherence(1.0)},
				{ContributorID: "paid", Cost: units(3), Coherence: coherence(0.7)},
			},
			want: []string{"paid=10.00", "free=0.00"},
		},
		{
			name:  "zero value pays zeros",
			value: 0,
			stakes: []attribution.Stake{
				{ContributorID: "a", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"a=0.00"},
		},
		{name: "no contributions: empty", value: 100, stakes: nil, want: []string{}},
		{
			name:  "zero total weight: empty",
			value: 100,
			stakes: []attribution.Stake{
				{ContributorID: "a", Cost: 0, Coherence: coherence(1.0)},
				{ContributorID: "b", Cost: 0, Coherence: coherence(0.5)},
			},
			want: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := attribution.Split(units(tt.value), tt.stakes)
			require.NotNil(t, got, "never nil: the API shows []")
			require.Equal(t, tt.want, amounts(got))
			for _, p := range got {
				require.Zero(t, p.Amount%money.Cent, "whole cents: %v", p)
			}
		})
	}
}

func TestSplitHugeAmountsDoNotOverflow(t *testing.T) {
	t.Parallel()
	// Weights reach ~1.3e19 micro-units × thousandths, beyond int64.
	got := attribution.Split(attribution.MaxAmount, []attribution.Stake{
		{ContributorID: "a", Cost: attribution.MaxAssetTotal / 2, Coherence: attribution.CoherenceMax},
		{ContributorID: "b", Cost: attribution.MaxAssetTotal / 2, Coherence: attribution.CoherenceMax},
	})
	require.Equal(t, []string{"a=500000000.00", "b=500000000.00"}, amounts(got))
}

func TestSplitEachPayoutIsItsRoundedShare(t *testing.T) {
	t.Parallel()
	// 7 contributors with costs 1..7 at coherence 0.5 (weight = cost): each
	// payout must be round-half-up(value × cost / 28) to the cent, which
	// exact integer arithmetic can check.
	var stakes []attribution.Stake
	for i := 1; i <= 7; i++ {
		stakes = append(stakes, attribution.Stake{ContributorID: fmt.Sprint(i), Cost: money.Micros(i) * money.Scale, Coherence: 500})
	}
	value := units(1234.567891)
	got := attribution.Split(value, stakes)
	require.Len(t, got, 7)
	var sum money.Micros
	for _, p := range got {
		var cost int64
		_, err := fmt.Sscan(p.ContributorID, &cost)
		require.NoError(t, err)
		// half-up of value×cost/28 in cents: (2·v·c + 28·cent) / (2·28·cent)
		want := (2*int64(value)*cost + 28*int64(money.Cent)) / (2 * 28 * int64(money.Cent)) * int64(money.Cent)
		require.Equal(t, want, int64(p.Amount), "payout of %s", p.ContributorID)
		sum += p.Amount
	}
	require.InDelta(t, value.Float64(), sum.Float64(), 7*0.005+1e-9, "rounding moves each payout at most half a cent")
}

func BenchmarkSplit100k(b *testing.B) {
	stakes := make([]attribution.Stake, 100_000)
	for i := range stakes {
		stakes[i] = attribution.Stake{ContributorID: fmt.Sprintf("c%06d", i), Cost: money.Micros(i%997+1) * money.Cent, Coherence: attribution.Coherence(500 + 100*(i%6))}
	}
	value := units(1_000_000)
	b.ResetTimer()
	for b.Loop() {
		if len(attribution.Split(value, stakes)) != len(stakes) {
			b.Fatal("wrong payout count")
		}
	}
}

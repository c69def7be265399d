package attribution_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
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

// amounts renders payouts as "id=amount" for readable comparisons: two
// decimals for whole cents, six otherwise.
func amounts(ps []attribution.Payout) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		format := "%s=%.2f"
		if p.Amount%money.Cent != 0 {
			format = "%s=%.6f"
		}
		out[i] = fmt.Sprintf(format, p.ContributorID, p.Amount.Float64())
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
			name:  "thirds add up: the cent left over goes to the first id",
			value: 100,
			stakes: []attribution.Stake{
				{ContributorID: "c", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "a", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "b", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"a=33.34", "b=33.33", "c=33.33"},
		},
		{
			name:  "a cent over two pays one cent in all",
			value: 0.01,
			stakes: []attribution.Stake{
				{ContributorID: "b", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "a", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"a=0.01", "b=0.00"},
		},
		{
			name:  "two cents over three",
			value: 0.02,
			stakes: []attribution.Stake{
				{ContributorID: "a", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "b", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "c", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"a=0.01", "b=0.01", "c=0.00"},
		},
		{
			name:  "remainders rank before ids",
			value: 0.05,
			stakes: []attribution.Stake{
				// Weights 2 and 1 of 3: exact 3.33… and 1.66… cents; floors
				// 3 and 1 leave one cent, and b's remainder (0.66) beats
				// a's (0.33) although a weighs more and sorts first.
				{ContributorID: "a", Cost: units(2), Coherence: coherence(0.5)},
				{ContributorID: "b", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"a=0.03", "b=0.02"},
		},
		{
			name:  "a value finer than a cent is split in micro-units, to the last one",
			value: 0.009998,
			stakes: []attribution.Stake{
				{ContributorID: "a", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "b", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "c", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"a=0.003333", "b=0.003333", "c=0.003332"},
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
			name:  "a zero-weight contributor never gets the cent left over",
			value: 0.01,
			stakes: []attribution.Stake{
				{ContributorID: "a-free", Cost: 0, Coherence: coherence(1.0)},
				{ContributorID: "b", Cost: units(1), Coherence: coherence(0.5)},
				{ContributorID: "c", Cost: units(1), Coherence: coherence(0.5)},
			},
			want: []string{"b=0.01", "c=0.00", "a-free=0.00"},
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
			requireAddsUp(t, units(tt.value), got)
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

// requireAddsUp checks what Split promises of any split that pays anyone:
// the payouts sum to value exactly, and they are whole cents when value is.
func requireAddsUp(t *testing.T, value money.Micros, got []attribution.Payout) {
	t.Helper()
	if len(got) == 0 {
		return
	}
	var sum money.Micros
	for _, p := range got {
		sum += p.Amount
		if value%money.Cent == 0 {
			require.Zero(t, p.Amount%money.Cent, "whole cents: %v", p)
		}
	}
	require.Equal(t, value, sum, "the payouts add up to the value: %v", amounts(got))
}

func TestSplitEachPayoutIsItsShareWithinACent(t *testing.T) {
	t.Parallel()
	// 7 contributors with costs 1..7 at coherence 0.5 (weight = cost): each
	// payout must be floor(value × cost / 28) in micro-units (the value is
	// no whole number of cents), or one more, which exact integer
	// arithmetic can check; and they add up.
	var stakes []attribution.Stake
	for i := 1; i <= 7; i++ {
		stakes = append(stakes, attribution.Stake{ContributorID: fmt.Sprint(i), Cost: money.Micros(i) * money.Scale, Coherence: 500})
	}
	for _, value := range []money.Micros{units(1234.567891), units(1234.56)} {
		unit := int64(money.Cent)
		if value%money.Cent != 0 {
			unit = 1
		}
		got := attribution.Split(value, stakes)
		require.Len(t, got, 7)
		for _, p := range got {
			var cost int64
			_, err := fmt.Sscan(p.ContributorID, &cost)
			require.NoError(t, err)
			floor := int64(value) / unit * cost / 28 * unit
			require.Contains(t, []int64{floor, floor + unit}, int64(p.Amount), "payout of %s", p.ContributorID)
		}
		requireAddsUp(t, value, got)
	}
}

// TestSplitAlwaysAddsUp is the property behind largest remainder, over
// random values (whole cents and not) and random stakes: the payouts sum to
// the value exactly, each is its exact share rounded down or up by less
// than one unit, a heavier contributor is never paid less than a lighter
// one, zero weights are paid 0, and the order of the stakes does not matter.
func TestSplitAlwaysAddsUp(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		value := money.Micros(rng.Int64N(int64(attribution.MaxAmount) + 1))
		switch rng.IntN(4) {
		case 0:
			value = value / money.Cent * money.Cent
		case 1:
			value = money.Micros(rng.Int64N(100)) // a few micro-units
		case 2:
			value = money.Micros(rng.Int64N(100)) * money.Cent // a few cents
		}
		stakes := make([]attribution.Stake, 1+rng.IntN(12))
		for i := range stakes {
			cost := money.Micros(rng.Int64N(int64(attribution.MaxAmount) + 1))
			if rng.IntN(3) == 0 {
				cost = money.Micros(rng.Int64N(3)) * money.Cent
			}
			stakes[i] = attribution.Stake{ContributorID: fmt.Sprintf("c%d", rng.IntN(8)), Cost: cost,
				Coherence: attribution.Coherence(rng.IntN(int(attribution.CoherenceMax) + 1))}
		}
		got := attribution.Split(value, stakes)

		weights := map[string]*big.Int{}
		total := new(big.Int)
		for _, s := range stakes {
			if weights[s.ContributorID] == nil {
				weights[s.ContributorID] = new(big.Int)
			}
			w := new(big.Int).Mul(big.NewInt(int64(s.Cost)), big.NewInt(500+int64(s.Coherence)))
			weights[s.ContributorID].Add(weights[s.ContributorID], w)
			total.Add(total, w)
		}
		if total.Sign() == 0 {
			require.Empty(t, got)
			continue
		}
		require.Len(t, got, len(weights))
		requireAddsUp(t, value, got)
		unit := money.Cent
		if value%money.Cent != 0 {
			unit = 1
		}
		for i, p := range got {
			// |payout − value × weight / total| < unit, i.e.
			// |payout × total − value × weight| < unit × total.
			diff := new(big.Int).Mul(big.NewInt(int64(p.Amount)), total)
			diff.Sub(diff, new(big.Int).Mul(big.NewInt(int64(value)), weights[p.ContributorID]))
			require.Negative(t, diff.Abs(diff).Cmp(new(big.Int).Mul(big.NewInt(int64(unit)), total)), "payout %v of %v", p, amounts(got))
			if weights[p.ContributorID].Sign() == 0 {
				require.Zero(t, p.Amount, "zero weight, zero payout")
			}
			if i > 0 {
				require.LessOrEqual(t, p.Amount, got[i-1].Amount, "ordered by weight, a heavier share is never paid less: %v", amounts(got))
			}
		}
		shuffled := slices.Clone(stakes)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		require.Equal(t, got, attribution.Split(value, shuffled), "the stakes' order does not matter")
	}
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

// TestSplitMarksClaims: a payout says which part of it claims earned, in
// the payout's unit, rounded down; a payout with no claim has none.
func TestSplitMarksClaims(t *testing.T) {
	t.Parallel()
	got := attribution.Split(10*money.Scale, []attribution.Stake{
		{ContributorID: "ada", Cost: 3 * money.Scale, Coherence: attribution.CoherenceBase, Claimed: true},
		{ContributorID: "ada", Cost: 1 * money.Scale, Coherence: attribution.CoherenceBase},
		{ContributorID: "bob", Cost: 1 * money.Scale, Coherence: attribution.CoherenceBase},
	})
	require.Equal(t, []attribution.Payout{
		{ContributorID: "ada", Amount: 8 * money.Scale, Claimed: 6 * money.Scale},
		{ContributorID: "bob", Amount: 2 * money.Scale},
	}, got, "ada's 8 is three quarters a claim's")
	odd := attribution.Split(money.Scale, []attribution.Stake{
		{ContributorID: "ada", Cost: 1 * money.Scale, Coherence: attribution.CoherenceBase, Claimed: true},
		{ContributorID: "ada", Cost: 2 * money.Scale, Coherence: attribution.CoherenceBase},
	})
	require.Equal(t, []attribution.Payout{{ContributorID: "ada", Amount: money.Scale, Claimed: 330_000}}, odd,
		"a third of 1.00, rounded down to the cent")
}

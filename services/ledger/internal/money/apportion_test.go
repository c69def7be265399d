package money_test

import (
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

func weights(ws ...int64) []*big.Int {
	out := make([]*big.Int, len(ws))
	for i, w := range ws {
		out[i] = big.NewInt(w)
	}
	return out
}

func TestApportion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		units   int64
		weights []int64
		want    []int64
	}{
		{"three equal ways: the unit left goes to the first", 100, []int64{1, 1, 1}, []int64{34, 33, 33}},
		{"one unit, two equal weights", 1, []int64{5, 5}, []int64{1, 0}},
		{"the largest remainder wins over the order", 10, []int64{1, 2}, []int64{3, 7}},
		{"a zero weight gets nothing", 7, []int64{0, 3, 4}, []int64{0, 3, 4}},
		{"no weight: nothing apportioned", 9, []int64{0, 0}, []int64{0, 0}},
		{"nothing to apportion", 0, []int64{1, 2}, []int64{0, 0}},
		{"no shares", 5, nil, []int64{}},
		{"weights past an int64's product", 1_000_000_000_000, []int64{1 << 62, 1 << 62, 1}, []int64{500_000_000_000, 500_000_000_000, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := money.Apportion(tc.units, weights(tc.weights...))
			require.Equal(t, tc.want, got)
		})
	}
}

// TestApportionSumsExactly: whatever the weights, the parts add up to the
// units and none is off its exact share by a unit or more.
func TestApportionSumsExactly(t *testing.T) {
	t.Parallel()
	ws := []int64{7, 13, 1, 999_983, 2, 2}
	var total int64
	for _, w := range ws {
		total += w
	}
	for _, units := range []int64{1, 5, 6, 99, 1_000_003, 123_456_789} {
		parts := money.Apportion(units, weights(ws...))
		var sum int64
		for i, p := range parts {
			sum += p
			exact := new(big.Rat).SetFrac(big.NewInt(units*ws[i]), big.NewInt(total))
			diff := new(big.Rat).Sub(new(big.Rat).SetInt64(p), exact)
			require.Negative(t, new(big.Rat).Abs(diff).Cmp(big.NewRat(1, 1)), "part %d of %d: %d against %s", i, units, p, exact)
		}
		require.Equal(t, units, sum)
	}
}

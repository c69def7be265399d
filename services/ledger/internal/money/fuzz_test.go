package money_test

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// exact is m/10^6 as an exact rational.
func exact(m money.Micros) *big.Rat { return big.NewRat(int64(m), money.Scale) }

// FuzzFromFloat checks the one place a JSON number becomes an exact amount:
// an accepted number is a decimal of at most six places that reads as the
// same double (the micro-units convert back to it, through exact rational
// arithmetic and through String), and a refusal is for a reason that
// holds: not finite, out of range, or no decimal of at most six places
// (not even the nearest one) reads as that double.
func FuzzFromFloat(f *testing.F) {
	for _, x := range []float64{0, 1, 1.5, 0.1, 0.30000000000000004, 1e-6, 1e-7, 123456.123456, -2.5, 9e12, 9.000000000001e12,
		math.Nextafter(9e12, 10e12), math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.NaN(), math.Copysign(0, -1),
		4503599627.370497, 8999999999999.999} {
		f.Add(x)
	}
	f.Fuzz(func(t *testing.T, x float64) {
		m, err := money.FromFloat(x)
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			require.ErrorIs(t, err, money.ErrNotFinite)
			return
		case math.Abs(x) > 9e12:
			require.ErrorIs(t, err, money.ErrOutOfRange)
			return
		}
		// The six-decimal value nearest x, computed exactly.
		scaled := new(big.Rat).Mul(new(big.Rat).SetFloat64(x), big.NewRat(money.Scale, 1))
		num, den := scaled.Num(), scaled.Denom()
		q, r := new(big.Int).QuoRem(num, den, new(big.Int))
		if new(big.Int).Mul(new(big.Int).Abs(r), big.NewInt(2)).Cmp(den) >= 0 {
			q.Add(q, big.NewInt(int64(num.Sign())))
		}
		nearest := money.Micros(q.Int64())
		back, _ := exact(nearest).Float64()
		if err != nil {
			require.True(t, errors.Is(err, money.ErrTooPrecise), "x=%v: %v", x, err)
			require.NotEqual(t, x, back, "x=%v has a six-decimal form %s, yet was refused", x, nearest)
			return
		}
		got, _ := exact(m).Float64()
		require.Equal(t, x, got, "x=%v: %s is not the same number", x, m)
		printed, perr := strconv.ParseFloat(m.String(), 64)
		require.NoError(t, perr)
		require.Equal(t, x, printed, "String %q reads back as another number", m.String())
		if math.Abs(float64(m)) < 1<<53 {
			require.Equal(t, x, m.Float64(), "Float64 gives back the number received")
		}
	})
}

// FuzzString checks String prints every amount, the least int64 included,
// as the exact decimal of its micro-units.
func FuzzString(f *testing.F) {
	for _, m := range []int64{0, 1, -1, 1_500_000, -999_999, math.MaxInt64, math.MinInt64} {
		f.Add(m)
	}
	f.Fuzz(func(t *testing.T, m int64) {
		s := money.Micros(m).String()
		require.Regexp(t, `^-?[0-9]+\.[0-9]{6}$`, s)
		r, ok := new(big.Rat).SetString(s)
		require.True(t, ok, s)
		require.Zero(t, r.Cmp(exact(money.Micros(m))), "%d printed as %s", m, s)
	})
}

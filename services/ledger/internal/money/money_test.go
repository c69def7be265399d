package money_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

func TestFromFloat(t *testing.T) {
	t.Parallel()
	tenth := 0.1 // a variable: constant arithmetic would be exact
	tests := []struct {
		name string
		in   float64
		want money.Micros
		err  error
	}{
		{"zero", 0, 0, nil},
		{"one tenth is exact", 0.1, 100_000, nil},
		{"cents", 19.99, 19_990_000, nil},
		{"six decimals", 0.000001, 1, nil},
		{"whole", 1e9, 1_000_000_000_000_000, nil},
		{"negative", -2.5, -2_500_000, nil},
		{"seven decimals", 0.0000001, 0, money.ErrTooPrecise},
		{"float noise is refused, not rounded", tenth + 0.2, 0, money.ErrTooPrecise},
		{"NaN", math.NaN(), 0, money.ErrNotFinite},
		{"+Inf", math.Inf(1), 0, money.ErrNotFinite},
		{"-Inf", math.Inf(-1), 0, money.ErrNotFinite},
		{"too large", 1e13, 0, money.ErrOutOfRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := money.FromFloat(tt.in)
			if tt.err != nil {
				require.ErrorIs(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got, "FromFloat(%v)", tt.in)
		})
	}
}

func TestFloat64RoundTrips(t *testing.T) {
	t.Parallel()
	for _, x := range []float64{0, 0.1, 0.25, 19.99, 33.33, 123456.789012, 8_999_999_999.999999} {
		m, err := money.FromFloat(x)
		require.NoError(t, err)
		require.Equal(t, x, m.Float64(), "round trip of %v", x)
	}
}

func TestSumsStayExact(t *testing.T) {
	t.Parallel()
	// The float sum of 0.1 ten thousand times drifts; the micro-unit sum
	// does not.
	var total money.Micros
	var drift float64
	for range 10_000 {
		m, err := money.FromFloat(0.1)
		require.NoError(t, err)
		total += m
		drift += 0.1
	}
	require.Equal(t, 1000.0, total.Float64())
	require.NotEqual(t, 1000.0, drift, "the float sum drifts (why amounts are integers)")
}

func TestString(t *testing.T) {
	t.Parallel()
	require.Equal(t, "1.500000", money.Micros(1_500_000).String())
	require.Equal(t, "-0.000001", money.Micros(-1).String())
}

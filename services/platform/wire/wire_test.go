package wire_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/wire"
)

func TestTime(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("CET", 3600)
	require.Equal(t, "2026-11-25T06:15:46.1234Z", wire.Time(time.Date(2026, 11, 25, 7, 15, 46, 123_400_000, paris)))
	require.Equal(t, "2026-11-25T06:15:46Z", wire.Time(time.Date(2026, 11, 25, 6, 15, 46, 0, time.UTC)))
}

func TestOptString(t *testing.T) {
	t.Parallel()
	require.Nil(t, wire.OptString(""))
	require.Equal(t, "ada", wire.OptString("ada").GetValue())
}

// TestAmount: a float sum is written to six decimals, without its
// addition's noise; what six decimals cannot hold is written as it is.
func TestAmount(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{
		{0.1 + 0.2, 0.3},
		{1 - 0.9, 0.1},
		{3 * 0.1, 0.3},
		{-(0.1 + 0.2), -0.3},
		{1234.5678905, 1234.567891},
		{0, 0},
		{1e15 + 0.1, 1e15 + 0.1},
		{math.Inf(1), math.Inf(1)},
	} {
		if got := wire.Amount(tt.in); got != tt.want {
			t.Errorf("Amount(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if got := wire.Amount(math.NaN()); !math.IsNaN(got) {
		t.Errorf("Amount(NaN) = %v, want NaN", got)
	}
}

package metrics_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
)

func TestPercentileLinearInterpolation(t *testing.T) {
	t.Parallel()
	v := []float64{15, 20, 35, 40, 50}
	for _, c := range []struct{ p, want float64 }{
		{0, 15}, {25, 20}, {50, 35}, {95, 48}, {100, 50}, {40, 29},
	} {
		got, ok := metrics.Percentile(v, c.p)
		require.True(t, ok)
		require.InDelta(t, c.want, got, 1e-9, "p%v", c.p)
	}
	got, ok := metrics.Percentile([]float64{7}, 95)
	require.True(t, ok)
	require.InDelta(t, 7.0, got, 0)
	_, ok = metrics.Percentile(nil, 50)
	require.False(t, ok)
	require.Equal(t, []float64{15, 20, 35, 40, 50}, v, "the input is not reordered")
}

// TestPercentileProperties: the result lies between the minimum and the
// maximum and never decreases as p grows.
func TestPercentileProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		v := rapid.SliceOfN(rapid.Float64Range(0, 1e6), 1, 200).Draw(t, "values")
		p1 := rapid.Float64Range(0, 100).Draw(t, "p1")
		p2 := rapid.Float64Range(p1, 100).Draw(t, "p2")
		a, _ := metrics.Percentile(v, p1)
		b, _ := metrics.Percentile(v, p2)
		if a > b+1e-9 {
			t.Fatalf("p%v=%v > p%v=%v", p1, a, p2, b)
		}
		if a < slices.Min(v)-1e-9 || b > slices.Max(v)+1e-9 {
			t.Fatalf("out of range: %v %v", a, b)
		}
	})
}

func TestRates(t *testing.T) {
	t.Parallel()
	out := []metrics.Outcome{
		{TaskType: "spec", Model: "m1", Succeeded: true},
		{TaskType: "spec", Model: "m2", Succeeded: false},
		{TaskType: "impl", Model: "m1", Succeeded: true},
		{TaskType: "spec", Model: "m1", Succeeded: true},
	}
	byType := metrics.Rates(out, func(o metrics.Outcome) string { return o.TaskType })
	require.Equal(t, []metrics.Rate{{Key: "impl", Completed: 1}, {Key: "spec", Completed: 2, Failed: 1}}, byType)
	require.InDelta(t, 2.0/3, byType[1].Value(), 1e-12)
	require.InDelta(t, 0.0, metrics.Rate{}.Value(), 0)
}

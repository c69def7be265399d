package gauges_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/platform/gauges"
)

func TestOneSettingForEveryModule(t *testing.T) {
	t.Parallel()
	fs := config.New("test")
	first := gauges.Register(fs)
	second := gauges.Register(fs) // a second module: no "flag defined twice" panic
	_, err := fs.Parse([]string{"-metrics-interval=250ms"}, nil)
	require.NoError(t, err)
	for _, s := range []gauges.Setting{first, second} {
		d, err := s.Interval()
		require.NoError(t, err)
		require.Equal(t, 250*time.Millisecond, d)
	}

	fs = config.New("test")
	s := gauges.Register(fs)
	_, err = fs.Parse(nil, func(string) string { return "" })
	require.NoError(t, err)
	d, err := s.Interval()
	require.NoError(t, err)
	require.Equal(t, gauges.DefaultInterval, d)

	fs = config.New("test")
	s = gauges.Register(fs)
	_, err = fs.Parse(nil, func(k string) string { return map[string]string{"FOUNDRY_METRICS_INTERVAL": "0s"}[k] })
	require.NoError(t, err)
	_, err = s.Interval()
	require.ErrorContains(t, err, "FOUNDRY_METRICS_INTERVAL")

	d, err = gauges.Setting{}.Interval()
	require.NoError(t, err)
	require.Equal(t, gauges.DefaultInterval, d, "a module started without its flags")
}

var descs = []gauges.Desc{
	{Name: "test_ratio", Help: "A ratio."},
	{Name: "test_by_mode", Help: "One per mode.", Labels: []string{"mode"}},
}

func TestASetReportsWhatWasStoredLast(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewPedanticRegistry()
	s := gauges.New(reg, descs...)

	n, err := testutil.GatherAndCount(reg, "test_ratio", "test_by_mode")
	require.NoError(t, err)
	require.Zero(t, n, "nothing before the first read")

	s.Store([]gauges.Sample{{Name: "test_ratio", Value: 0.5},
		{Name: "test_by_mode", Labels: []string{"a"}, Value: 1}, {Name: "test_by_mode", Labels: []string{"b"}, Value: 0}})
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP test_by_mode One per mode.
# TYPE test_by_mode gauge
test_by_mode{mode="a"} 1
test_by_mode{mode="b"} 0
# HELP test_ratio A ratio.
# TYPE test_ratio gauge
test_ratio 0.5
`), "test_ratio", "test_by_mode"))

	s.Store([]gauges.Sample{{Name: "test_by_mode", Labels: []string{"a"}, Value: 0}})
	n, err = testutil.GatherAndCount(reg, "test_ratio")
	require.NoError(t, err)
	require.Zero(t, n, "a family left out of the last read is absent")

	s.Store([]gauges.Sample{{Name: "test_ratio", Value: math.NaN()}})
	n, err = testutil.GatherAndCount(reg, "test_ratio")
	require.NoError(t, err)
	require.Equal(t, 1, n, "NaN is a value")

	s.Store([]gauges.Sample{{Name: "test_undeclared", Value: 1}})
	_, err = reg.Gather()
	require.ErrorContains(t, err, "test_undeclared")
	s.Store([]gauges.Sample{{Name: "test_by_mode", Value: 1}})
	_, err = reg.Gather()
	require.Error(t, err, "a sample without its labels fails the scrape")
}

func TestRunKeepsTheLastValuesWhenAReadFails(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	s := gauges.New(reg, descs...)
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx, zap.NewNop(), time.Millisecond, func(context.Context) ([]gauges.Sample, error) {
			switch calls.Add(1) {
			case 1:
				return []gauges.Sample{{Name: "test_ratio", Value: 2}}, nil
			case 2, 3:
				return []gauges.Sample{{Name: "test_ratio", Value: 3}}, errors.New("database down")
			default:
				cancel()
				return nil, ctx.Err()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	require.InDelta(t, 2, value(t, reg, "test_ratio"), 0, "the failed reads changed nothing")
	require.InDelta(t, 2, value(t, reg, "foundry_metrics_refresh_failures_total"), 0,
		"two failures counted; the read cut short by the end is not one")
	require.Positive(t, value(t, reg, "foundry_metrics_refreshed_timestamp_seconds"))
}

// value is the one sample of the family name.
func value(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		require.Len(t, f.GetMetric(), 1, name)
		if c := f.GetMetric()[0].GetCounter(); c != nil {
			return c.GetValue()
		}
		return f.GetMetric()[0].GetGauge().GetValue()
	}
	t.Fatalf("no %s", name)
	return 0
}

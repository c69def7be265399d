package ops

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/platform/gauges"
)

func TestMonitorSamples(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 30, 0, 500000000, time.UTC)
	require.Empty(t, monitorSamples(monitor.Record{}, false), "no check yet: absent")
	require.Equal(t, []gauges.Sample{
		{Name: "foundry_ops_monitor_check_ok", Value: 1},
		{Name: "foundry_ops_monitor_last_check_timestamp_seconds", Value: float64(at.Unix()) + 0.5},
	}, monitorSamples(monitor.Record{CheckedAt: at}, true))
	for name, rec := range map[string]monitor.Record{
		"the ledger did not answer":    {CheckedAt: at, Error: "rpc error: code = Unavailable", Failed: 2},
		"its decision was not applied": {CheckedAt: at, Error: "apply read_only: rpc error: code = Unavailable"},
	} {
		require.Equal(t, 0.0, monitorSamples(rec, true)[0].Value, name)
	}
	for _, s := range monitorSamples(monitor.Record{CheckedAt: at}, true) {
		found := false
		for _, d := range monitorGauges {
			found = found || d.Name == s.Name
		}
		require.True(t, found, "%s is declared", s.Name)
	}
}

package ops

import (
	"context"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/gauges"
)

// monitorGauges are the gauges ops reads in the background
// (usecase.LatestCheck) and /metrics reports; docs/observability.md lists
// them. Every replica reads the same recorded check, whichever leads.
var monitorGauges = []gauges.Desc{
	{Name: "foundry_ops_monitor_check_ok",
		Help: "1 when the economy monitor's newest check completed (the ledger answered, and any mode it decided was applied); absent before the first."},
	{Name: "foundry_ops_monitor_last_check_timestamp_seconds", Help: "When the economy monitor's newest check was made (Unix seconds)."},
}

// monitorSamples maps the newest recorded check (ok false: none) to the
// gauges' values.
func monitorSamples(rec monitor.Record, ok bool) []gauges.Sample {
	if !ok {
		return nil
	}
	return []gauges.Sample{
		{Name: "foundry_ops_monitor_check_ok", Value: gauges.Bool(rec.Error == "")},
		{Name: "foundry_ops_monitor_last_check_timestamp_seconds", Value: float64(rec.CheckedAt.UnixMicro()) / 1e6},
	}
}

// readGauges is the ops gauge refresher's read.
func readGauges(uc *usecase.App) func(ctx context.Context) ([]gauges.Sample, error) {
	return func(ctx context.Context) ([]gauges.Sample, error) {
		rec, ok, err := uc.LatestCheck(ctx)
		if err != nil {
			return nil, err
		}
		return monitorSamples(rec, ok), nil
	}
}

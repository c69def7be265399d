package ledger

import (
	"context"
	"math"

	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/gauges"
)

// economyGauges are the gauges the ledger reads in the background
// (usecase.Gauges) and /metrics reports; docs/observability.md lists them.
var economyGauges = []gauges.Desc{
	{Name: "foundry_ledger_cc_outstanding", Help: "CC outstanding (held by contributors), from the economy row."},
	{Name: "foundry_ledger_treasury_usd", Help: "USD in the treasury, from the economy row."},
	{Name: "foundry_ledger_reserve_ratio",
		Help: "The treasury's value at the mid rate over the CC outstanding; NaN while no CC is outstanding (nothing to back)."},
	{Name: "foundry_ledger_economy_mode", Help: "1 for the economy's mode, 0 for every other mode.", Labels: []string{"mode"}},
	{Name: "foundry_ledger_oracle_breaker_open", Help: "1 while the rate oracle's circuit breaker is open (the rate is held)."},
	{Name: "foundry_ledger_audit_unsequenced", Help: "Audit entries waiting for the sequencer (the audit queue)."},
	{Name: "foundry_ledger_audit_unsequenced_oldest_age_seconds",
		Help: "How long the oldest audit entry has waited for the sequencer; 0 when none waits."},
	{Name: "foundry_ledger_audit_chain_valid",
		Help: "1 when the last verification of the audit log this process ran found it sound; absent before the first."},
	{Name: "foundry_ledger_audit_verified_seq", Help: "The last audit entry that verification reached (seq)."},
	{Name: "foundry_ledger_audit_verified_timestamp_seconds", Help: "When this process last verified the audit log (Unix seconds)."},
	{Name: "foundry_ledger_integrity_findings_open",
		Help: "Open integrity findings: places where the log, the journal, a balance or the supply disagree with what the ledger signed, until a repair."},
	{Name: "foundry_ledger_audit_scrub_late",
		Help: "1 while the audit scrubber is behind (its cycle past one and a half cycles, or no step for a while); absent while it is off."},
	{Name: "foundry_ledger_audit_scrub_cycle_end_timestamp_seconds",
		Help: "When the audit scrubber last completed a cycle over every entry, journal entry and balance (Unix seconds); absent before the first."},
}

// economySamples maps the economy's readings to the gauges' values.
func economySamples(g usecase.Gauges) []gauges.Sample {
	s := g.Supply
	ratio := s.ReserveRatio
	if s.OutstandingCC <= 0 {
		// The domain calls an unbacked nothing fully backed (1.0); the
		// gauge says there is nothing to measure, so no alert on a ratio
		// ever fires for it and no graph draws a made-up 1.
		ratio = math.NaN()
	}
	out := []gauges.Sample{
		{Name: "foundry_ledger_cc_outstanding", Value: s.OutstandingCC.Float64()},
		{Name: "foundry_ledger_treasury_usd", Value: s.TreasuryUSD.Float64()},
		{Name: "foundry_ledger_reserve_ratio", Value: ratio},
	}
	for _, m := range usecase.Modes {
		out = append(out, gauges.Sample{Name: "foundry_ledger_economy_mode", Labels: []string{m}, Value: gauges.Bool(m == s.Mode)})
	}
	out = append(out,
		gauges.Sample{Name: "foundry_ledger_oracle_breaker_open", Value: gauges.Bool(s.Rate.Breaker.Tripped)},
		gauges.Sample{Name: "foundry_ledger_audit_unsequenced", Value: float64(g.Backlog.Entries)},
		gauges.Sample{Name: "foundry_ledger_audit_unsequenced_oldest_age_seconds", Value: gauges.Age(g.At, g.Backlog.Oldest)},
	)
	out = append(out, gauges.Sample{Name: "foundry_ledger_integrity_findings_open", Value: float64(g.OpenFindings)})
	if g.Scrub.Cycle > 0 {
		out = append(out, gauges.Sample{Name: "foundry_ledger_audit_scrub_late", Value: gauges.Bool(g.Scrub.Late(g.At) != "")})
	}
	if l := g.Scrub.Last; l != nil {
		out = append(out, gauges.Sample{Name: "foundry_ledger_audit_scrub_cycle_end_timestamp_seconds", Value: float64(l.EndedAt.UnixMicro()) / 1e6})
	}
	if v := g.Verified; v != nil {
		out = append(out,
			gauges.Sample{Name: "foundry_ledger_audit_chain_valid", Value: gauges.Bool(v.OK)},
			gauges.Sample{Name: "foundry_ledger_audit_verified_seq", Value: float64(v.LastVerified)},
			gauges.Sample{Name: "foundry_ledger_audit_verified_timestamp_seconds", Value: float64(v.At.UnixMicro()) / 1e6},
		)
	}
	return out
}

// readGauges is the ledger's gauge refresher's read.
func readGauges(uc *usecase.App) func(ctx context.Context) ([]gauges.Sample, error) {
	return func(ctx context.Context) ([]gauges.Sample, error) {
		g, err := uc.Gauges(ctx)
		if err != nil {
			return nil, err
		}
		return economySamples(g), nil
	}
}

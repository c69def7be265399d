package ledger

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/gauges"
)

// byName keys samples by name and label values ("name" or "name{v}").
func byName(samples []gauges.Sample) map[string]float64 {
	out := map[string]float64{}
	for _, s := range samples {
		k := s.Name
		for _, l := range s.Labels {
			k += "{" + l + "}"
		}
		out[k] = s.Value
	}
	return out
}

func TestEconomySamples(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	declared := map[string]bool{}
	for _, d := range economyGauges {
		declared[d.Name] = true
	}

	t.Run("a backed economy in normal mode, never verified", func(t *testing.T) {
		t.Parallel()
		g := usecase.Gauges{At: at,
			Supply:  usecase.Supply{OutstandingCC: 1500_000000, TreasuryUSD: 12_500000, ReserveRatio: 0.825, Mode: usecase.ModeNormal},
			Backlog: usecase.Backlog{Entries: 3, Oldest: at.Add(-1500 * time.Millisecond)},
		}
		samples := economySamples(g)
		for _, s := range samples {
			require.True(t, declared[s.Name], "%s is declared", s.Name)
		}
		require.Equal(t, map[string]float64{
			"foundry_ledger_cc_outstanding":                       1500,
			"foundry_ledger_treasury_usd":                         12.5,
			"foundry_ledger_reserve_ratio":                        0.825,
			"foundry_ledger_integrity_findings_open":              0,
			"foundry_ledger_economy_mode{normal}":                 1,
			"foundry_ledger_economy_mode{warning}":                0,
			"foundry_ledger_economy_mode{minting_paused}":         0,
			"foundry_ledger_economy_mode{read_only}":              0,
			"foundry_ledger_economy_mode{frozen}":                 0,
			"foundry_ledger_oracle_breaker_open":                  0,
			"foundry_ledger_audit_unsequenced":                    3,
			"foundry_ledger_audit_unsequenced_oldest_age_seconds": 1.5,
		}, byName(samples), "the chain's gauges are absent until this process verified the log")
	})

	t.Run("nothing outstanding: no ratio (NaN)", func(t *testing.T) {
		t.Parallel()
		got := byName(economySamples(usecase.Gauges{At: at, Supply: usecase.Supply{ReserveRatio: 1, Mode: usecase.ModeNormal}}))
		require.True(t, math.IsNaN(got["foundry_ledger_reserve_ratio"]))
		require.Zero(t, got["foundry_ledger_audit_unsequenced_oldest_age_seconds"], "nothing waits")
	})

	t.Run("frozen, the breaker open, the chain broken", func(t *testing.T) {
		t.Parallel()
		g := usecase.Gauges{At: at,
			Supply: usecase.Supply{OutstandingCC: 1, ReserveRatio: 0.5, Mode: usecase.ModeFrozen,
				Rate: usecase.Rate{Breaker: credit.BreakerState{Tripped: true}}},
			Verified: &usecase.Verification{Result: audit.Result{OK: false, LastVerified: 41, FirstDivergent: 42}, At: at.Add(-time.Minute)},
		}
		got := byName(economySamples(g))
		for _, m := range usecase.Modes {
			require.Equal(t, gauges.Bool(m == usecase.ModeFrozen), got["foundry_ledger_economy_mode{"+m+"}"], m)
		}
		require.Equal(t, 1.0, got["foundry_ledger_oracle_breaker_open"])
		require.Equal(t, 0.0, got["foundry_ledger_audit_chain_valid"])
		require.Equal(t, 41.0, got["foundry_ledger_audit_verified_seq"])
		require.Equal(t, float64(at.Add(-time.Minute).Unix()), got["foundry_ledger_audit_verified_timestamp_seconds"])

		g.Verified.OK = true
		require.Equal(t, 1.0, byName(economySamples(g))["foundry_ledger_audit_chain_valid"])
	})

	t.Run("integrity findings and the scrubber", func(t *testing.T) {
		t.Parallel()
		g := usecase.Gauges{At: at, Supply: usecase.Supply{Mode: usecase.ModeReadOnly}, OpenFindings: 2}
		got := byName(economySamples(g))
		require.Equal(t, 2.0, got["foundry_ledger_integrity_findings_open"])
		_, ok := got["foundry_ledger_audit_scrub_late"]
		require.False(t, ok, "the scrubber is off: no series")
		_, ok = got["foundry_ledger_audit_scrub_cycle_end_timestamp_seconds"]
		require.False(t, ok, "no cycle yet")

		ended := at.Add(-10 * time.Minute)
		g.Scrub = usecase.ScrubReport{Cycle: time.Hour, Current: 3, StartedAt: ended, UpdatedAt: at.Add(-time.Second),
			Last: &usecase.ScrubCycle{Cycle: 2, EndedAt: ended}}
		got = byName(economySamples(g))
		require.Equal(t, 0.0, got["foundry_ledger_audit_scrub_late"])
		require.Equal(t, float64(ended.Unix()), got["foundry_ledger_audit_scrub_cycle_end_timestamp_seconds"])
		g.Scrub.UpdatedAt = at.Add(-2 * time.Minute)
		require.Equal(t, 1.0, byName(economySamples(g))["foundry_ledger_audit_scrub_late"], "no step for two minutes")
	})
}

package monitor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/monitor"
)

func healthy() monitor.Check {
	return monitor.Check{OutstandingCC: 1000, ReserveRatio: 1.2, ChainValid: true, Mode: monitor.Normal}
}

func TestDecideGraduates(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change func(*monitor.Check)
		mode   string
		score  int
	}{
		{"healthy", func(*monitor.Check) {}, monitor.Normal, 100},
		{"just above 1.0 (the spread's surplus) is healthy", func(c *monitor.Check) { c.ReserveRatio = 1.005 }, monitor.Normal, 100},
		{"exactly 1.0 is healthy", func(c *monitor.Check) { c.ReserveRatio = 1 }, monitor.Normal, 100},
		{"under-reserved: minting pauses", func(c *monitor.Check) { c.ReserveRatio = 0.9 }, monitor.MintingPaused, 55},
		{"the issue's 0.854: minting pauses, not a warning", func(c *monitor.Check) { c.ReserveRatio = 0.854 }, monitor.MintingPaused, 50},
		{"a hair under 1.0 pauses too", func(c *monitor.Check) { c.ReserveRatio = 0.9999 }, monitor.MintingPaused, 64},
		{"a deep hole weighs at most 55", func(c *monitor.Check) { c.ReserveRatio = 0.2 }, monitor.MintingPaused, 45},
		{"under-reserved with a late scrubber: read_only", func(c *monitor.Check) {
			c.ReserveRatio, c.ScrubLate = 0.8, "the audit scrubber has completed no step for 2m0s"
		}, monitor.ReadOnly, 30},
		{"nothing outstanding says nothing", func(c *monitor.Check) { c.OutstandingCC, c.ReserveRatio = 0, 0 }, monitor.Normal, 100},
		{"breaker open", func(c *monitor.Check) { c.BreakerTripped = true }, monitor.MintingPaused, 65},
		{"two warnings pause minting", func(c *monitor.Check) {
			c.ScrubLate, c.Unsequenced, c.UnsequencedAge = "the audit scrubber is behind", 5, 61
		}, monitor.MintingPaused, 65},
		{"balances off: read_only, forced", func(c *monitor.Check) { c.Mismatched = []string{"available:a"} }, monitor.ReadOnly, 40},
		{"chain broken", func(c *monitor.Check) { c.ChainValid, c.FirstDivergent = false, 7 }, monitor.ReadOnly, 40},
		{"an integrity finding holds its mode", func(c *monitor.Check) {
			c.ChainValid, c.Findings = false, []monitor.Finding{{Mode: monitor.Frozen, Reason: "journal entry e-1 is not what audit entry 1 records"}}
		}, monitor.Frozen, 40},
		{"findings stand for the chain and the balances they name", func(c *monitor.Check) {
			c.ChainValid, c.Mismatched = false, []string{"available:a"}
			c.Findings = []monitor.Finding{{Mode: monitor.ReadOnly, Reason: "audit entry 3: entry fields do not match"}}
		}, monitor.ReadOnly, 40},
		{"a late scrubber", func(c *monitor.Check) { c.ScrubLate = "the audit scrubber has completed no step for 2m0s" }, monitor.Warning, 85},
		{"a frozen economy is never decided normal", func(c *monitor.Check) { c.Mode = monitor.Frozen }, monitor.Frozen, 60},
		{"a busy sequencer is healthy", func(c *monitor.Check) { c.Unsequenced, c.UnsequencedAge = 900, 0.4 }, monitor.Normal, 100},
		{"a late sequencer", func(c *monitor.Check) { c.Unsequenced, c.UnsequencedAge = 5, 61 }, monitor.Warning, 80},
		{"a stalled sequencer", func(c *monitor.Check) { c.Unsequenced, c.UnsequencedAge = 5, 601 }, monitor.ReadOnly, 35},
		{"everything at once: the floor of the worst", func(c *monitor.Check) {
			c.ChainValid, c.BreakerTripped, c.ReserveRatio, c.Mismatched = false, true, 0.5, []string{"a", "b", "c", "d"}
		}, monitor.ReadOnly, 0},
	} {
		chk := healthy()
		c.change(&chk)
		d := monitor.Decide(chk)
		require.Equal(t, c.mode, d.Mode, c.name)
		require.Equal(t, c.score, d.Score, c.name)
		require.Equal(t, c.mode == monitor.Normal, len(d.Reasons) == 0, c.name)
	}
	d := monitor.Decide(monitor.Check{ChainValid: false, FirstDivergent: 3, ChainReason: "hash", OutstandingCC: 5, ReserveRatio: 0.5, Mismatched: []string{"a", "b", "c", "d"}})
	require.Equal(t, "audit chain broken at seq 3 (hash); 4 cached balances differ from the journal (a, b, c, …); reserve ratio 0.5000 is below 1.0", d.Reason())
	d = monitor.Decide(monitor.Check{ChainValid: true, Unsequenced: 12, UnsequencedAge: 75.4})
	require.Equal(t, "the audit sequencer is behind: 12 entries wait, the oldest for 75 s", d.Reason())
	d = monitor.Decide(monitor.Check{ChainValid: false, FirstDivergent: 3, Mode: monitor.Frozen,
		Findings: []monitor.Finding{{Mode: monitor.ReadOnly, Reason: "audit entry 3: hash"}}})
	require.Equal(t, "integrity: audit entry 3: hash; the economy is frozen: an administrator unfreezes it", d.Reason())
}

func TestApplyNeverLiftsAFreeze(t *testing.T) {
	t.Parallel()
	mode, ok := monitor.Apply(monitor.Frozen, monitor.Decision{Mode: monitor.Normal})
	require.False(t, ok)
	require.Equal(t, monitor.Frozen, mode)
	mode, ok = monitor.Apply(monitor.MintingPaused, monitor.Decision{Mode: monitor.Normal})
	require.True(t, ok, "the monitor returns its own modes to normal")
	require.Equal(t, monitor.Normal, mode)
	_, ok = monitor.Apply(monitor.Warning, monitor.Decision{Mode: monitor.Warning})
	require.False(t, ok, "nothing to change")
	mode, ok = monitor.Apply(monitor.Normal, monitor.Decision{Mode: monitor.Frozen})
	require.True(t, ok)
	require.Equal(t, monitor.Frozen, mode)
}

func TestOnlyWarningEscalatesAMilderMode(t *testing.T) {
	t.Parallel()
	warn := monitor.Decision{Mode: monitor.Warning}
	for last, want := range map[string]bool{
		"": true, monitor.Normal: true, monitor.Warning: false,
		monitor.MintingPaused: false, monitor.ReadOnly: false, monitor.Frozen: false,
	} {
		require.Equal(t, want, monitor.Escalates(last, warn), "from %q", last)
	}
	require.False(t, monitor.Escalates(monitor.Normal, monitor.Decision{Mode: monitor.Unknown}), "below the threshold nothing is raised")
}

// TestModeForScore pins each threshold of the graduated response
// (docs/ops.md): the lowest score of a mode and the highest of the next.
func TestModeForScore(t *testing.T) {
	t.Parallel()
	for score, mode := range map[int]string{
		100: monitor.Normal, monitor.NormalFrom: monitor.Normal,
		monitor.NormalFrom - 1: monitor.Warning, monitor.WarningFrom: monitor.Warning,
		monitor.WarningFrom - 1: monitor.MintingPaused, monitor.MintingPausedFrom: monitor.MintingPaused,
		monitor.MintingPausedFrom - 1: monitor.ReadOnly, 0: monitor.ReadOnly,
	} {
		require.Equal(t, mode, monitor.ModeForScore(score), "score %d", score)
	}
	require.Equal(t, []int{90, 70, 40}, []int{monitor.NormalFrom, monitor.WarningFrom, monitor.MintingPausedFrom},
		"the thresholds docs/ops.md states")
}

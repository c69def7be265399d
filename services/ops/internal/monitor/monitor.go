// Package monitor holds the economy monitor's judgement, pure: from the
// ledger's check of itself (reserve ratio, audit chain, balances against
// the journal, the oracle breaker, the audit sequencer) Decide grades the
// graduated response, DecideFailed grades a check that could not be made,
// and Apply says which mode to ask the ledger for. The I/O is elsewhere:
// the ops use cases ask the ledger, apply and record (usecase.CheckEconomy,
// usecase.Coherence), and the module's runner calls them every interval on
// the one replica that holds the lease.
package monitor

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The modes, mildest first (the ledger's names).
const (
	Normal        = "normal"
	Warning       = "warning"
	MintingPaused = "minting_paused"
	ReadOnly      = "read_only"
	Frozen        = "frozen"
)

// Modes lists the modes, mildest first: the ledger's EconomyMode enum has
// exactly these words, in this order (the ops peer's tests pin them), so
// the monitor and the ledger cannot disagree on a mode's name or rank.
var Modes = []string{Normal, Warning, MintingPaused, ReadOnly, Frozen}

var rank = func() map[string]int {
	r := make(map[string]int, len(Modes))
	for i, m := range Modes {
		r[m] = i
	}
	return r
}()

// Check is what the ledger reported about itself.
type Check struct {
	// OutstandingCC is the CC in circulation; with none, the reserve ratio
	// says nothing.
	OutstandingCC  float64
	ReserveRatio   float64
	ChainValid     bool
	ChainReason    string
	FirstDivergent int
	// Mismatched lists accounts whose cached balance differs from the
	// sum of their journal lines.
	Mismatched     []string
	BreakerTripped bool
	// Unsequenced counts the movements' audit entries waiting for the
	// ledger's sequencer, the oldest for UnsequencedAge seconds.
	Unsequenced    int
	UnsequencedAge float64
	// Mode is the economy's mode when the check ran.
	Mode string
	// Findings are the ledger's open integrity findings: places where its
	// records disagree with what it signed, each with the mode it holds
	// the economy at.
	Findings []Finding
	// ScrubLate says why the ledger's scrubber, which re-checks every old
	// record once a cycle, is behind ("" when it is not).
	ScrubLate string
}

// Finding is one of the ledger's integrity findings.
type Finding struct {
	Mode   string
	Reason string
}

// Record is one check as stored.
type Record struct {
	ID        string
	CheckedAt time.Time
	Holder    string
	Check     Check
	// Mismatched is len(Check.Mismatched) as stored (the names are not kept).
	Mismatched int
	Decision   Decision
	// Applied is true when the ledger's mode was changed.
	Applied bool
	// Error is what went wrong ("" for a completed check).
	Error string
	// Failed is how many checks in a row failed, this one included (0 for
	// a completed check); not stored, it is counted from the records.
	Failed int
}

// Streak is what the recorded checks say since the newest completed one.
type Streak struct {
	// Failed is how many checks failed after the newest completed one.
	Failed int
	// LastMode is the mode the newest completed check left the economy in
	// ("" before the first).
	LastMode string
}

// Decision is the graduated response to a check.
type Decision struct {
	// Mode is the mode the economy should be in.
	Mode string
	// Reasons say why, worst first; empty for normal.
	Reasons []string
	// Score is 100 for a healthy economy, less for each finding.
	Score int
}

// Reason joins the reasons for the ledger's mode_reason and incidents.
func (d Decision) Reason() string {
	if len(d.Reasons) == 0 {
		return "all checks passed"
	}
	return strings.Join(d.Reasons, "; ")
}

// The score's thresholds (docs/ops.md, "The graduated response"): the
// mode a score decides, from the mildest. Each is pinned by
// TestModeForScore.
const (
	// NormalFrom is the lowest score that is normal: one small finding
	// (a late scrubber, 15) already warns.
	NormalFrom = 90
	// WarningFrom is the lowest score that only warns.
	WarningFrom = 70
	// MintingPausedFrom is the lowest score that pauses minting; below it
	// the economy is read_only.
	MintingPausedFrom = 40
)

// ModeForScore is the mode a score decides: normal from NormalFrom,
// warning from WarningFrom, minting_paused from MintingPausedFrom,
// read_only below. A score never freezes: frozen is for money that may
// have left (an integrity finding's mode) and for a signer's freeze,
// which only an administrator lifts.
func ModeForScore(score int) string {
	switch {
	case score >= NormalFrom:
		return Normal
	case score >= WarningFrom:
		return Warning
	case score >= MintingPausedFrom:
		return MintingPaused
	}
	return ReadOnly
}

// The weight each finding takes off the score (100 for a healthy economy).
const (
	// WeightIntegrity is an integrity finding of the ledger's, a broken
	// chain or balances that disagree with the journal: each alone lands
	// in read_only, and each also forces at least that mode (floor).
	WeightIntegrity = 60
	// WeightBreaker is the oracle breaker open: minting_paused alone.
	WeightBreaker = 35
	// WeightUnderReserved is CC outstanding beyond the treasury's backing:
	// minting_paused alone, plus one point per percent the ratio is below
	// 1.0, up to WeightUnderReservedMax (a deep hole with another finding
	// reaches read_only).
	WeightUnderReserved    = 35
	WeightUnderReservedMax = 55
	// WeightSequencerLate and WeightSequencerStalled are the audit
	// sequencer behind SequencerLate (warning) and SequencerStalled
	// (read_only).
	WeightSequencerLate    = 20
	WeightSequencerStalled = 65
	// WeightScrubLate is the scrubber behind its cycle: warning.
	WeightScrubLate = 15
	// WeightFrozen is the economy frozen, which also forces frozen.
	WeightFrozen = 40
)

// Decide grades a check: each finding takes its weight off the score, and
// the score's thresholds pick the mode (ModeForScore), so two warnings
// together pause minting where one only warns. Some findings force a mode
// whatever the score (a floor, never lowered by it):
//
//   - an integrity finding of the ledger's (its log, journal, balances or
//     supply disagree with what it signed) → the mode the ledger gives it:
//     read_only for the record alone, frozen where money may have left;
//     the ledger holds the economy there itself until an administrator's
//     repair, and the monitor's decision says the same;
//   - the audit chain is broken (a walk found it, and the ledger has not
//     recorded it yet), or cached balances disagree with the journal →
//     read_only: no movement may add to a record that can no longer be
//     trusted;
//   - the economy is frozen → frozen: a signer's freeze, or a finding's,
//     which only an administrator lifts; the decision never says normal
//     beside it.
//
// The others weigh only:
//
//   - the oracle breaker is open (35) → minting_paused: minting at a rate
//     frozen at its last good value could issue CC the treasury does not
//     back once the real rate is known; stakes and withdrawals go on;
//   - CC is outstanding and the reserve ratio is below 1.0 (35, and a
//     point per percent below, up to 55) → minting_paused or, with
//     another finding, read_only. The ledger already refuses every
//     movement that would lower the ratio further, and a deposit that
//     raises it is accepted in minting_paused (the ledger's rule), so the
//     hole can be filled while nothing else is minted. (A healthy economy
//     sits just above 1.0: the spread is all the surplus deposits leave.)
//   - the audit sequencer is behind: movements' audit entries have waited
//     more than SequencerLate (20) → warning, more than SequencerStalled
//     (65) → read_only. The sequencer integrates them within a fraction
//     of a second; one that stopped leaves movements that no checkpoint
//     covers, and no verification sees, so they must stop piling up;
//   - the ledger's scrubber is behind (15) → warning: old records are not
//     re-checked at the promised rate.
func Decide(c Check) Decision {
	d := Decision{Score: 100}
	floor := Normal
	weigh := func(weight int, reason string) {
		d.Score -= weight
		d.Reasons = append(d.Reasons, reason)
	}
	force := func(mode string) {
		if rank[mode] > rank[floor] {
			floor = mode
		}
	}
	for _, f := range c.Findings {
		weigh(WeightIntegrity, "integrity: "+f.Reason)
		force(f.Mode)
	}
	if !c.ChainValid && len(c.Findings) == 0 {
		weigh(WeightIntegrity, fmt.Sprintf("audit chain broken at seq %d (%s)", c.FirstDivergent, c.ChainReason))
		force(ReadOnly)
	}
	if len(c.Mismatched) > 0 && len(c.Findings) == 0 {
		weigh(WeightIntegrity, fmt.Sprintf("%d cached balances differ from the journal (%s)", len(c.Mismatched), first(c.Mismatched, 3)))
		force(ReadOnly)
	}
	if c.BreakerTripped {
		weigh(WeightBreaker, "the oracle circuit breaker is open")
	}
	if c.OutstandingCC > 0 && c.ReserveRatio < 1 {
		below := int(math.Ceil((1 - c.ReserveRatio) * 100))
		weigh(min(WeightUnderReserved+below, WeightUnderReservedMax), fmt.Sprintf("reserve ratio %.4f is below 1.0", c.ReserveRatio))
	}
	switch late := fmt.Sprintf("the audit sequencer is behind: %d entries wait, the oldest for %.0f s", c.Unsequenced, c.UnsequencedAge); {
	case c.UnsequencedAge > SequencerStalled.Seconds():
		weigh(WeightSequencerStalled, late)
	case c.UnsequencedAge > SequencerLate.Seconds():
		weigh(WeightSequencerLate, late)
	}
	if c.ScrubLate != "" {
		weigh(WeightScrubLate, c.ScrubLate)
	}
	if c.Mode == Frozen {
		weigh(WeightFrozen, "the economy is frozen: an administrator unfreezes it")
		force(Frozen)
	}
	d.Score = max(d.Score, 0)
	d.Mode = ModeForScore(d.Score)
	if rank[floor] > rank[d.Mode] {
		d.Mode = floor
	}
	return d
}

// How long a movement's audit entry may wait for the sequencer before the
// monitor warns, and before it stops movements.
const (
	SequencerLate    = time.Minute
	SequencerStalled = 10 * time.Minute
)

// Unknown is the decision of a failed check below the escalation
// threshold: the monitor does not know the economy's state.
const Unknown = "unknown"

// EscalateAfter is how many checks in a row may fail (the ledger
// unreachable, or its check outliving the monitor's timeout) before the
// monitor raises the economy to warning. One failure is a blip (a restart,
// a deploy); three, at the default 30 s interval, is a minute and a half
// without knowing whether the chain and balances are sound, and a monitor
// that cannot see must not look like one that sees nothing wrong.
const EscalateAfter = 3

// DecideFailed grades a check that could not be completed: failed is how
// many checks in a row failed, this one included; after is the threshold
// (EscalateAfter when zero or less). Below it the decision is Unknown;
// at or past it, Warning. Warning, not more: a failing monitor knows
// nothing bad about the ledger, only that it cannot look, and blocking
// movements on that would turn a slow check into an outage. The score is 0
// either way: nothing was verified.
func DecideFailed(failed, after int, cause string) Decision {
	if after <= 0 {
		after = EscalateAfter
	}
	if failed >= after {
		return Decision{Mode: Warning, Reasons: []string{fmt.Sprintf(
			"the ledger could not be checked %d times in a row (%s)", failed, cause)}}
	}
	return Decision{Mode: Unknown, Reasons: []string{fmt.Sprintf(
		"the ledger could not be checked (%d of %d failed checks in a row before escalating: %s)", failed, after, cause)}}
}

func first(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + ", …"
}

// Escalates says whether a failed check's decision d raises the economy
// from last, the mode the recorded checks last left it in: only warning
// over a milder mode. The graded modes are set by the monitor after a
// completed check (so the records know them) and the ledger never lifts a
// freeze, so warning never lowers anything.
func Escalates(last string, d Decision) bool {
	return d.Mode == Warning && rank[last] < rank[Warning]
}

// Apply says which mode to ask the ledger for, given the mode in force: the
// monitor never lifts a freeze (an administrator unfreezes after looking),
// and otherwise sets its decision, up or down. ok is false when nothing
// needs to change.
func Apply(current string, d Decision) (mode string, ok bool) {
	if current == Frozen || current == d.Mode {
		return current, false
	}
	return d.Mode, true
}

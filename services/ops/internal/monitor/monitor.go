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

// Decide grades a check. Each finding raises the mode to at least its own
// level, so the worst finding decides:
//
//   - an integrity finding of the ledger's (its log, journal, balances or
//     supply disagree with what it signed) → the mode the ledger gives it:
//     read_only for the record alone, frozen where money may have left;
//     the ledger holds the economy there itself until an administrator's
//     repair, and the monitor's decision says the same;
//   - the audit chain is broken (a walk found it, and the ledger has not
//     recorded it yet) → read_only: no movement may add to a record that
//     can no longer be trusted;
//   - cached balances disagree with the journal → read_only: no movement
//     may build on a balance that is wrong;
//   - the oracle breaker is open → minting_paused: minting at a rate that
//     is frozen at its last good value could issue CC the treasury does not
//     back once the real rate is known; stakes and withdrawals go on;
//   - CC is outstanding and the reserve ratio is below 1.0 (the rate moved
//     against the treasury) → warning: the ledger already refuses every
//     movement that would lower it further (the backing invariant), and
//     deposits that restore it stay open, so the monitor warns rather than
//     blocks. (A healthy economy sits just above 1.0: the spread is all the
//     surplus deposits leave, so no "thin reserve" threshold is drawn.)
//   - the audit sequencer is behind: movements' audit entries have waited
//     more than SequencerLate → warning, more than SequencerStalled →
//     read_only. The sequencer integrates them within a fraction of a
//     second; one that stopped (it refuses to extend a log someone
//     rewrote) leaves movements that no checkpoint covers, and no
//     verification sees, so they must stop piling up;
//   - the ledger's scrubber is behind → warning: old records are not
//     re-checked at the promised rate, which the ledger cannot vouch for;
//   - the economy is frozen → frozen: a signer's freeze, or a finding's,
//     which only an administrator lifts; the decision never says normal
//     beside it.
func Decide(c Check) Decision {
	d := Decision{Mode: Normal, Score: 100}
	raise := func(mode string, penalty int, reason string) {
		if rank[mode] > rank[d.Mode] {
			d.Mode = mode
		}
		d.Score -= penalty
		d.Reasons = append(d.Reasons, reason)
	}
	for _, f := range c.Findings {
		raise(f.Mode, 60, "integrity: "+f.Reason)
	}
	if !c.ChainValid && len(c.Findings) == 0 {
		raise(ReadOnly, 60, fmt.Sprintf("audit chain broken at seq %d (%s)", c.FirstDivergent, c.ChainReason))
	}
	if len(c.Mismatched) > 0 && len(c.Findings) == 0 {
		raise(ReadOnly, 40, fmt.Sprintf("%d cached balances differ from the journal (%s)", len(c.Mismatched), first(c.Mismatched, 3)))
	}
	if c.BreakerTripped {
		raise(MintingPaused, 20, "the oracle circuit breaker is open")
	}
	if c.OutstandingCC > 0 && c.ReserveRatio < 1 {
		raise(Warning, 30, fmt.Sprintf("reserve ratio %.4f is below 1.0", c.ReserveRatio))
	}
	switch late := fmt.Sprintf("the audit sequencer is behind: %d entries wait, the oldest for %.0f s", c.Unsequenced, c.UnsequencedAge); {
	case c.UnsequencedAge > SequencerStalled.Seconds():
		raise(ReadOnly, 40, late)
	case c.UnsequencedAge > SequencerLate.Seconds():
		raise(Warning, 20, late)
	}
	if c.ScrubLate != "" {
		raise(Warning, 20, c.ScrubLate)
	}
	if c.Mode == Frozen {
		raise(Frozen, 40, "the economy is frozen: an administrator unfreezes it")
	}
	d.Score = max(d.Score, 0)
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

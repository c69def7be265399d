// Package monitor is the economy monitor. Its judgement (Decide, Apply) is
// pure: from the ledger's check of itself (reserve ratio, audit chain,
// balances against the journal, the oracle breaker) it decides the
// graduated response. Its Runner does the I/O: on the one replica that
// holds the lease it asks the ledger for a check every interval, records
// it, and asks the ledger to apply the decision.
package monitor

import (
	"fmt"
	"strings"
)

// The modes, mildest first (the ledger's names).
const (
	Normal        = "normal"
	Warning       = "warning"
	MintingPaused = "minting_paused"
	ReadOnly      = "read_only"
	Frozen        = "frozen"
)

var rank = map[string]int{Normal: 0, Warning: 1, MintingPaused: 2, ReadOnly: 3, Frozen: 4}

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
	// Mode is the economy's mode when the check ran.
	Mode string
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
//   - the audit chain is broken → frozen: the record of every movement can
//     no longer be trusted; a person must repair the chain and unfreeze;
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
func Decide(c Check) Decision {
	d := Decision{Mode: Normal, Score: 100}
	raise := func(mode string, penalty int, reason string) {
		if rank[mode] > rank[d.Mode] {
			d.Mode = mode
		}
		d.Score -= penalty
		d.Reasons = append(d.Reasons, reason)
	}
	if !c.ChainValid {
		raise(Frozen, 60, fmt.Sprintf("audit chain broken at seq %d (%s)", c.FirstDivergent, c.ChainReason))
	}
	if len(c.Mismatched) > 0 {
		raise(ReadOnly, 40, fmt.Sprintf("%d cached balances differ from the journal (%s)", len(c.Mismatched), first(c.Mismatched, 3)))
	}
	if c.BreakerTripped {
		raise(MintingPaused, 20, "the oracle circuit breaker is open")
	}
	if c.OutstandingCC > 0 && c.ReserveRatio < 1 {
		raise(Warning, 30, fmt.Sprintf("reserve ratio %.4f is below 1.0", c.ReserveRatio))
	}
	d.Score = max(d.Score, 0)
	return d
}

func first(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return strings.Join(xs[:n], ", ") + ", …"
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

package usecase

import (
	"context"
	"fmt"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Coherence is the ledger's own check of itself for the monitor.
type Coherence struct {
	Supply Supply
	Chain  audit.Result
	// Log is the verification the chain's verdict comes from (incremental,
	// against the latest signed checkpoint).
	Log Verification
	// Backlog is what the sequencer has yet to integrate.
	Backlog Backlog
	// Mismatched lists accounts whose cached balance differs from their journal.
	Mismatched []string
	// Unreconciled lists where the journal and the audit trail disagree
	// (at most maxUnreconciled of them): a movement the trail does not
	// record, or an audit entry that records no movement.
	Unreconciled []store.Discrepancy
}

// maxUnreconciled caps the discrepancies one check reports: the first
// few say what happened, and a tampered database could have millions.
const maxUnreconciled = 100

// Trail is the audit trail's verdict as the coherence check reports it:
// the chain's verification, failed at the first discrepancy when the chain
// verifies but the journal and the trail disagree. A trail that lost a
// movement's entries (deleted, with the head rewound) still chains, so
// only this reconciliation sees it; it is as grave as a break, because
// the trail no longer records every movement, and is reported as one.
func (c Coherence) Trail() audit.Result {
	if !c.Chain.OK || len(c.Unreconciled) == 0 {
		return c.Chain
	}
	r := c.Chain
	d := c.Unreconciled[0]
	r.OK, r.FirstDivergent = false, d.AuditSeq
	if r.FirstDivergent == 0 {
		// A journal entry no audit entry records has no seq of its own:
		// the trail is wrong from the first entry not yet verified.
		r.FirstDivergent = r.LastVerified + 1
	}
	r.Reason = "the journal and the audit trail disagree: " + d.Problem
	if n := len(c.Unreconciled) - 1; n > 0 {
		r.Reason += fmt.Sprintf(" (and %d more)", n)
	}
	return r
}

// CheckCoherence verifies the chain and the balances against the journal
// and reports the supply.
func (a *App) CheckCoherence(ctx context.Context) (Coherence, error) {
	s, err := a.Supply(ctx)
	if err != nil {
		return Coherence{}, err
	}
	// The backlog before the log: when it is empty, the checkpoint read
	// after it covers every movement that committed before the check.
	backlog, err := a.AuditBacklog(ctx)
	if err != nil {
		return Coherence{}, err
	}
	ver, err := a.VerifyAudit(ctx, false)
	if err != nil {
		return Coherence{}, err
	}
	mis, err := a.read().Credit.JournalMismatches(ctx)
	if err != nil {
		return Coherence{}, err
	}
	un, err := a.read().Credit.Unreconciled(ctx, maxUnreconciled)
	if err != nil {
		return Coherence{}, err
	}
	return Coherence{Supply: s, Chain: ver.Result, Log: ver, Backlog: backlog, Mismatched: mis, Unreconciled: un}, nil
}

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
	if !c.Chain.OK {
		return c.Chain
	}
	if len(c.Unreconciled) == 0 {
		if seq, reason := c.Log.Divergent(); reason != "" {
			r := c.Chain
			r.OK, r.FirstDivergent, r.Reason = false, seq, reason
			return r
		}
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
	began := a.now()
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
	if un, err = a.unreconciled(ctx, un); err != nil {
		return Coherence{}, err
	}
	// What this check found beyond the walk is recorded like every other
	// finding, and the answer carries the findings as they are now.
	var found []store.Finding
	for _, acct := range mis {
		found = append(found, balanceFinding(acct, fmt.Sprintf("account %s: its cached balance or a line's owner differs from its journal lines", acct)))
	}
	for _, d := range un {
		found = append(found, journalFinding(d.EntryID, d.AuditSeq, "the journal and the audit trail disagree: "+d.Problem))
	}
	if err := a.report(ctx, "coherence", began, found...); err != nil {
		return Coherence{}, err
	}
	if len(found) > 0 {
		if ver.Findings, err = a.OpenFindings(ctx); err != nil {
			return Coherence{}, err
		}
	}
	if len(found) > 0 {
		// The report may have moved the mode.
		if s, err = a.Supply(ctx); err != nil {
			return Coherence{}, err
		}
	}
	return Coherence{Supply: s, Chain: ver.Result, Log: ver, Backlog: backlog, Mismatched: mis, Unreconciled: un}, nil
}

// unreconciled keeps the discrepancies no repair settled (settled.go).
func (a *App) unreconciled(ctx context.Context, found []store.Discrepancy) ([]store.Discrepancy, error) {
	if len(found) == 0 {
		return found, nil
	}
	r := a.read()
	s, err := a.settledPlaces(ctx, r)
	if err != nil {
		return nil, err
	}
	problems := make([]linkProblem, 0, len(found))
	for _, d := range found {
		if d.EntryID != "" {
			problems = append(problems, linkProblem{entryID: d.EntryID, seq: d.AuditSeq, detail: d.Problem})
		}
	}
	left, err := a.unsettled(ctx, r, s, problems)
	if err != nil {
		return nil, err
	}
	kept := map[string]bool{}
	for _, p := range left {
		kept[p.entryID] = true
	}
	out := []store.Discrepancy{}
	for _, d := range found {
		if d.EntryID == "" || kept[d.EntryID] {
			out = append(out, d)
		}
	}
	return out, nil
}

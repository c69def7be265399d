package usecase

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

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

// DefaultCoherenceSlice is how many journal entries and audit entries
// one coherence check reconciles of each, at most.
const DefaultCoherenceSlice = 10_000

// coherenceMargin is how far behind the newest journal entries the
// check's place stays: a movement takes its time before it commits, so
// an entry dated just before the place may not be visible yet; one that
// commits later than this after its time is the scrubber's to check.
const coherenceMargin = 10 * time.Second

// CheckCoherence is the monitor's look at the ledger, every interval: the
// supply, the audit log verified from its last signed checkpoint, and
// the journal reconciled with the audit trail over what was written since
// the last check (at most CoherenceSlice of each a check; the place is
// kept in coherence_place). Whole history is the integrity scrubber's, a
// paced slice at a time: it re-checks every journal entry, audit entry
// and balance each cycle. What any check found and no repair resolved is
// reported every time, so the answer's Mismatched are the accounts of
// open balance findings and its Unreconciled the reconciliation's
// discrepancies with the open journal findings. The check used to sum
// every journal line and join every entry with the trail each interval:
// 21.6 s at 10^6 rows, past the monitor's timeout.
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
	found, place, next, err := a.reconcileSince(ctx, began)
	if err != nil {
		return Coherence{}, err
	}
	var findings []store.Finding
	for _, d := range found {
		findings = append(findings, journalFinding(d.EntryID, d.AuditSeq, unreconciledPrefix+d.Problem))
	}
	if err := a.report(ctx, "coherence", began, findings...); err != nil {
		return Coherence{}, err
	}
	// An idle ledger's checks (and the public status route's) write
	// nothing: the place is saved only when it moved.
	if next.JournalAfter != place.JournalAfter || next.LogAfter != place.LogAfter {
		if err := a.tx(ctx, func(r Repos) error { return r.Integrity.SaveCoherencePlace(ctx, next) }); err != nil {
			return Coherence{}, err
		}
	}
	open, err := a.OpenFindings(ctx)
	if err != nil {
		return Coherence{}, err
	}
	mis, un := openDiscrepancies(open, found)
	if len(found) > 0 {
		ver.Findings = open
		// The report may have moved the mode.
		if s, err = a.Supply(ctx); err != nil {
			return Coherence{}, err
		}
	}
	return Coherence{Supply: s, Chain: ver.Result, Log: ver, Backlog: backlog, Mismatched: mis, Unreconciled: un}, nil
}

// unreconciledPrefix starts the detail of a finding of the coherence
// check's reconciliation.
const unreconciledPrefix = "the journal and the audit trail disagree: "

// reconcileSince reconciles the journal with the audit trail from where
// the last check left off: the journal entries after its place, each
// recorded by exactly one audit entry of its kind (unrecorded, the
// scrubber's rule), and the audit entries sequenced after its place,
// each naming a journal entry that exists. It returns what no repair
// settled, by seq (at most maxUnreconciled), the place it started from
// and the place to resume from: past what it read, but never past the
// journal entries of the last coherenceMargin before now.
func (a *App) reconcileSince(ctx context.Context, now time.Time) (found []store.Discrepancy, place, next store.CoherencePlace, err error) {
	r := a.read()
	if place, err = r.Integrity.CoherencePlace(ctx); err != nil {
		return nil, place, next, err
	}
	eco, err := r.Credit.Economy(ctx)
	if err != nil {
		return nil, place, next, err
	}
	links, err := r.Integrity.JournalLinks(ctx, place.JournalAfter, a.cfg.CoherenceSlice)
	if err != nil {
		return nil, place, next, err
	}
	next = store.CoherencePlace{JournalAfter: place.JournalAfter, LogAfter: place.LogAfter, UpdatedAt: now}
	settledBefore := now.Add(-coherenceMargin)
	for _, l := range links {
		if problem := unrecorded(l); problem != "" {
			seq := l.AuditSeq
			if l.LegacySeq > 0 {
				seq = l.LegacySeq
			}
			found = append(found, store.Discrepancy{AuditSeq: seq, EntryID: l.Key.ID, Problem: problem})
		}
		if !l.Key.CreatedAt.After(settledBefore) {
			next.JournalAfter = l.Key
		}
	}
	// Seqs are given in order by the one sequencer, so every entry up to
	// the head is there to read: the place moves to what was read.
	next.LogAfter = min(place.LogAfter+int64(a.cfg.CoherenceSlice), eco.AuditSeq)
	if next.LogAfter > place.LogAfter {
		logged, err := r.Integrity.UnreconciledLog(ctx, place.LogAfter, next.LogAfter, maxUnreconciled)
		if err != nil {
			return nil, place, next, err
		}
		found = append(found, logged...)
	}
	sort.SliceStable(found, func(i, j int) bool { return found[i].AuditSeq < found[j].AuditSeq })
	if len(found) > maxUnreconciled {
		found = found[:maxUnreconciled]
	}
	found, err = a.unreconciled(ctx, found)
	return found, place, next, err
}

// openDiscrepancies are what the coherence check answers of the open
// findings: the accounts of balance findings, and the discrepancies of
// this check (found) with those of the open journal findings it did not
// find again (an entry found in an earlier slice, or by the scrubber), by
// seq. A discrepancy stays in the answer until a repair resolves it.
func openDiscrepancies(open Findings, found []store.Discrepancy) ([]string, []store.Discrepancy) {
	mis := []string{}
	un := append([]store.Discrepancy{}, found...)
	seen := make(map[string]bool, len(found))
	for _, d := range found {
		seen[d.EntryID] = true
	}
	for _, f := range open.Open {
		switch f.Kind {
		case FindingBalance:
			mis = append(mis, f.Account)
		case FindingJournal:
			if !seen[f.EntryID] {
				seen[f.EntryID] = true
				un = append(un, store.Discrepancy{AuditSeq: f.Seq, EntryID: f.EntryID, Problem: strings.TrimPrefix(f.Detail, unreconciledPrefix)})
			}
		}
	}
	sort.Strings(mis)
	sort.SliceStable(un, func(i, j int) bool { return un[i].AuditSeq < un[j].AuditSeq })
	return mis, un
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

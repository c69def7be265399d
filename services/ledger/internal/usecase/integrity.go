package usecase

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// The kinds of integrity finding. Each holds the economy at a mode until
// an administrator's repair resolves it (findingModes): what is wrong
// with the record alone stops movements (read_only); what is wrong with
// the money itself — a journal, a balance or the supply that says other
// than the signed log — may already have paid out, so it freezes, and an
// administrator unfreezes after the repair.
const (
	// FindingLog: an audit entry, the chain, the tree or the scrubber's
	// state is not what the ledger wrote and signed.
	FindingLog = "log"
	// FindingCheckpoint: the latest checkpoint is signed by no key the
	// ledger trusts.
	FindingCheckpoint = "checkpoint"
	// FindingJournal: a journal entry disagrees with the audit entry that
	// records it, or is recorded by none, or a movement's audit entry
	// names a journal entry that is not there.
	FindingJournal = "journal"
	// FindingBalance: a cached balance is not the sum of its lines.
	FindingBalance = "balance"
	// FindingSupply: the CC outstanding is not what the issuance account
	// holds.
	FindingSupply = "supply"
)

// findingModes is the mode each kind of finding holds the economy at.
var findingModes = map[string]string{
	FindingLog:        ModeReadOnly,
	FindingCheckpoint: ModeReadOnly,
	FindingJournal:    ModeFrozen,
	FindingBalance:    ModeFrozen,
	FindingSupply:     ModeFrozen,
}

// maxFindings caps the findings a report lists: the first say what
// happened, and a tampered database could make millions.
const maxFindings = 100

// logFinding is a finding about the audit entry with seq.
func logFinding(seq int64, detail string) store.Finding {
	return store.Finding{Kind: FindingLog, Place: "log:seq:" + strconv.FormatInt(seq, 10), Seq: seq, Detail: detail}
}

// journalFinding is a finding about a journal entry (seq is the audit
// entry concerned, 0 for none).
func journalFinding(entryID string, seq int64, detail string) store.Finding {
	return store.Finding{Kind: FindingJournal, Place: "journal:entry:" + entryID, Seq: seq, EntryID: entryID, Detail: detail}
}

// balanceFinding is a finding about an account's balance.
func balanceFinding(account, detail string) store.Finding {
	return store.Finding{Kind: FindingBalance, Place: "balance:account:" + account, Account: account, Detail: detail}
}

// Findings are the open integrity findings.
type Findings struct {
	// Open are the oldest open findings, at most maxFindings.
	Open []store.Finding
	// Total counts every open finding.
	Total int
}

// Mode is the strictest mode an open finding holds the economy at
// (ModeNormal for none).
func (f Findings) Mode() string {
	mode := ModeNormal
	for _, x := range f.Open {
		if modeRank[x.Mode] > modeRank[mode] {
			mode = x.Mode
		}
	}
	return mode
}

// Summary says what is open, for a reason or a refusal ("" for nothing):
// the finding that names the lowest seq (FirstSeq), else the oldest.
func (f Findings) Summary() string {
	if len(f.Open) == 0 {
		return ""
	}
	lead := f.Open[0]
	for _, x := range f.Open {
		if x.Seq > 0 && x.Seq == f.FirstSeq() {
			lead = x
			break
		}
	}
	s := lead.Detail
	if f.Total > 1 {
		s += fmt.Sprintf(" (and %d more)", f.Total-1)
	}
	return s
}

// FirstSeq is the lowest seq an open finding names (0 for none).
func (f Findings) FirstSeq() int64 {
	var first int64
	for _, x := range f.Open {
		if x.Seq > 0 && (first == 0 || x.Seq < first) {
			first = x.Seq
		}
	}
	return first
}

// OpenFindings reads the open integrity findings.
func (a *App) OpenFindings(ctx context.Context) (Findings, error) {
	return a.openFindings(ctx, a.read())
}

func (a *App) openFindings(ctx context.Context, r Repos) (Findings, error) {
	open, total, err := r.Integrity.OpenFindings(ctx, maxFindings)
	if err != nil {
		return Findings{}, err
	}
	return Findings{Open: open, Total: total}, nil
}

// report records what a check found (by: scrubber, verification,
// sequencer, coherence) and moves the economy at once to the strictest
// mode a new finding calls for, with an incident for each: no movement
// waits for the monitor's next look to be refused. A place already open
// is not recorded again, and a look that finds nothing new writes
// nothing (the scrubber and the monitor find an unrepaired place on every
// pass). A freeze stays a freeze.
func (a *App) report(ctx context.Context, by string, began time.Time, found ...store.Finding) error {
	if len(found) == 0 {
		return nil
	}
	open, err := a.openFindings(ctx, a.read())
	if err != nil {
		return err
	}
	known := make(map[string]bool, len(open.Open))
	for _, f := range open.Open {
		known[f.Place] = true
	}
	var fresh []store.Finding
	for _, f := range found {
		// Past maxFindings open, what is already recorded holds the
		// economy, and repair mends every place whether recorded or not.
		if !known[f.Place] && open.Total+len(fresh) < maxFindings {
			known[f.Place] = true
			fresh = append(fresh, f)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	var added []store.Finding
	err = a.tx(ctx, func(r Repos) error {
		eco, err := a.lockModes(ctx, r)
		if err != nil {
			return err
		}
		// A repair that committed after the check began may have healed
		// what it saw (its reads are outside this transaction): what it
		// found is stale, and the next check looks again. The repair holds
		// the mode lock, so it is either seen here or waits for this.
		last, err := r.Integrity.LastResolved(ctx)
		if err != nil {
			return err
		}
		if last.After(began) {
			fresh = nil
			return nil
		}
		added, err = a.recordFindings(ctx, r, &eco, by, fresh)
		return err
	})
	if err == nil {
		for _, f := range added {
			a.integrityFound.WithLabelValues(f.Kind).Inc()
		}
	}
	return wrap("record integrity findings", err)
}

// recordFindings records findings in r's transaction, which holds the
// mode lock and the economy row (eco), with an incident each, and raises
// the mode to the strictest a new one calls for; it returns those it
// recorded (a place open already is not).
func (a *App) recordFindings(ctx context.Context, r Repos, eco *store.Economy, by string, fresh []store.Finding) ([]store.Finding, error) {
	now := a.now()
	mode := ModeNormal
	var added []store.Finding
	for _, f := range fresh {
		f.ID, f.FoundBy, f.FoundAt, f.Mode = a.cfg.NewID(), by, now, findingModes[f.Kind]
		ok, err := r.Integrity.InsertFinding(ctx, f)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue // found by another check meanwhile
		}
		added = append(added, f)
		if modeRank[f.Mode] > modeRank[mode] {
			mode = f.Mode
		}
		if err := r.Credit.InsertIncident(ctx, store.Incident{ID: a.cfg.NewID(), Kind: "integrity_" + f.Kind, Severity: "critical",
			Detail: f.Detail, Actor: by, CreatedAt: now}); err != nil {
			return nil, err
		}
	}
	if len(added) == 0 || modeRank[eco.Mode] >= modeRank[mode] {
		return added, nil
	}
	reason := "integrity: " + added[0].Detail
	if len(added) > 1 {
		reason += fmt.Sprintf(" (and %d more)", len(added)-1)
	}
	_, err := a.changeMode(ctx, r, eco, mode, reason, by, "integrity", nil)
	return added, err
}

// heldBy refuses what open findings forbid: an unfreeze, or the
// monitor's lowering of the mode below what they hold it at.
func heldBy(f Findings, what string) error {
	return fault.New(fault.Rejected, "%s: %d open integrity finding(s) hold the economy at %s (%s); "+
		"an administrator repairs first (POST /api/audit/repair)", what, f.Total, f.Mode(), strings.TrimSpace(f.Summary()))
}

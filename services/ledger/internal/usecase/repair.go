package usecase

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Repair is what a repair did.
type Repair struct {
	// Found is what the first walk found.
	Found    audit.Result
	Repaired bool
	// Seq is the first repair entry's seq and Break its break (0 and
	// zero when no break was recorded).
	Seq   int64
	Break audit.Break
	// Breaks are every break recorded, in order.
	Breaks []audit.Break
	// Restored are the missing entries re-appended from the journal (the
	// seqs they restore); Lost those the journal lost too.
	Restored []int64
	Lost     []int64
	// Correction is the correcting journal entry ("" for none), and
	// Corrected the journal entries it mended.
	Correction string
	Corrected  []string
	// Balances are the accounts whose cached balance was restored to the
	// sum of their lines; Supply is set when the CC outstanding was.
	Balances []string
	Supply   bool
	// Resolved counts the integrity findings the repair closed; Open is
	// what is still open (what it could not heal).
	Resolved int
	Open     Findings
	// Mode is the economy's mode afterwards.
	Mode string
}

// maxRepairBreaks bounds the breaks one repair records: past it, the
// repair is run again.
const maxRepairBreaks = 100

// repairActors are the checks whose read_only a repair that healed
// everything lowers again: the mode was theirs, and what held it is gone.
var repairActors = []string{"scrubber", "verification", "coherence", "sequencer"}

// RepairAudit heals what the checks find, append-only, in one transaction
// that holds the economy (no movement meanwhile):
//
//   - the chain: each break (an edited, missing or unsigned entry) is
//     recorded by a repair entry that accepts exactly those rows as they
//     are (audit.PlanBreak), as many as there are;
//   - the journal against the log, whose signed content is the truth: a
//     missing audit entry is re-appended from its journal entry (a
//     restored entry, which keeps the movement's kind and says what it
//     restores), or, where the journal lost it too, recorded as lost; a
//     journal entry the log does not record as it is (edited, forged,
//     deleted) is mended by one correcting journal entry, itself logged,
//     that restores every balance the log recorded (the CC an edit minted
//     disappears) and names each entry it mends with its digest;
//   - the cached balances, restored to the sum of their lines, and the CC
//     outstanding to what the issuance account holds, each recorded.
//
// Then it checks everything again; when all is sound it resolves the open
// findings and lowers a read_only the checks set to normal (a freeze stays
// for an administrator's unfreeze). What it cannot heal — a tree that no
// longer hashes to a root the ledger signed, a correction that would take
// a balance below zero because the CC has left — stays open, and the
// answer says so.
func (a *App) RepairAudit(ctx context.Context, actor string) (Repair, error) {
	var out Repair
	err := a.tx(ctx, func(r Repos) error {
		out = Repair{}
		eco, err := a.lockModes(ctx, r)
		if err != nil {
			return err
		}
		if err := a.restoreHead(ctx, r, &eco, actor); err != nil {
			return err
		}
		// Everything queued is sequenced first, so the walk sees every
		// movement that committed.
		if err := a.appendNow(ctx, r, &eco); err != nil {
			return refuseRepair(err)
		}
		if err := a.recordBreaks(ctx, r, &eco, actor, &out); err != nil {
			return err
		}
		ex, err := a.examine(ctx, r, eco.AuditSeq)
		if err != nil {
			return err
		}
		if err := a.mend(ctx, r, &eco, actor, ex, &out); err != nil {
			return err
		}
		// Everything again, as the scrubber will see it.
		after, err := a.examine(ctx, r, eco.AuditSeq)
		if err != nil {
			return err
		}
		if after.sound() {
			if out.Resolved, err = r.Integrity.ResolveFindings(ctx, a.now(), actor); err != nil {
				return err
			}
			if eco.Mode == ModeReadOnly && slices.Contains(repairActors, eco.ModeActor) {
				if _, err := a.changeMode(ctx, r, &eco, ModeNormal, "repaired: the audit log, the journal and the balances agree",
					actor, "repair", nil); err != nil {
					return err
				}
			}
			// The scrubber starts a cycle afresh over the mended log, and
			// incremental verification from the latest checkpoint, which
			// the walk just verified whole (where it stopped before may be
			// a chain hash the damage replaced).
			if err := a.restartScrub(ctx, r); err != nil {
				return err
			}
			if len(out.Breaks) == 0 {
				// Nothing in the chain changed: where incremental
				// verification stopped still holds.
			} else if latest, err := r.Audit.Checkpoint(ctx, checkpointLatest); err == nil {
				latest.Note, latest.At = "", a.now()
				if err := r.Audit.SaveCheckpoint(ctx, checkpointVerified, latest); err != nil {
					return err
				}
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if out.Open, err = a.openFindings(ctx, r); err != nil {
			return err
		}
		if !after.sound() && out.Open.Total == 0 {
			// What is still wrong is recorded, so it holds the economy.
			if _, err := a.recordFindings(ctx, r, &eco, actor, after.findings()); err != nil {
				return err
			}
			if out.Open, err = a.openFindings(ctx, r); err != nil {
				return err
			}
		}
		out.Mode = eco.Mode
		out.Repaired = len(out.Breaks) > 0 || len(out.Restored) > 0 || len(out.Lost) > 0 || out.Correction != "" ||
			len(out.Balances) > 0 || out.Supply || out.Resolved > 0
		return nil
	})
	return out, err
}

// restoreHead moves a chain's head that was moved back behind the latest
// checkpoint the ledger signed (entries deleted and the head rewound, so
// that the chain still links) forward to that checkpoint's last entry:
// the signed tree says how long the log is, and the entries missing
// before it are then a break like any other, restored from the journal
// where it can. A checkpoint the ledger did not sign moves nothing.
func (a *App) restoreHead(ctx context.Context, r Repos, eco *store.Economy, actor string) error {
	latest, err := r.Audit.Checkpoint(ctx, checkpointLatest)
	if errors.Is(err, store.ErrNotFound) || (err == nil && latest.Size <= eco.AuditSeq+1) {
		return nil
	}
	if err != nil {
		return err
	}
	if f, err := a.trustCheckpoint(ctx, r, latest); err != nil {
		return err
	} else if f != nil {
		return nil // openLog refuses it below, with the reason
	}
	from := eco.AuditSeq
	eco.AuditSeq, eco.AuditHead = latest.Size-1, latest.Chain
	if err := r.Credit.SaveEconomy(ctx, *eco); err != nil {
		return err
	}
	return r.Credit.InsertIncident(ctx, store.Incident{ID: a.cfg.NewID(), Kind: "audit_repair", Severity: "critical",
		Detail: fmt.Sprintf("the audit chain's head was at seq %d, behind the signed checkpoint's seq %d: entries were deleted "+
			"and the head moved back; the head is the checkpoint's again", from, eco.AuditSeq),
		Actor: actor, CreatedAt: a.now()})
}

// refuseRepair says why a log that refuses to grow cannot be repaired.
func refuseRepair(err error) error {
	if errors.Is(err, ErrRetiredKey) {
		return fault.New(fault.Conflict, "the audit log cannot be repaired by this ledger: %v", err)
	}
	if errors.Is(err, ErrLogTampered) || errors.Is(err, ErrLogRewound) {
		return fault.New(fault.Conflict, "the audit log cannot be repaired here: %v; what the ledger signed can no longer be "+
			"rebuilt from what is stored: restore the ledger's audit tables from a backup", err)
	}
	return err
}

// recordBreaks records each break of the chain with a repair entry, until
// the walk checks out (at most maxRepairBreaks).
func (a *App) recordBreaks(ctx context.Context, r Repos, eco *store.Economy, actor string, out *Repair) error {
	for i := 0; i < maxRepairBreaks; i++ {
		found, v, err := a.walkAll(ctx, r, eco.AuditSeq, nil)
		if err != nil {
			return err
		}
		if i == 0 {
			out.Found = found
		}
		if found.OK {
			return nil
		}
		b, err := a.planRepair(ctx, r, eco, found, v)
		if err != nil {
			return err
		}
		if err := a.appendNow(ctx, r, eco, audit.RepairEntry(0, a.now(), actor, found, b)); err != nil {
			return refuseRepair(err)
		}
		b.RepairSeq, b.Reason, b.LastVerified, b.FirstDivergent = eco.AuditSeq, found.Reason, found.LastVerified, found.FirstDivergent
		if err := r.Credit.InsertIncident(ctx, store.Incident{ID: a.cfg.NewID(), Kind: "audit_repair", Severity: "critical",
			Detail: fmt.Sprintf("audit chain broken after seq %d at seq %d (%s); repair entry %d accepts seq %d to %d",
				found.LastVerified, found.FirstDivergent, found.Reason, eco.AuditSeq, b.From, b.To),
			Actor: actor, CreatedAt: a.now()}); err != nil {
			return err
		}
		if len(out.Breaks) == 0 {
			out.Seq, out.Break = b.RepairSeq, b
		}
		out.Breaks = append(out.Breaks, b)
	}
	return nil
}

// walkAll walks the whole log: against the tree and the latest signed
// checkpoint when there is one (every leaf recomputed, the root rebuilt),
// the chain alone before the first.
func (a *App) walkAll(ctx context.Context, r Repos, head int64, visit visitor) (audit.Result, *audit.Verifier, error) {
	breaks, err := a.breaks(ctx, r, head)
	if err != nil {
		return audit.Result{}, nil, err
	}
	latest, err := r.Audit.Checkpoint(ctx, checkpointLatest)
	if errors.Is(err, store.ErrNotFound) {
		return a.walk(ctx, r, breaks, 1, audit.Genesis, head, nil, visit)
	}
	if err != nil {
		return audit.Result{}, nil, err
	}
	fail := func(seq int64, reason string) audit.Result {
		return audit.Result{FirstDivergent: seq, LastVerified: max(seq-1, 0), Reason: reason}
	}
	genesis, err := r.Audit.TreeHashes(ctx, []int64{0})
	if err != nil || genesis[0] != audit.LeafHash(audit.GenesisRecord) {
		return fail(0, "the tree's first record is not the log's genesis record"), nil, nil //nolint:nilerr // a finding
	}
	var frontier audit.Frontier
	frontier.Append(tlog.Hash(genesis[0]))
	res, v, err := a.walk(ctx, r, breaks, 1, audit.Genesis, min(latest.Size-1, head), &frontier, visit)
	if err != nil || !res.OK {
		return res, v, err
	}
	if audit.Hash(frontier.Root()) != latest.Root {
		return fail(1, "the stored tree does not hash to the signed checkpoint's root"), v, nil
	}
	return res, v, nil
}

// planRepair is the break that records the walk's first divergence; a
// Conflict for what no break can record (the tree no longer what the
// ledger signed).
func (a *App) planRepair(ctx context.Context, r Repos, eco *store.Economy, found audit.Result, v *audit.Verifier) (audit.Break, error) {
	if d, ok := divergence(v); ok {
		// What the entry after the one found chains to decides where the
		// rest of the chain resumes (audit.PlanBreak).
		nextPrev := eco.AuditHead
		if d.Found != nil && d.Found.Entry.Seq < eco.AuditSeq {
			next, err := r.Audit.Range(ctx, d.Found.Entry.Seq, 1)
			if err != nil {
				return audit.Break{}, err
			}
			if len(next) == 1 && next[0].Entry.Seq <= eco.AuditSeq {
				nextPrev = next[0].PrevHash
			}
		}
		return audit.PlanBreak(d, nextPrev, eco.AuditSeq, eco.AuditHead), nil
	}
	if found.Reason == LeafMismatch {
		// The entry and the chain after it were rewritten consistently:
		// the chain goes on from its stored hash, the leaf stays the
		// signed one.
		recs, err := r.Audit.Range(ctx, found.FirstDivergent-1, 1)
		if err != nil {
			return audit.Break{}, err
		}
		if len(recs) == 1 && recs[0].Entry.Seq == found.FirstDivergent {
			rec := recs[0]
			return audit.Break{From: rec.Entry.Seq, To: rec.Entry.Seq, Resume: rec.Hash, Digest: audit.Digest(rec)}, nil
		}
	}
	return audit.Break{}, fault.New(fault.Conflict, "the audit log cannot be repaired here: %s (seq %d); what the ledger signed "+
		"can no longer be rebuilt from what is stored: restore the ledger's audit tables from a backup", found.Reason, found.FirstDivergent)
}

// divergence is v's first divergence (false for none, or no walk).
func divergence(v *audit.Verifier) (audit.Divergence, bool) {
	if v == nil {
		return audit.Divergence{}, false
	}
	return v.Divergence()
}

// examination is everything the journal, the balances and the supply
// disagree with the log about, as one pass over all of them found it.
type examination struct {
	walk audit.Result
	// dev is, by account name, what the journal's lines hold beyond what
	// the log recorded; mended the journal entries behind it, each with
	// the digest of its movement as found.
	dev    map[string]int64
	mended map[string]string
	// gaps are the seqs missing from the chain (in recorded breaks) that
	// no restored or lost entry accounts for, each with the window of
	// time its entry was written in.
	gaps []gap
	// orphans are the journal entries no audit entry records.
	orphans []orphan
	// links are the other link problems no repair settled.
	links []linkProblem
	// balances are the accounts whose cached balance is not the sum of
	// their lines.
	balances []store.AccountSum
	// outstanding and issuance are the supply, when they disagree.
	outstanding, issuance money.Micros
	// first are the first few problems, in words, for a finding.
	first []store.Finding
}

type gap struct {
	seq      int64
	from, to time.Time
}

type orphan struct {
	id string
	at time.Time
	m  audit.Movement
}

func (ex examination) sound() bool {
	return ex.walk.OK && len(ex.dev) == 0 && len(ex.gaps) == 0 && len(ex.orphans) == 0 && len(ex.links) == 0 &&
		len(ex.balances) == 0 && ex.outstanding == -ex.issuance
}

// findings are what the examination found, as findings.
func (ex examination) findings() []store.Finding {
	out := slices.Clone(ex.first)
	if !ex.walk.OK {
		out = append(out, logFinding(ex.walk.FirstDivergent, fmt.Sprintf("audit entry %d: %s", ex.walk.FirstDivergent, ex.walk.Reason)))
	}
	return out
}

// examine compares the whole journal, every balance and the supply with
// the log (the repair's pass; the scrubber makes the same comparisons a
// slice at a time).
func (a *App) examine(ctx context.Context, r Repos, head int64) (examination, error) {
	ex := examination{dev: map[string]int64{}, mended: map[string]string{}}
	s, err := a.settledPlaces(ctx, r)
	if err != nil {
		return ex, err
	}
	handled := map[int64]bool{}
	var (
		page    []loggedMovement
		pageErr error
	)
	flush := func() {
		if pageErr != nil || len(page) == 0 {
			return
		}
		pageErr = a.compareForRepair(ctx, r, s, page, &ex)
		page = page[:0]
	}
	ex.walk, _, err = a.walkAll(ctx, r, head, func(rec audit.Record, leaf audit.Hash, skipped bool) {
		content, trusted := rec.Entry, true
		if skipped {
			content, trusted = signedContent(rec, leaf)
		}
		if !trusted {
			return
		}
		switch {
		case credit.IsMovement(credit.Kind(content.Kind)):
			page = append(page, loggedMovement{seq: rec.Entry.Seq, m: audit.Recorded(content)})
			if n, err := strconv.ParseInt(content.Attrs[restoresAttr], 10, 64); err == nil {
				handled[n] = true
			}
		case content.Kind == KindLost:
			if n, err := strconv.ParseInt(content.Attrs[restoresAttr], 10, 64); err == nil {
				handled[n] = true
			}
		}
		if len(page) >= auditPage {
			flush()
		}
	})
	flush()
	if err != nil {
		return ex, err
	}
	if pageErr != nil {
		return ex, pageErr
	}
	// The missing rows the recorded breaks accepted: each entry either
	// restored, lost, or still to account for.
	for _, b := range s.breaks {
		if b.Digest != audit.Digest() {
			continue
		}
		for seq := b.From; seq <= b.To; seq++ {
			if handled[seq] {
				continue
			}
			g, err := a.gapWindow(ctx, r, seq)
			if err != nil {
				return ex, err
			}
			ex.gaps = append(ex.gaps, g)
		}
	}
	// The journal's side, every entry.
	var after store.JournalKey
	for {
		links, err := r.Integrity.JournalLinks(ctx, after, auditPage)
		if err != nil {
			return ex, err
		}
		var problems []linkProblem
		at := map[string]time.Time{}
		for _, l := range links {
			if p := unrecorded(l); p != "" {
				problems = append(problems, linkProblem{entryID: l.Key.ID, seq: l.AuditSeq, detail: p})
				at[l.Key.ID] = l.Key.CreatedAt
				if l.AuditSeq == 0 && l.QueuedKind == "" {
					problems[len(problems)-1].seq = -1 // recorded by nothing: an orphan
				}
			}
			after = l.Key
		}
		if problems, err = a.unsettled(ctx, r, s, problems); err != nil {
			return ex, err
		}
		var ids []string
		for _, p := range problems {
			if p.seq < 0 {
				ids = append(ids, p.entryID)
			} else {
				ex.links = append(ex.links, p)
				ex.first = appendFirst(ex.first, journalFinding(p.entryID, p.seq, p.detail))
			}
		}
		if len(ids) > 0 {
			journal, err := r.Integrity.JournalMovements(ctx, ids)
			if err != nil {
				return ex, err
			}
			for _, id := range ids {
				ex.orphans = append(ex.orphans, orphan{id: id, at: at[id], m: journal[id]})
			}
		}
		if len(links) < auditPage {
			break
		}
	}
	// The balances and the supply.
	account := ""
	for {
		sums, err := r.Integrity.AccountSums(ctx, account, auditPage)
		if err != nil {
			return ex, err
		}
		for _, s := range sums {
			if s.Balance != s.Lines {
				ex.balances = append(ex.balances, s)
			}
			account = s.Account
		}
		if len(sums) < auditPage {
			break
		}
	}
	ex.outstanding, ex.issuance, err = r.Integrity.Supply(ctx)
	return ex, err
}

// compareForRepair compares a page of logged movements with the journal,
// adding what the journal holds beyond the log to ex.
func (a *App) compareForRepair(ctx context.Context, r Repos, s settled, page []loggedMovement, ex *examination) error {
	ids := make([]string, len(page))
	for i, l := range page {
		ids[i] = l.m.EntryID
	}
	journal, err := r.Integrity.JournalMovements(ctx, ids)
	if err != nil {
		return err
	}
	for _, l := range page {
		j, ok := journal[l.m.EntryID]
		switch {
		case !ok && !s.accepts(l.m.EntryID, nil):
			for acct, d := range l.m.Lines {
				ex.dev[acct] -= d
			}
			ex.mended[l.m.EntryID] = audit.Movement{}.Digest()
		case ok && len(l.m.Differences(j)) > 0 && !s.accepts(l.m.EntryID, &j):
			for acct, d := range j.Lines {
				ex.dev[acct] += d
			}
			for acct, d := range l.m.Lines {
				ex.dev[acct] -= d
			}
			ex.mended[l.m.EntryID] = j.Digest()
		default:
			continue
		}
		ex.first = appendFirst(ex.first, journalFinding(l.m.EntryID, l.seq,
			fmt.Sprintf("journal entry %s is not what audit entry %d records", l.m.EntryID, l.seq)))
	}
	for acct, d := range ex.dev {
		if d == 0 {
			delete(ex.dev, acct)
		}
	}
	return nil
}

// appendFirst keeps the first maxFindings findings.
func appendFirst(fs []store.Finding, f store.Finding) []store.Finding {
	if len(fs) >= maxFindings {
		return fs
	}
	return append(fs, f)
}

// gapWindow is when the entry missing at seq was written: after the
// entry before it and before the one after it (or now, for a tail).
func (a *App) gapWindow(ctx context.Context, r Repos, seq int64) (gap, error) {
	g := gap{seq: seq, to: a.now()}
	if seq > 1 {
		prev, err := r.Audit.Range(ctx, seq-2, 1)
		if err != nil {
			return g, err
		}
		if len(prev) == 1 && prev[0].Entry.Seq == seq-1 {
			g.from = prev[0].Entry.At
		}
	}
	next, err := r.Audit.Range(ctx, seq, 1)
	if err != nil {
		return g, err
	}
	if len(next) == 1 {
		g.to = next[0].Entry.At
	}
	return g, nil
}

// The attributes and kinds of a repair's entries.
const (
	// restoresAttr names the seq a restored or lost entry stands for.
	restoresAttr = "restores"
	// KindLost is the entry that records a missing entry the journal
	// cannot restore either.
	KindLost = "lost"
	// KindMended names journal entries a repair accepts as they are,
	// whose edits moved no balance.
	KindMended = "mended"
	// KindBalanceRestored and KindSupplyRestored record a cached balance
	// and the CC outstanding set back to what the journal holds.
	KindBalanceRestored = "balance_restored"
	KindSupplyRestored  = "supply_restored"
)

// mend heals what ex found, appending every record of it to the log.
func (a *App) mend(ctx context.Context, r Repos, eco *store.Economy, actor string, ex examination, out *Repair) error {
	now := a.now()
	var entries []store.Queued
	// Each missing entry takes the earliest orphan written in its
	// window; an orphan no missing entry explains is a movement the log
	// never recorded (forged), mended with the rest.
	slices.SortFunc(ex.orphans, func(x, y orphan) int { return x.at.Compare(y.at) })
	used := map[string]bool{}
	for _, g := range ex.gaps {
		i := slices.IndexFunc(ex.orphans, func(o orphan) bool {
			return !used[o.id] && !o.at.Before(g.from) && !o.at.After(g.to)
		})
		if i < 0 {
			entries = append(entries, store.Queued{Entry: audit.Entry{Kind: KindLost, At: now, Actor: actor, Subject: "audit",
				Attrs: map[string]string{restoresAttr: strconv.FormatInt(g.seq, 10), "reason": "the audit entry and its journal entry are both missing"}}})
			out.Lost = append(out.Lost, g.seq)
			continue
		}
		o := ex.orphans[i]
		used[o.id] = true
		attrs := map[string]string{"entry_id": o.id, "unit": "micro_cc", restoresAttr: strconv.FormatInt(g.seq, 10),
			"restored_at": o.at.UTC().Format(time.RFC3339Nano)}
		if o.m.Idea != "" {
			attrs["idea_id"] = o.m.Idea
		}
		for acct, d := range o.m.Lines {
			attrs[audit.LineAttr(acct)] = strconv.FormatInt(d, 10)
		}
		entries = append(entries, store.Queued{EntryID: o.id, Entry: audit.Entry{Kind: o.m.Kind, At: now, Actor: actor,
			Subject: o.m.Contributor, Amount: o.m.Amount, Attrs: attrs}})
		out.Restored = append(out.Restored, g.seq)
	}
	for _, o := range ex.orphans {
		if used[o.id] {
			continue
		}
		for acct, d := range o.m.Lines {
			ex.dev[acct] += d
		}
		ex.mended[o.id] = o.m.Digest()
	}
	for acct, d := range ex.dev {
		if d == 0 {
			delete(ex.dev, acct)
		}
	}
	if len(ex.mended) > 0 || len(ex.dev) > 0 {
		id, noted, err := a.correct(ctx, r, actor, ex)
		if err != nil {
			return err
		}
		entries = append(entries, noted...)
		out.Correction = id
		out.Corrected = slices.Sorted(maps.Keys(ex.mended))
	}
	// The cached balances, as the journal now holds them.
	account := ""
	for {
		sums, err := r.Integrity.AccountSums(ctx, account, auditPage)
		if err != nil {
			return err
		}
		for _, s := range sums {
			account = s.Account
			if s.Balance == s.Lines {
				continue
			}
			if err := r.Integrity.RestoreBalance(ctx, s.Account, s.Lines); err != nil {
				return err
			}
			entries = append(entries, store.Queued{Entry: audit.Entry{Kind: KindBalanceRestored, At: now, Actor: actor, Subject: s.Account,
				Amount: int64(s.Lines), Attrs: map[string]string{"unit": "micro_cc", "found": strconv.FormatInt(int64(s.Balance), 10)}}})
			out.Balances = append(out.Balances, s.Account)
		}
		if len(sums) < auditPage {
			break
		}
	}
	outstanding, issuance, err := r.Integrity.Supply(ctx)
	if err != nil {
		return err
	}
	// The economy row is locked by this transaction: eco is what it
	// holds, and appendLinked saves it.
	if eco.OutstandingCC != -issuance || outstanding != -issuance {
		entries = append(entries, store.Queued{Entry: audit.Entry{Kind: KindSupplyRestored, At: now, Actor: actor, Subject: "economy",
			Amount: int64(-issuance), Attrs: map[string]string{"unit": "micro_cc", "found": strconv.FormatInt(int64(eco.OutstandingCC), 10)}}})
		eco.OutstandingCC = -issuance
		out.Supply = true
	}
	if len(entries) == 0 && out.Correction == "" {
		return nil
	}
	if err := a.appendLinked(ctx, r, eco, entries...); err != nil {
		return refuseRepair(err)
	}
	return r.Credit.InsertIncident(ctx, store.Incident{ID: a.cfg.NewID(), Kind: "audit_repair", Severity: "critical",
		Detail: fmt.Sprintf("repair: %d entries restored from the journal, %d recorded lost, %d journal entries corrected, %d balances restored%s",
			len(out.Restored), len(out.Lost), len(out.Corrected), len(out.Balances), map[bool]string{true: ", the CC outstanding restored"}[out.Supply]),
		Actor: actor, CreatedAt: now})
}

// correct writes the correcting journal entry: for each account, the
// opposite of what the journal holds beyond the log, so that every
// balance is again what the log recorded; its audit entry names every
// journal entry it mends, with its digest as found. Where the edits moved
// no balance (an amount or an idea rewritten), there is nothing to
// journal: a mended audit entry alone names them (returned to append). The
// lines must balance (an edit that broke a journal entry's balance leaves
// the journal unable to say where the difference went) and leave no
// balance below zero (CC that an edit created and that has left cannot be
// taken back): either refusal is a Conflict that says so.
func (a *App) correct(ctx context.Context, r Repos, actor string, ex examination) (string, []store.Queued, error) {
	names := slices.Sorted(maps.Keys(ex.dev))
	accounts, err := r.Integrity.Accounts(ctx, names)
	if err != nil {
		return "", nil, err
	}
	now := a.now()
	attrs := map[string]string{"unit": "micro_cc"}
	for entry, digest := range ex.mended {
		attrs[correctsPrefix+entry] = digest
	}
	if len(names) == 0 {
		return "", []store.Queued{{Entry: audit.Entry{Kind: KindMended, At: now, Actor: actor, Subject: "journal", Attrs: attrs}}}, nil
	}
	id := orderedID()
	attrs["entry_id"] = id
	var lines []credit.Line
	var moved money.Micros
	for _, name := range names {
		acct, ok := accounts[name]
		if !ok {
			return "", nil, fault.New(fault.Conflict, "the journal names account %s, which does not exist: it cannot be corrected", name)
		}
		d := money.Micros(-ex.dev[name])
		lines = append(lines, credit.Line{Account: acct, Delta: d})
		attrs[audit.LineAttr(name)] = strconv.FormatInt(int64(d), 10)
		if d > 0 {
			moved += d
		}
	}
	entry := credit.Entry{Kind: credit.KindCorrection, Lines: lines}
	if err := entry.Validate(); err != nil {
		return "", nil, fault.New(fault.Conflict, "the journal cannot be corrected: %v: an edit broke a journal entry's balance, so the "+
			"journal no longer says where the difference went; restore the ledger's journal from a backup", err)
	}
	_, err = r.Credit.Apply(ctx, store.Movement{
		Journal: store.JournalEntry{ID: id, Entry: entry, Amount: moved, CreatedAt: now},
		// No subject: a correction moves the CC of whoever the edits
		// touched (its lines say whose), not one contributor's.
		Audit: []store.Queued{{ID: orderedID(), EntryID: id, Entry: audit.Entry{Kind: string(credit.KindCorrection), At: now,
			Actor: actor, Amount: int64(moved), Attrs: attrs}}},
	})
	if errors.Is(err, store.ErrInsufficient) {
		return "", nil, fault.New(fault.Conflict, "the correction would take a balance below zero (%v): CC an edit of the journal "+
			"created has left already; the economy stays frozen", err)
	}
	return id, nil, err
}

// restartScrub starts the scrubber on a fresh cycle, keeping its last
// complete one for the reports.
func (a *App) restartScrub(ctx context.Context, r Repos) error {
	st, _, err := a.loadScrub(ctx, r)
	if err != nil {
		return err
	}
	return a.sealScrub(ctx, r, scrubState{Cycle: st.Cycle + 1, StartedAt: a.now(), NextSeq: 1, Last: st.Last})
}

package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/lease"
)

// The scrubber re-checks everything the ledger has recorded, a slice at a
// time, so that damage to old entries — which incremental verification
// never walks again — is found within one cycle (TigerBeetle's scrubber,
// Certificate Transparency's monitors). Each step advances three walks:
//
//   - the chain: every sequenced entry against its hash, the previous
//     one's and the tree's leaf (recomputed from its columns), the tree's
//     leaves rebuilt into the root of the checkpoint signed when the cycle
//     began, and each movement's journal entry against what its audit
//     entry records (audit.Movement);
//   - the journal: every journal entry recorded by exactly one audit
//     entry, sequenced or queued, of its kind;
//   - the balances: every cached balance the sum of its lines, each line
//     on its account's owner;
//
// and compares the CC outstanding with the issuance account. What a step
// finds is reported at once (report). Its place is kept in audit_scrub,
// sealed with a MAC of the signing key: a writer of the database cannot
// move it past what it would find.

// ScrubLease is the lease of the replica that runs the scrubber.
const ScrubLease = "audit-scrubber"

// DefaultScrubSlice is how many entries, journal entries and accounts one
// step checks of each.
const DefaultScrubSlice = 1000

// DefaultScrubCycle is how long a whole cycle may take.
const DefaultScrubCycle = time.Hour

// scrubState is the scrubber's place in its cycle.
type scrubState struct {
	Cycle     int64     `json:"cycle"`
	StartedAt time.Time `json:"started_at"`
	// TargetSize and TargetRoot are the checkpoint the chain walk rebuilds
	// (read when the walk began; 0 until then).
	TargetSize int64  `json:"target_size"`
	TargetRoot string `json:"target_root"`
	// NextSeq is the next entry to check, PrevHash the hash it must chain
	// to and Frontier the tree of the leaves checked so far.
	NextSeq   int64  `json:"next_seq"`
	PrevHash  string `json:"prev_hash"`
	Frontier  string `json:"frontier"`
	ChainDone bool   `json:"chain_done"`
	// JournalAfter is the last journal entry checked.
	JournalAfter store.JournalKey `json:"journal_after"`
	JournalDone  bool             `json:"journal_done"`
	// AccountAfter is the last account checked.
	AccountAfter string `json:"account_after"`
	AccountsDone bool   `json:"accounts_done"`
	// What the cycle checked and found so far.
	Entries  int64 `json:"entries"`
	Journal  int64 `json:"journal"`
	Accounts int64 `json:"accounts"`
	Found    int64 `json:"found"`
	// Last is the last complete cycle.
	Last *ScrubCycle `json:"last,omitempty"`
}

// ScrubCycle is one complete cycle of the scrubber.
type ScrubCycle struct {
	Cycle     int64     `json:"cycle"`
	StartedAt time.Time `json:"started_at"`
	EndedAt   time.Time `json:"ended_at"`
	// ThroughSeq is the last entry the chain walk covered (the checkpoint
	// it rebuilt covers seq 1 to ThroughSeq).
	ThroughSeq int64 `json:"through_seq"`
	Entries    int64 `json:"entries"`
	Journal    int64 `json:"journal"`
	Accounts   int64 `json:"accounts"`
	// Findings counts what the cycle found (recorded or already open).
	Findings int64 `json:"findings"`
}

// ScrubReport is the scrubber's state as the verification answer and the
// coherence check carry it.
type ScrubReport struct {
	// Cycle is the scrubber's configured cycle (0: the scrubber is off).
	Cycle time.Duration
	// Last is the last complete cycle (nil before the first).
	Last *ScrubCycle
	// Current is the cycle in progress: its number, when it began, the
	// next seq its chain walk checks of the checkpoint it rebuilds.
	Current    int64
	StartedAt  time.Time
	NextSeq    int64
	TargetSize int64
	// UpdatedAt is when a step last completed (zero before the first).
	UpdatedAt time.Time
}

// Late says why the scrubber is behind at now ("" when it is not): its
// cycle has run past scrubLate, or no step has completed for
// scrubStalled. The monitor warns then: old entries are not being
// re-checked at the promised rate.
func (s ScrubReport) Late(now time.Time) string {
	if s.Cycle <= 0 || s.UpdatedAt.IsZero() {
		return ""
	}
	switch {
	case now.Sub(s.UpdatedAt) > scrubStalled(s.Cycle):
		return fmt.Sprintf("the audit scrubber has completed no step for %s", now.Sub(s.UpdatedAt).Round(time.Second))
	case now.Sub(s.StartedAt) > scrubLate(s.Cycle):
		return fmt.Sprintf("the audit scrubber's cycle %d has run for %s, past its %s", s.Current,
			now.Sub(s.StartedAt).Round(time.Second), s.Cycle)
	}
	return ""
}

// scrubLate is how long a cycle may run: half a cycle past its time, and
// never less than a minute past. A short cycle (seconds, as tests and
// small installations run it) is a handful of steps, each followed by a
// pause of ScrubDuty-1 times its length, so a busy or slow machine (a
// step of 200 ms, a pause of 4 s) stretches it by seconds; that is the
// duty bound at work, not old entries going unchecked.
func scrubLate(cycle time.Duration) time.Duration {
	return max(cycle*3/2, cycle+time.Minute)
}

// scrubStalled is how long the scrubber may go without a step: ten of
// its longest pauses, and never less than a minute (a restart, a lease
// changing hands).
func scrubStalled(cycle time.Duration) time.Duration {
	return max(10*ScrubPauseMax(cycle), time.Minute)
}

// ScrubPauseMax is the longest pause between two steps: 5 s, or a tenth
// of a short cycle, so a small log is scrubbed whole every few seconds.
func ScrubPauseMax(cycle time.Duration) time.Duration { return min(5*time.Second, cycle/10) }

// ScrubPauseMin is the shortest pause between two steps: 10 slices a
// second at most.
const ScrubPauseMin = 100 * time.Millisecond

// ScrubDuty bounds the scrubber's share of the time: a step is followed
// by a pause of at least ScrubDuty-1 times its own length, so it spends
// at most 1/ScrubDuty (5 %) of its time stepping. A step's length is what
// it cost the database and this process (its reads are one after the
// other), and under load it grows, so the scrubber slows as the ledger
// gets busier. A cycle the bound cannot finish in time is reported late
// (ScrubReport.Late), never sped past it: the cost is the promise kept.
const ScrubDuty = 20

// ScrubStep is what one step did.
type ScrubStep struct {
	Cycle int64
	// Completed is true when the step ended its cycle.
	Completed bool
	// Remaining is how many entries the chain walk has left this cycle.
	Remaining int64
	// Found is what the step found.
	Found []store.Finding
	// Pause is how long to wait before the next step, so the cycle ends
	// within its time at the slowest pace that does.
	Pause time.Duration
}

// LeadScrubber takes or renews the scrubber's lease for holder.
func (a *App) LeadScrubber(ctx context.Context, holder string, ttl time.Duration) (bool, error) {
	return lease.Take(ctx, a.db, ScrubLease, holder, ttl)
}

// ReleaseScrubber gives the scrubber's lease up.
func (a *App) ReleaseScrubber(ctx context.Context, holder string) error {
	return lease.Release(ctx, a.db, ScrubLease, holder)
}

// ScrubReport reads the scrubber's state for the reports.
func (a *App) ScrubReport(ctx context.Context) (ScrubReport, error) {
	out := ScrubReport{Cycle: a.cfg.ScrubCycle}
	st, row, err := a.loadScrub(ctx, a.read())
	if err != nil {
		return out, err
	}
	out.Last, out.Current, out.StartedAt, out.NextSeq, out.TargetSize, out.UpdatedAt = st.Last, st.Cycle, st.StartedAt, st.NextSeq,
		st.TargetSize, row.at
	return out, nil
}

// scrubRow is what loadScrub read of the stored state besides the state:
// when a step last completed (zero before the first, and for a state it
// started afresh) and the row's stamp, its MAC ("" for no row): whoever
// writes the row changes it (saveScrub).
type scrubRow struct {
	at    time.Time
	stamp string
}

// loadScrub reads the scrubber's state: a fresh cycle when there is none,
// when it was sealed under another key (the key changed: the state is
// stale, not forged), or when its MAC does not verify, which is reported
// as a finding (someone wrote it) before the cycle starts over.
func (a *App) loadScrub(ctx context.Context, r Repos) (scrubState, scrubRow, error) {
	fresh := scrubState{Cycle: 1, StartedAt: a.now(), NextSeq: 1}
	sealed, err := r.Integrity.ScrubState(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return fresh, scrubRow{}, nil
	}
	if err != nil {
		return scrubState{}, scrubRow{}, err
	}
	row := scrubRow{stamp: sealed.MAC}
	if sealed.KeyID != a.signer.KeyID() {
		return fresh, row, nil
	}
	var st scrubState
	if a.signer.MAC([]byte(sealed.State)) != sealed.MAC || json.Unmarshal([]byte(sealed.State), &st) != nil || st.NextSeq < 1 {
		f := logFinding(0, "the scrubber's state was written by someone without the audit signing key (its MAC does not verify); "+
			"its cycle starts over")
		f.Place = "log:scrub-state"
		return fresh, row, a.report(ctx, "scrubber", fresh.StartedAt, f)
	}
	row.at = sealed.UpdatedAt
	return st, row, nil
}

// saveScrub seals and stores the scrubber's state.
func (a *App) saveScrub(ctx context.Context, stamp string, st scrubState) error {
	return a.tx(ctx, func(r Repos) error {
		// A repair that committed since the step read its state started
		// the cycle afresh (restartScrub): the step's place is of the log
		// before it, whose breaks it did not read, and saving it would
		// walk on past the repair to find what it healed. The repair holds
		// the mode lock exclusively, so it either commits before this
		// reads or after this saves.
		if err := r.Credit.LockModes(ctx, false); err != nil {
			return err
		}
		now, err := a.scrubStamp(ctx, r)
		if err != nil || now != stamp {
			return err
		}
		return a.sealScrub(ctx, r, st)
	})
}

// scrubStamp identifies the scrubber's stored state as it is ("" before
// the first step): whoever writes it changes its MAC.
func (a *App) scrubStamp(ctx context.Context, r Repos) (string, error) {
	sealed, err := r.Integrity.ScrubState(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return sealed.MAC, err
}

// sealScrub seals and stores the scrubber's state in r's transaction.
func (a *App) sealScrub(ctx context.Context, r Repos, st scrubState) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	return r.Integrity.SaveScrubState(ctx, store.SealedState{State: string(raw), KeyID: a.signer.KeyID(),
		MAC: a.signer.MAC(raw), UpdatedAt: a.now()})
}

// Scrub takes one step of the scrubber: up to ScrubSlice entries of the
// chain, journal entries and accounts, and the supply; it reports what it
// found (report) and saves its place. Every read is outside any
// transaction, and each comparison is one statement's snapshot or of rows
// that never change (a sequenced entry, a journal entry), so movements go
// on beside it.
func (a *App) Scrub(ctx context.Context) (ScrubStep, error) {
	began := a.clock.Now()
	r := a.read()
	// The row's stamp is read with the state: a write after it makes the
	// step save nothing (saveScrub), never save over the write.
	st, row, err := a.loadScrub(ctx, r)
	if err != nil {
		return ScrubStep{}, err
	}
	var found []store.Finding
	if !st.ChainDone {
		f, err := a.scrubChain(ctx, r, &st)
		if err != nil {
			return ScrubStep{}, err
		}
		found = append(found, f...)
	}
	if !st.JournalDone {
		f, err := a.scrubJournal(ctx, r, &st)
		if err != nil {
			return ScrubStep{}, err
		}
		found = append(found, f...)
	}
	if !st.AccountsDone {
		f, err := a.scrubAccounts(ctx, r, &st)
		if err != nil {
			return ScrubStep{}, err
		}
		found = append(found, f...)
	}
	outstanding, issuance, err := r.Integrity.Supply(ctx)
	if err != nil {
		return ScrubStep{}, err
	}
	if outstanding != -issuance {
		found = append(found, store.Finding{Kind: FindingSupply, Place: "supply:outstanding", Account: credit.Issuance.Name(),
			Detail: fmt.Sprintf("the CC outstanding is %s, but the issuance account holds %s", outstanding, issuance)})
	}
	st.Found += int64(len(found))
	out := ScrubStep{Cycle: st.Cycle, Found: found, Remaining: max(st.TargetSize-st.NextSeq, 0)}
	if st.ChainDone && st.JournalDone && st.AccountsDone {
		now := a.now()
		last := &ScrubCycle{Cycle: st.Cycle, StartedAt: st.StartedAt, EndedAt: now, ThroughSeq: max(st.TargetSize-1, 0),
			Entries: st.Entries, Journal: st.Journal, Accounts: st.Accounts, Findings: st.Found}
		st = scrubState{Cycle: st.Cycle + 1, StartedAt: now, NextSeq: 1, Last: last}
		out.Completed = true
	}
	if err := a.report(ctx, "scrubber", began, found...); err != nil {
		return out, err
	}
	if err := a.saveScrub(ctx, row.stamp, st); err != nil {
		return out, err
	}
	now := a.clock.Now()
	out.Pause = scrubPause(scrubPace{cycle: a.cfg.ScrubCycle, slice: int64(a.cfg.ScrubSlice), startedAt: st.StartedAt, now: now,
		remaining: out.Remaining, chainDone: st.ChainDone, completed: out.Completed, took: now.Sub(began)})
	return out, nil
}

// scrubPace is what the pause after a step depends on.
type scrubPace struct {
	// cycle is the configured cycle, slice the entries a step checks.
	cycle time.Duration
	slice int64
	// startedAt is when the cycle began (after a completed step, the next
	// one), now is when the step ended, took how long it ran.
	startedAt, now time.Time
	took           time.Duration
	// remaining is how many entries the chain walk has left; chainDone and
	// completed say whether the walk and the cycle have ended.
	remaining            int64
	chainDone, completed bool
}

// scrubPause paces the steps: the cycle's remaining time (within 80 % of
// it) over the steps it still needs, within [ScrubPauseMin,
// ScrubPauseMax], and never less than the duty bound (ScrubDuty) allows
// after a step as long as this one. The chain is the longest walk (an
// entry, and a fee, per movement), so its remaining entries decide the
// count; once it is done the other walks go at the fastest pace.
func scrubPause(p scrubPace) time.Duration {
	hi := max(ScrubPauseMax(p.cycle), ScrubPauseMin)
	var pause time.Duration
	switch {
	case p.completed:
		pause = hi
	case p.chainDone:
		pause = ScrubPauseMin
	default:
		steps := p.remaining/max(p.slice, 1) + 1
		left := p.startedAt.Add(p.cycle*4/5).Sub(p.now) / time.Duration(steps)
		pause = min(max(left, ScrubPauseMin), hi)
	}
	return max(pause, p.took*(ScrubDuty-1))
}

// scrubChain checks the next slice of the chain walk (starting it, at the
// latest checkpoint, when it has not begun).
func (a *App) scrubChain(ctx context.Context, r Repos, st *scrubState) ([]store.Finding, error) {
	if st.TargetSize == 0 {
		latest, err := r.Audit.Checkpoint(ctx, checkpointLatest)
		if errors.Is(err, store.ErrNotFound) {
			st.ChainDone = true // nothing sequenced yet
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if f, err := a.trustCheckpoint(ctx, r, latest); err != nil {
			return nil, err
		} else if f != nil {
			st.ChainDone = true
			return []store.Finding{*f}, nil
		}
		genesis, err := r.Audit.TreeHashes(ctx, []int64{0})
		if err != nil || genesis[0] != audit.LeafHash(audit.GenesisRecord) {
			st.ChainDone = true
			return []store.Finding{logFinding(0, "the tree's first record is not the log's genesis record")}, nil //nolint:nilerr // a finding
		}
		var f audit.Frontier
		f.Append(tlog.Hash(genesis[0]))
		st.TargetSize, st.TargetRoot, st.NextSeq, st.PrevHash, st.Frontier = latest.Size, latest.Root.String(), 1, audit.Genesis.String(),
			f.String()
	}
	last := st.TargetSize - 1
	if st.NextSeq > last {
		return a.endChain(st), nil
	}
	frontier, err := audit.ParseFrontier(st.Frontier)
	prev, ok := audit.ParseHash(st.PrevHash)
	if err == nil && (!ok || frontier.Size() != st.NextSeq) {
		err = fmt.Errorf("its previous hash %q or its frontier of size %d does not fit", st.PrevHash, frontier.Size())
	}
	if err != nil {
		return nil, fmt.Errorf("the scrubber's chain walk is unreadable (next seq %d): %w", st.NextSeq, err)
	}
	breaks, err := a.breaks(ctx, r, last)
	if err != nil {
		return nil, err
	}
	s, err := a.settledPlaces(ctx, r)
	if err != nil {
		return nil, err
	}
	// A slice never ends inside a recorded break: the verifier must see
	// the break whole to compare it with what its repair saw.
	end := min(st.NextSeq+int64(a.cfg.ScrubSlice)-1, last)
	for _, b := range breaks {
		if b.From <= end && end < b.To {
			end = min(b.To, last)
		}
	}
	var logged []loggedMovement
	res, v, err := a.walk(ctx, r, breaks, st.NextSeq, prev, end, frontier, func(rec audit.Record, leaf audit.Hash, skipped bool) {
		st.Entries++
		content, trusted := rec.Entry, true
		if skipped {
			// A repaired break: the stored row is not what was signed.
			// What it recorded is known only while its stored encoding is
			// still the signed leaf.
			content, trusted = signedContent(rec, leaf)
		}
		if trusted && credit.IsMovement(credit.Kind(content.Kind)) {
			logged = append(logged, loggedMovement{seq: rec.Entry.Seq, m: audit.Recorded(content)})
		}
	})
	if err != nil {
		return nil, err
	}
	found, err := a.compareJournal(ctx, r, s, logged)
	if err != nil {
		return nil, err
	}
	if !res.OK {
		// The chain cannot be followed past a break no repair recorded;
		// the journal and the balances are walked on.
		st.ChainDone = true
		return append(found, logFinding(res.FirstDivergent, fmt.Sprintf("audit entry %d: %s (the scrubber's cycle %d)",
			res.FirstDivergent, res.Reason, st.Cycle))), nil
	}
	st.NextSeq, st.PrevHash, st.Frontier = end+1, v.Head().String(), frontier.String()
	if st.NextSeq > last {
		found = append(found, a.endChain(st)...)
	}
	return found, nil
}

// endChain ends the chain walk: the leaves it rebuilt must hash to the
// root of the checkpoint it began at.
func (a *App) endChain(st *scrubState) []store.Finding {
	st.ChainDone = true
	frontier, err := audit.ParseFrontier(st.Frontier)
	if err == nil && frontier.Size() == st.TargetSize && audit.Hash(frontier.Root()).String() == st.TargetRoot {
		return nil
	}
	f := logFinding(0, fmt.Sprintf("the stored tree does not hash to the root of the checkpoint of size %d the ledger signed",
		st.TargetSize))
	f.Place = "log:tree"
	return []store.Finding{f}
}

// trustCheckpoint checks that the ledger signed the checkpoint c (with
// its key or a previous one it has not retired): a finding when it did
// not (nil when it did).
func (a *App) trustCheckpoint(ctx context.Context, r Repos, c store.Checkpoint) (*store.Finding, error) {
	_, err := a.openCheckpoint(ctx, r, c)
	if errors.Is(err, ErrLogTampered) {
		return &store.Finding{Kind: FindingCheckpoint, Place: "checkpoint:latest", Detail: err.Error()}, nil
	}
	return nil, err
}

// signedContent is what a stored record recorded when what it shows is
// not what was signed: its stored encoding, while that is still the
// tree's leaf; otherwise nothing is known (ok false) but the leaf.
func signedContent(rec audit.Record, leaf audit.Hash) (audit.Entry, bool) {
	if audit.LeafHash(rec.Encoded) != leaf {
		return audit.Entry{}, false
	}
	e, err := audit.Decode(rec.Encoded)
	return e, err == nil
}

// loggedMovement is a movement as the log recorded it, with its seq.
type loggedMovement struct {
	seq int64
	m   audit.Movement
}

// compareJournal compares each movement the log recorded with the journal
// entry it names: a finding for each that is missing or differs, unless a
// correction mended it as it still is.
func (a *App) compareJournal(ctx context.Context, r Repos, s settled, logged []loggedMovement) ([]store.Finding, error) {
	if len(logged) == 0 {
		return nil, nil
	}
	ids := make([]string, len(logged))
	for i, l := range logged {
		ids[i] = l.m.EntryID
	}
	journal, err := r.Integrity.JournalMovements(ctx, ids)
	if err != nil {
		return nil, err
	}
	var found []store.Finding
	for _, l := range logged {
		j, ok := journal[l.m.EntryID]
		if !ok {
			if s.accepts(l.m.EntryID, nil) {
				continue
			}
			found = append(found, journalFinding(l.m.EntryID, l.seq, fmt.Sprintf(
				"audit entry %d records journal entry %s (%s), which is not in the journal", l.seq, l.m.EntryID, l.m.Kind)))
			continue
		}
		if diff := l.m.Differences(j); len(diff) > 0 && !s.accepts(l.m.EntryID, &j) {
			found = append(found, journalFinding(l.m.EntryID, l.seq, fmt.Sprintf("journal entry %s (%s) is not what audit entry %d records: %s",
				l.m.EntryID, l.m.Kind, l.seq, joinFirst(diff, 4))))
		}
	}
	return found, nil
}

// scrubFuture is how far past the start of its cycle the journal walk
// leaves entries to the next cycle: beyond it, an entry is dated in the
// future (a clock far ahead, or a writer of the database hiding a forged
// entry where the walk would never reach), and is checked in every cycle.
const scrubFuture = time.Hour

// scrubJournal checks the next slice of the journal: each entry recorded
// by exactly one audit entry, sequenced or queued, of its kind. The walk
// covers the entries written before its cycle began; those written since
// are the next cycle's, or under a steady stream of movements the walk
// would chase the journal's end and its cycle never complete (the chain
// walk is bounded the same way, by the checkpoint it began at).
func (a *App) scrubJournal(ctx context.Context, r Repos, st *scrubState) ([]store.Finding, error) {
	links, err := r.Integrity.JournalLinks(ctx, st.JournalAfter, a.cfg.ScrubSlice)
	if err != nil {
		return nil, err
	}
	st.JournalDone = len(links) < a.cfg.ScrubSlice
	future := st.StartedAt.Add(scrubFuture)
	var problems []linkProblem
	for i, l := range links {
		if l.Key.CreatedAt.After(st.StartedAt) && l.Key.CreatedAt.Before(future) {
			// Written since the cycle began: what is left of this cycle's
			// walk is the entries dated from future on (which the walk,
			// started there, never skips again).
			st.JournalAfter, st.JournalDone, links = store.JournalKey{CreatedAt: future}, false, links[:i]
			break
		}
		if problem := unrecorded(l); problem != "" {
			problems = append(problems, linkProblem{entryID: l.Key.ID, seq: l.AuditSeq, detail: problem})
		}
		st.JournalAfter = l.Key
	}
	st.Journal += int64(len(links))
	if len(problems) == 0 {
		return nil, nil
	}
	s, err := a.settledPlaces(ctx, r)
	if err != nil {
		return nil, err
	}
	problems, err = a.unsettled(ctx, r, s, problems)
	if err != nil {
		return nil, err
	}
	var found []store.Finding
	for _, p := range problems {
		found = append(found, journalFinding(p.entryID, p.seq, p.detail))
	}
	return found, nil
}

// unrecorded says how a journal entry's link to the audit log is wrong ("" when it is
// recorded by exactly one audit entry of its kind): the rules of the
// coherence check's reconciliation (store.Credit.Unreconciled), one entry
// at a time.
func unrecorded(l store.JournalLink) string {
	sequenced, queued := l.AuditSeq > 0, l.QueuedKind != ""
	switch {
	case !sequenced && !queued:
		if l.LegacySeq > 0 {
			return fmt.Sprintf("journal entry %s (%s) names audit entry %d, which does not record it", l.Key.ID, l.Kind, l.LegacySeq)
		}
		return fmt.Sprintf("journal entry %s (%s) is recorded by no audit entry", l.Key.ID, l.Kind)
	case sequenced && queued:
		return fmt.Sprintf("journal entry %s (%s) is recorded by audit entry %d and again in the queue", l.Key.ID, l.Kind, l.AuditSeq)
	case sequenced && l.AuditKind != l.Kind:
		return fmt.Sprintf("journal entry %s (%s) is recorded by audit entry %d, which records a %s", l.Key.ID, l.Kind, l.AuditSeq, l.AuditKind)
	case queued && l.QueuedKind != l.Kind:
		return fmt.Sprintf("journal entry %s (%s) is recorded by a queued audit entry of kind %s", l.Key.ID, l.Kind, l.QueuedKind)
	case sequenced && l.LegacySeq > 0 && l.AuditSeq != l.LegacySeq:
		return fmt.Sprintf("journal entry %s (%s) names audit entry %d, but audit entry %d records it", l.Key.ID, l.Kind, l.LegacySeq, l.AuditSeq)
	}
	return ""
}

// scrubAccounts checks the next slice of the balances.
func (a *App) scrubAccounts(ctx context.Context, r Repos, st *scrubState) ([]store.Finding, error) {
	sums, err := r.Integrity.AccountSums(ctx, st.AccountAfter, a.cfg.ScrubSlice)
	if err != nil {
		return nil, err
	}
	var found []store.Finding
	for _, s := range sums {
		switch {
		case s.Balance != s.Lines:
			found = append(found, balanceFinding(s.Account, fmt.Sprintf("account %s holds %s CC, but its journal lines add up to %s",
				s.Account, s.Balance, s.Lines)))
		case !s.OwnersAgree:
			found = append(found, balanceFinding(s.Account, fmt.Sprintf("a journal line on account %s names another owner than the account",
				s.Account)))
		}
		st.AccountAfter = s.Account
	}
	st.Accounts += int64(len(sums))
	st.AccountsDone = len(sums) < a.cfg.ScrubSlice
	return found, nil
}

// joinFirst joins the first n of xs, saying how many more there are.
func joinFirst(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, "; ")
	}
	return strings.Join(xs[:n], "; ") + fmt.Sprintf(" (and %d more)", len(xs)-n)
}

package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/lease"
)

// catchUpPage bounds how many sequenced entries one Sequence call adds to
// a tree that lags the chain (a log written before the tree existed).
const catchUpPage = 10000

// DefaultAuditBatch is how many queued entries one batch integrates.
const DefaultAuditBatch = 1000

// Errors of the audit log, which stop the sequencer until an
// administrator looks (the monitor sees the backlog grow and freezes).
var (
	// ErrLogRewound: the chain's head is behind the latest signed checkpoint.
	ErrLogRewound = errors.New("the audit chain's head is behind the latest signed checkpoint: entries were removed")
	// ErrLogTampered: the stored tree or checkpoint is not what the ledger signed.
	ErrLogTampered = errors.New("the audit log's stored tree or checkpoint is not what the ledger signed")
)

// SequencerLease is the lease of the replica that runs the sequencer.
const SequencerLease = "audit-sequencer"

// LeadSequencer takes or renews the sequencer's lease for holder.
func (a *App) LeadSequencer(ctx context.Context, holder string, ttl time.Duration) (bool, error) {
	return lease.Take(ctx, a.db, SequencerLease, holder, ttl)
}

// ReleaseSequencer gives the sequencer's lease up.
func (a *App) ReleaseSequencer(ctx context.Context, holder string) error {
	return lease.Release(ctx, a.db, SequencerLease, holder)
}

// Sequenced returns a channel that receives after a transaction that
// queued audit entries commits, so the sequencer on this replica need not
// wait for its next poll.
func (a *App) Sequenced() <-chan struct{} { return a.kick }

// logState is the log being extended in one transaction.
type logState struct {
	eco      *store.Economy
	frontier *audit.Frontier
	// tree are the stored hashes to write, by index.
	tree    map[int64]audit.Hash
	recs    []audit.Record
	dequeue []string
	// rotated is the previous key the latest checkpoint was signed by (""
	// when it is the ledger's own): the batch records the change of key
	// (changeKey) and its checkpoint is the first the new key signs.
	// changeSeq is the seq of its key_changed entry, and countersigned
	// says whether the previous key signed the change too.
	rotated       string
	changeSeq     int64
	countersigned bool
}

func (st *logState) addLeaf(record []byte) {
	first := tlog.StoredHashIndex(0, st.frontier.Size())
	for i, h := range st.frontier.Append(tlog.Hash(audit.LeafHash(record))) {
		st.tree[first+int64(i)] = audit.Hash(h)
	}
}

// lag is how many sequenced entries the tree does not cover yet.
func (st *logState) lag() int64 { return st.eco.AuditSeq + 1 - st.frontier.Size() }

// add seals e after the chain's head as the next entry and the tree's next
// record.
func (st *logState) add(e audit.Entry, entryID string) {
	e.Seq = st.eco.AuditSeq + 1
	rec := audit.Seal(st.eco.AuditHead, e)
	rec.EntryID = entryID
	st.recs = append(st.recs, rec)
	st.addLeaf(rec.Encoded)
	st.eco.AuditSeq, st.eco.AuditHead = e.Seq, rec.Hash
}

// integrate adds queued entries, in the order given, and takes them off
// the queue.
func (st *logState) integrate(queued []store.Queued) {
	for _, q := range queued {
		st.add(q.Entry, q.EntryID)
		st.dequeue = append(st.dequeue, q.ID)
	}
}

// treeReader reads stored tree hashes for tlog.
type treeReader struct {
	ctx context.Context
	r   Repos
}

func (t treeReader) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	hs, err := t.r.Audit.TreeHashes(t.ctx, idx)
	if err != nil {
		return nil, err
	}
	out := make([]tlog.Hash, len(hs))
	for i, h := range hs {
		out[i] = tlog.Hash(h)
	}
	return out, nil
}

// openLog starts extending the log in the caller's transaction, after the
// economy row (eco) was locked: the latest checkpoint must be one this
// ledger signed (or one signed by a key it no longer has, after the key
// changed) and the stored tree must still hash to its root, or nothing is
// added to a log someone rewrote.
func (a *App) openLog(ctx context.Context, r Repos, eco *store.Economy) (*logState, error) {
	latest, err := r.Audit.Checkpoint(ctx, checkpointLatest)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	st := &logState{eco: eco, tree: map[int64]audit.Hash{}}
	if latest.Size > eco.AuditSeq+1 {
		return nil, fmt.Errorf("%w (head seq %d, checkpoint tree size %d)", ErrLogRewound, eco.AuditSeq, latest.Size)
	}
	if latest.Size > 0 {
		by, err := a.openCheckpoint(ctx, r, latest)
		if err != nil {
			return nil, err
		}
		if by != a.signer.VerifierKey() {
			// A rotation, unless this ledger's own key is the one the log
			// changed from: a replica restarted with the old key would
			// otherwise change it back.
			if k, retired, err := a.retiredAt(ctx, r, a.signer.VerifierKey()); err != nil {
				return nil, err
			} else if retired {
				return nil, fmt.Errorf("%w: it was retired at seq %d, when the log's key changed to %s; restart this ledger "+
					"with the current key", ErrRetiredKey, k.Seq, k.To)
			}
			st.rotated = by
		}
	}
	if st.frontier, err = audit.LoadFrontier(latest.Size, treeReader{ctx, r}); err != nil {
		if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrMalformed) {
			return nil, fmt.Errorf("%w: %w", ErrLogTampered, err)
		}
		// The database failed (a cut session): the next batch tries again.
		// Taken for tampering, it froze the economy read_only.
		return nil, fmt.Errorf("read the audit tree: %w", err)
	}
	if latest.Size > 0 && audit.Hash(st.frontier.Root()) != latest.Root {
		return nil, fmt.Errorf("%w: the stored tree of size %d no longer hashes to the signed root", ErrLogTampered, latest.Size)
	}
	if latest.Size == 0 {
		st.addLeaf(audit.GenesisRecord)
	}
	if st.rotated != "" {
		// The change of key is the first entry the new key's checkpoint
		// covers; the tree must cover the chain before it is added.
		if err := a.catchUp(ctx, r, st, -1); err != nil {
			return nil, err
		}
		if err := a.changeKey(st); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// ErrRetiredKey reports a ledger whose own signing key the log changed
// from: it signs nothing more (a mistake of configuration, not damage to
// the log, so it is no finding).
var ErrRetiredKey = errors.New("this ledger's FOUNDRY_AUDIT_SIGNING_KEY is no longer the audit log's key")

// ErrUntrustedKey reports a latest checkpoint signed by no key the
// ledger trusts. Never a rotation: a rotation is configured (the old key
// given as FOUNDRY_AUDIT_PREVIOUS_SIGNING_KEY or among
// FOUNDRY_AUDIT_PREVIOUS_VERIFIER_KEYS), so a checkpoint under any other
// key was stored by someone else, over a history they may have rewritten.
var ErrUntrustedKey = errors.New("the latest audit checkpoint is signed by no key this ledger trusts " +
	"(its FOUNDRY_AUDIT_SIGNING_KEY, or a previous key it was given): it was stored by someone else")

// openCheckpoint checks that a stored checkpoint is one the ledger signed
// (by a trusted key, its columns those of its signed note, and no
// previous key past the change that retired it) and returns the key that
// signed it; an error wrapping ErrLogTampered (and ErrUntrustedKey for a
// key it does not trust) when it is not.
func (a *App) openCheckpoint(ctx context.Context, r Repos, c store.Checkpoint) (string, error) {
	cp, by, err := audit.OpenCheckpoint(c.Note, a.trustedKeys()...)
	switch {
	case errors.Is(err, audit.ErrOtherKey):
		return "", fmt.Errorf("%w: %w", ErrLogTampered, ErrUntrustedKey)
	case err != nil:
		return "", fmt.Errorf("%w: %w", ErrLogTampered, err)
	case cp.Size != c.Size || cp.Root != tlog.Hash(c.Root):
		return "", fmt.Errorf("%w: the checkpoint's columns differ from its signed note", ErrLogTampered)
	}
	if by == a.signer.VerifierKey() {
		return by, nil
	}
	// A previous key is trusted until the log records its change: the
	// transaction that records it signs the checkpoint with the new key,
	// so the ledger never again stores one by the old key as its latest.
	// One there now was stored by whoever still holds that key.
	k, retired, err := a.retiredAt(ctx, r, by)
	if err != nil {
		return "", err
	}
	if retired {
		return "", fmt.Errorf("%w: %w: the checkpoint of tree size %d is signed by %s, which the log retired at seq %d "+
			"(its change to %s)", ErrLogTampered, ErrUntrustedKey, c.Size, by, k.Seq, k.To)
	}
	return by, nil
}

// catchUp adds up to limit sequenced entries the tree lags by (all when
// limit < 0).
func (a *App) catchUp(ctx context.Context, r Repos, st *logState, limit int64) error {
	for st.lag() > 0 && limit != 0 {
		n := min(st.lag(), catchUpPage)
		if limit > 0 {
			n = min(n, limit)
		}
		page, err := r.Audit.Range(ctx, st.frontier.Size()-1, int(n))
		if err != nil {
			return err
		}
		for _, rec := range page {
			if rec.Entry.Seq != st.frontier.Size() {
				return fmt.Errorf("%w: seq %d is missing from the chain", ErrLogTampered, st.frontier.Size())
			}
			st.addLeaf(rec.Encoded)
		}
		if len(page) == 0 {
			return fmt.Errorf("%w: seq %d is missing from the chain", ErrLogTampered, st.frontier.Size())
		}
		if limit > 0 {
			limit -= int64(len(page))
		}
	}
	return nil
}

// closeLog stores what the transaction added, signs the new checkpoint and
// moves the chain's head.
func (a *App) closeLog(ctx context.Context, r Repos, st *logState) error {
	if len(st.tree) == 0 {
		return nil
	}
	if err := r.Audit.Append(ctx, st.recs, st.dequeue, st.tree); err != nil {
		return err
	}
	root := st.frontier.Root()
	note, err := a.signer.Sign(audit.Checkpoint{Origin: a.signer.Origin(), Size: st.frontier.Size(), Root: root})
	if err != nil {
		return err
	}
	now := a.now()
	chain := st.eco.AuditHead
	if st.lag() > 0 {
		// The tree still lags the chain: the checkpoint's chain hash is
		// that of its own last record.
		chain = audit.Genesis
		if last := st.frontier.Size() - 1; last > 0 {
			prev, err := r.Audit.Range(ctx, last-1, 1)
			if err != nil {
				return err
			}
			if len(prev) == 0 || prev[0].Entry.Seq != last {
				return fmt.Errorf("%w: seq %d is missing from the chain", ErrLogTampered, last)
			}
			chain = prev[0].Hash
		}
	}
	if err := r.Audit.SaveCheckpoint(ctx, checkpointLatest, store.Checkpoint{Size: st.frontier.Size(), Root: audit.Hash(root),
		Chain: chain, Note: note, At: now}); err != nil {
		return err
	}
	if st.rotated != "" {
		if err := r.Credit.InsertIncident(ctx, a.keyChangeIncident(st, now)); err != nil {
			return err
		}
	}
	st.eco.UpdatedAt = now
	return r.Credit.SaveEconomy(ctx, *st.eco)
}

// Sequence integrates one batch of the queue into the log (or, while the
// tree lags a chain written before it existed, adds up to catchUpPage of
// those entries to the tree), in one transaction, and reports how many
// entries it handled: 0 when there was nothing to do.
func (a *App) Sequence(ctx context.Context) (int, error) {
	// A look at the queue without the economy row, so an idle sequencer
	// takes no lock: only a tree that lags needs the row to find out.
	q, err := a.read().Audit.Queue(ctx, 1)
	if err != nil {
		return 0, err
	}
	if len(q) == 0 {
		if a.treeCaughtUp.Load() {
			return 0, nil
		}
		r := a.read()
		latest, err := r.Audit.Checkpoint(ctx, checkpointLatest)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return 0, err
		}
		eco, err := r.Credit.Economy(ctx)
		if err != nil {
			return 0, err
		}
		if latest.Size == eco.AuditSeq+1 {
			// Every later entry is added to the tree as it is sequenced.
			a.treeCaughtUp.Store(true)
			return 0, nil
		}
	}
	began := a.now()
	n, err := a.sequence(ctx)
	if errors.Is(err, ErrLogTampered) || errors.Is(err, ErrLogRewound) {
		// The log refuses to grow: that is a finding, whatever walk has
		// not found it yet.
		f := store.Finding{Kind: FindingLog, Place: "log:sequencer", Detail: "the sequencer refuses to extend the log: " + err.Error()}
		if errors.Is(err, ErrUntrustedKey) {
			f.Kind, f.Place = FindingCheckpoint, "checkpoint:latest"
		}
		if rerr := a.report(ctx, "sequencer", began, f); rerr != nil {
			return 0, errors.Join(err, rerr)
		}
	}
	return n, err
}

// sequence is Sequence's batch, in one transaction.
func (a *App) sequence(ctx context.Context) (int, error) {
	var n int
	err := a.tx(ctx, func(r Repos) error {
		n = 0
		eco, err := r.Credit.LockEconomy(ctx)
		if err != nil {
			return err
		}
		st, err := a.openLog(ctx, r, &eco)
		if err != nil {
			return err
		}
		if lag := st.lag(); lag > 0 {
			if err := a.catchUp(ctx, r, st, catchUpPage); err != nil {
				return err
			}
			n = int(min(lag, catchUpPage))
			return a.closeLog(ctx, r, st)
		}
		queued, err := r.Audit.Queue(ctx, a.cfg.AuditBatch)
		if err != nil {
			return err
		}
		st.integrate(queued)
		n = len(queued)
		return a.closeLog(ctx, r, st)
	})
	return n, err
}

// appendNow appends entries to the log in the caller's transaction, which
// locked the economy row (eco): after every entry still queued, so an
// entry recording a change of mode or a repair follows every movement that
// committed before it.
func (a *App) appendNow(ctx context.Context, r Repos, eco *store.Economy, entries ...audit.Entry) error {
	qs := make([]store.Queued, len(entries))
	for i, e := range entries {
		qs[i].Entry = e
	}
	return a.appendLinked(ctx, r, eco, qs...)
}

// appendLinked is appendNow of entries that may each record a journal
// entry (Queued.EntryID; their ids are not used): a repair's restored
// entries and its correction.
func (a *App) appendLinked(ctx context.Context, r Repos, eco *store.Economy, entries ...store.Queued) error {
	st, err := a.openLog(ctx, r, eco)
	if err != nil {
		return err
	}
	if err := a.catchUp(ctx, r, st, -1); err != nil {
		return err
	}
	// The whole queue as this transaction sees it: a change of mode holds
	// the mode lock exclusively, so no movement adds to it meanwhile; for
	// an oracle reading or a repair, entries committed meanwhile are the
	// next batch's.
	queued, err := r.Audit.Queue(ctx, 1<<30)
	if err != nil {
		return err
	}
	st.integrate(queued)
	for _, q := range entries {
		if q.Entry.At.IsZero() {
			q.Entry.At = a.now()
		}
		st.add(q.Entry, q.EntryID)
	}
	return a.closeLog(ctx, r, st)
}

// appendOrQueue appends entries as appendNow does, unless the log refuses
// to grow (ErrLogRewound, ErrLogTampered, ErrRetiredKey: found before
// anything was written) or the queue holds more than one of the
// sequencer's batches: then they wait in the queue, after every entry
// queued before them, and eco is saved as it is. A change of mode and an
// oracle trip must commit whatever the log's state: the monitor freezes
// the economy precisely when the log is broken, or behind.
//
// A long backlog is the sequencer's to drain, a batch a transaction:
// integrated here, all of it was held in memory and in one transaction
// (0.9 M entries took 3.9 GB on Postgres and 6.6 GB on SQLite), which the
// monitor's deadline cancelled, losing the work, again and again. The
// mode's own record in the economy row commits at once either way; its
// audit entry follows every entry queued before it (stamped after the
// newest of them, which the queue's order is by), so the log records
// the change after every movement that committed before it.
func (a *App) appendOrQueue(ctx context.Context, r Repos, eco *store.Economy, entries ...audit.Entry) error {
	backlog, newest, err := r.Audit.QueueTail(ctx, a.cfg.AuditBatch+1)
	if err != nil {
		return err
	}
	if backlog <= a.cfg.AuditBatch {
		err := a.appendNow(ctx, r, eco, entries...)
		if !errors.Is(err, ErrLogRewound) && !errors.Is(err, ErrLogTampered) && !errors.Is(err, ErrRetiredKey) {
			return err
		}
	}
	qs := make([]store.Queued, len(entries))
	for i, e := range entries {
		if e.At.IsZero() {
			e.At = a.now()
		}
		if !e.At.Truncate(time.Microsecond).After(newest) {
			// An entry queued by a replica whose clock runs ahead.
			e.At = newest.Add(time.Microsecond)
		}
		newest = e.At
		qs[i] = store.Queued{ID: orderedID(), Entry: e}
	}
	if err := r.Audit.Enqueue(ctx, qs); err != nil {
		return err
	}
	a.queued.Store(true)
	return r.Credit.SaveEconomy(ctx, *eco)
}

// Backlog is the queue of audit entries waiting for the sequencer.
type Backlog struct {
	Entries int64
	// Oldest is when the oldest waiting entry was written (zero for none).
	Oldest time.Time
}

// AuditBacklog reports the sequencer's backlog.
func (a *App) AuditBacklog(ctx context.Context) (Backlog, error) {
	n, oldest, err := a.read().Audit.Backlog(ctx)
	return Backlog{Entries: n, Oldest: oldest}, err
}

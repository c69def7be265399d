package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/cursor"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// The audit log (docs/ledger.md, "The audit log"). A movement writes its
// audit entry into a queue in its own transaction; the sequencer, one
// replica at a time (Sequence, driven by the ledger's sequencer loop),
// integrates the queue in batches: each entry gets the next seq and its
// chain hash, becomes the next record of the log's Merkle tree, and after
// each batch the ledger signs a checkpoint of the tree (a signed note).
// The economy row holds the chain's head and is locked for the batch, so
// two sequencers (a lease that changed hands) never interleave.

// The names of the stored checkpoints.
const (
	checkpointLatest   = "latest"
	checkpointVerified = "verified"
)

// AuditEntries returns a page of the chain, newest first, each entry with
// its actor's and subject's handles.
func (a *App) AuditEntries(ctx context.Context, limit, offset int) ([]store.ListedRecord, error) {
	return a.read().Audit.Recent(ctx, 0, limit, offset)
}

// AuditEntry returns the entry with seq as the list shows it (false when
// there is none).
func (a *App) AuditEntry(ctx context.Context, seq int64) (store.ListedRecord, bool, error) {
	return a.auditEntry(ctx, a.read(), seq)
}

func (a *App) auditEntry(ctx context.Context, r Repos, seq int64) (store.ListedRecord, bool, error) {
	recs, err := r.Audit.Recent(ctx, seq+1, 1, 0)
	if err != nil || len(recs) == 0 || recs[0].Entry.Seq != seq {
		return store.ListedRecord{}, false, err
	}
	return recs[0], true, nil
}

// auditList names the audit log's cursors (platform/cursor).
const auditList = "audit"

// AuditPage returns a page of the chain, newest first (credit.Page), each
// entry with its actor's and subject's handles, the number of entries in
// all, and the cursor of the next page. A page read
// by cursor (p.Cursor, with no offset) starts at the entry before the one
// the cursor names, so entries sequenced meanwhile do not shift it; its
// offset is still exact, because seqs run 1..head without a gap.
func (a *App) AuditPage(ctx context.Context, p Page) (Listed[store.ListedRecord], error) {
	limit, offset, errs := fault.PageFields(p.Limit, p.Offset, credit.DefaultPage, credit.MaxPage)
	before, cerrs := cursor.DecodeSeq(auditList, p.Cursor, offset)
	if errs = append(errs, cerrs...); len(errs) > 0 {
		return Listed[store.ListedRecord]{}, fault.Validation(errs...)
	}
	r := a.read()
	eco, err := r.Credit.Economy(ctx)
	if err != nil {
		return Listed[store.ListedRecord]{}, err
	}
	recs, err := r.Audit.Recent(ctx, before, limit, offset)
	if err != nil {
		return Listed[store.ListedRecord]{}, err
	}
	if before > 0 {
		offset = int(max(eco.AuditSeq-before+1, 0))
	}
	out := Listed[store.ListedRecord]{Items: recs, Total: int(eco.AuditSeq), Limit: limit, Offset: offset}
	if n := len(recs); n > 0 && recs[n-1].Entry.Seq > 1 {
		out.Next = cursor.EncodeSeq(auditList, recs[n-1].Entry.Seq)
	}
	return out, nil
}

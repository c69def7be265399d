package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
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

// AuditEntries returns a page of the chain, newest first.
func (a *App) AuditEntries(ctx context.Context, limit, offset int) ([]audit.Record, error) {
	return a.read().Audit.Recent(ctx, limit, offset)
}

// AuditPage returns a page of the chain, newest first (credit.Page), and
// the number of entries in all.
func (a *App) AuditPage(ctx context.Context, p Page) ([]audit.Record, int64, error) {
	limit, offset, err := credit.Page(p.Limit, p.Offset)
	if err != nil {
		return nil, 0, err
	}
	r := a.read()
	eco, err := r.Credit.Economy(ctx)
	if err != nil {
		return nil, 0, err
	}
	recs, err := r.Audit.Recent(ctx, limit, offset)
	return recs, eco.AuditSeq, err
}

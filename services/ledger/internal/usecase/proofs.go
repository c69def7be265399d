package usecase

import (
	"context"
	"errors"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Checkpoint is the checkpoint served (the signed note): the latest the
// ledger signed, or, while witnesses are configured, the latest they all
// cosigned, with their cosignatures (a moment behind the latest; the
// latest itself until they first have). NotFound before the first batch.
func (a *App) Checkpoint(ctx context.Context) (string, error) {
	if len(a.cfg.Witnesses) > 0 {
		c, err := a.read().Audit.Checkpoint(ctx, checkpointWitnessed)
		if err == nil {
			return c.Note, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
	}
	c, err := a.read().Audit.Checkpoint(ctx, checkpointLatest)
	if errors.Is(err, store.ErrNotFound) {
		return "", fault.New(fault.NotFound, "no checkpoint yet: the audit log has not been sequenced")
	}
	if err != nil {
		return "", err
	}
	return c.Note, nil
}

// VerifierKey is the key that verifies the log's checkpoints.
func (a *App) VerifierKey() string { return a.signer.VerifierKey() }

// Proof is an inclusion proof of one record in a tree.
type Proof struct {
	Seq      int64
	TreeSize int64
	// LeafHash is the leaf of Entry, computed from its fields.
	LeafHash audit.Hash
	Proof    []audit.Hash
	// Entry is the entry proved, as the log's list shows it (nil for
	// record 0, the genesis record).
	Entry *store.ListedRecord
}

// treeSize reads the latest checkpoint's size and checks that n (0: that
// size) is one the log can prove against.
func (a *App) treeSize(ctx context.Context, r Repos, n int64, field string) (int64, error) {
	latest, err := r.Audit.Checkpoint(ctx, checkpointLatest)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	if n == 0 {
		n = latest.Size
	}
	if n < 1 || n > latest.Size {
		return 0, fault.Validation(fault.Field(field, "must be a tree size from 1 to %d (the latest checkpoint's)", latest.Size))
	}
	return n, nil
}

// InclusionProof proves that the entry with seq (record seq of the tree;
// 0 is the genesis record) is in the tree of treeSize records (0: the
// latest checkpoint's). The leaf hash is computed from the fields of the
// entry as the log's list shows it now, which the proof carries: what it
// proves is what a reader sees, so an entry whose columns were rewritten
// since it was sequenced fails its proof (the stored encoding, a copy of
// what was hashed, is never what is shown; verification checks that the
// two agree).
func (a *App) InclusionProof(ctx context.Context, seq, treeSize int64) (Proof, error) {
	r := a.read()
	n, err := a.treeSize(ctx, r, treeSize, "tree_size")
	if err != nil {
		return Proof{}, err
	}
	if seq < 0 || seq >= n {
		return Proof{}, fault.New(fault.NotFound, "record %d is not in the tree of size %d", seq, n)
	}
	out := Proof{Seq: seq, TreeSize: n, LeafHash: audit.LeafHash(audit.GenesisRecord)}
	if seq > 0 {
		rec, ok, err := a.auditEntry(ctx, r, seq)
		if err != nil {
			return Proof{}, err
		}
		if !ok {
			return Proof{}, fault.New(fault.NotFound, "audit entry %d is missing from the chain", seq)
		}
		out.Entry, out.LeafHash = &rec, audit.Leaf(rec.Entry)
	}
	p, err := tlog.ProveRecord(n, seq, treeReader{ctx, r})
	if err != nil {
		return Proof{}, fmt.Errorf("prove record %d in tree %d: %w", seq, n, err)
	}
	for _, h := range p {
		out.Proof = append(out.Proof, audit.Hash(h))
	}
	return out, nil
}

// Consistency is a proof that the tree of size From is a prefix of the
// tree of size To.
type Consistency struct {
	From, To         int64
	OldRoot, NewRoot audit.Hash
	Proof            []audit.Hash
}

// ConsistencyProof proves that the tree of from records is a prefix of the
// tree of to records (0: the latest checkpoint's).
func (a *App) ConsistencyProof(ctx context.Context, from, to int64) (Consistency, error) {
	r := a.read()
	n, err := a.treeSize(ctx, r, to, "to")
	if err != nil {
		return Consistency{}, err
	}
	if from < 1 || from > n {
		return Consistency{}, fault.Validation(fault.Field("from", "must be a tree size from 1 to %d", n))
	}
	hr := treeReader{ctx, r}
	oldRoot, err := tlog.TreeHash(from, hr)
	if err != nil {
		return Consistency{}, err
	}
	newRoot, err := tlog.TreeHash(n, hr)
	if err != nil {
		return Consistency{}, err
	}
	p, err := tlog.ProveTree(n, from, hr)
	if err != nil {
		return Consistency{}, fmt.Errorf("prove tree %d against %d: %w", n, from, err)
	}
	out := Consistency{From: from, To: n, OldRoot: audit.Hash(oldRoot), NewRoot: audit.Hash(newRoot)}
	for _, h := range p {
		out.Proof = append(out.Proof, audit.Hash(h))
	}
	return out, nil
}

package usecase_test

import (
	"context"
	"encoding/hex"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/cursor"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// tlogHashes converts the ledger's hashes for tlog.
func tlogHashes(hs []audit.Hash) []tlog.Hash {
	out := make([]tlog.Hash, len(hs))
	for i, h := range hs {
		out[i] = tlog.Hash(h)
	}
	return out
}

// memTree is a client's own copy of the log's tree: tlog's stored hashes
// by index, computed from the records.
type memTree map[int64]tlog.Hash

func (m memTree) ReadHashes(idx []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(idx))
	for i, x := range idx {
		out[i] = m[x]
	}
	return out, nil
}

// buildTree computes the tree of records (record 0 is the genesis record).
func buildTree(t *testing.T, records [][]byte) memTree {
	t.Helper()
	m := memTree{}
	for n, rec := range records {
		hs, err := tlog.StoredHashes(int64(n), rec, m)
		require.NoError(t, err)
		for i, h := range hs {
			m[tlog.StoredHashIndex(0, int64(n))+int64(i)] = h
		}
	}
	return m
}

// logRecords reads the log's records as a client would: the genesis
// record, then every entry's canonical encoding in seq order.
func logRecords(t *testing.T, app *usecase.App) ([][]byte, []audit.Record) {
	t.Helper()
	listed, err := app.AuditEntries(context.Background(), 1000, 0)
	require.NoError(t, err)
	slices.Reverse(listed)
	out := [][]byte{audit.GenesisRecord}
	recs := make([]audit.Record, len(listed))
	for i, l := range listed {
		require.Equal(t, int64(i+1), l.Entry.Seq)
		out = append(out, l.Encoded)
		recs[i] = l.Record
	}
	return out, recs
}

// signedCheckpoint is the latest checkpoint, opened with the ledger's
// verifier key.
func signedCheckpoint(t *testing.T, app *usecase.App) audit.Checkpoint {
	t.Helper()
	note, err := app.Checkpoint(context.Background())
	require.NoError(t, err)
	c, _, err := audit.OpenCheckpoint(note, app.VerifierKey())
	require.NoError(t, err)
	return c
}

// TestAuditLogProofs: what a client holding signed checkpoints can check.
// Every entry is in the signed tree (inclusion proofs), an earlier
// checkpoint's tree is a prefix of the latest's (consistency proofs), and
// the client's own tree of the entries hashes to the signed roots. An old
// entry rewritten with the chain rewritten after it (so the chain still
// links) is found by a full verification and fails its inclusion proof;
// with the stored tree rewritten too, the sequencer refuses to extend the
// log and the old checkpoint is no longer consistent with the tree.
func TestAuditLogProofs(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Checkpoint(ctx)
		k, _ := kindOf(t, err)
		require.Equal(t, fault.NotFound, k, "no checkpoint before the first batch")

		deposits(t, e.app, "", 2) // seq 1 to 4
		sequence(t, e.app)
		early := signedCheckpoint(t, e.app)
		require.Equal(t, int64(5), early.Size)
		require.Equal(t, usecase.EphemeralAuditKeyName, early.Origin)

		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(50 * cc)}, nil)
		require.NoError(t, err)
		_, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(10 * cc)}, nil)
		require.NoError(t, err)
		deposits(t, e.app, "more", 1) // seq 5 to 8
		sequence(t, e.app)
		require.Equal(t, int64(9), signedCheckpoint(t, e.app).Size)
		// A change of mode is appended at once, after the queue.
		_, err = e.app.Freeze(ctx, signed(opsSecret, "ops", t0, nonceN(0), "drill"))
		require.NoError(t, err)
		require.Equal(t, int64(10), signedCheckpoint(t, e.app).Size, "the freeze is in the log without the sequencer")
		e.clock.Advance(time.Second)
		_, err = e.app.Unfreeze(ctx, "drill over", "admin")
		require.NoError(t, err)
		latest := signedCheckpoint(t, e.app)
		require.Equal(t, int64(11), latest.Size)

		records, recs := logRecords(t, e.app)
		require.Len(t, records, 11)
		require.Equal(t, []string{"deposit", "spread_fee", "deposit", "spread_fee", "stake", "unstake", "deposit", "spread_fee",
			"freeze", "unfreeze"}, func() []string {
			var kinds []string
			for _, r := range recs {
				kinds = append(kinds, r.Entry.Kind)
			}
			return kinds
		}())
		mine := buildTree(t, records)
		for _, c := range []audit.Checkpoint{early, latest} {
			root, err := tlog.TreeHash(c.Size, mine)
			require.NoError(t, err)
			require.Equal(t, c.Root, root, "the client's own tree of %d records hashes to the signed root", c.Size)
		}

		// Inclusion: every record in the latest tree, and the early ones in
		// the early tree.
		for _, c := range []audit.Checkpoint{latest, early} {
			for seq := int64(0); seq < c.Size; seq++ {
				p, err := e.app.InclusionProof(ctx, seq, c.Size)
				require.NoError(t, err)
				require.Equal(t, seq, p.Seq)
				require.Equal(t, c.Size, p.TreeSize)
				require.Equal(t, tlog.RecordHash(records[seq]), tlog.Hash(p.LeafHash), "seq %d: the leaf is the record's", seq)
				require.NoError(t, tlog.CheckRecord(tlogHashes(p.Proof), c.Size, c.Root, seq, tlog.Hash(p.LeafHash)),
					"seq %d in the tree of %d", seq, c.Size)
			}
		}
		p, err := e.app.InclusionProof(ctx, 3, 0)
		require.NoError(t, err)
		require.Equal(t, latest.Size, p.TreeSize, "0: the latest checkpoint's tree")
		_, err = e.app.InclusionProof(ctx, 11, 0)
		k, _ = kindOf(t, err)
		require.Equal(t, fault.NotFound, k, "seq 11 is not in the tree of 11 records")

		// Consistency: the early checkpoint with the latest, and every
		// smaller tree with every larger one (roots the client computes).
		cp, err := e.app.ConsistencyProof(ctx, early.Size, 0)
		require.NoError(t, err)
		require.Equal(t, []int64{early.Size, latest.Size}, []int64{cp.From, cp.To})
		require.Equal(t, early.Root, tlog.Hash(cp.OldRoot))
		require.Equal(t, latest.Root, tlog.Hash(cp.NewRoot))
		require.NoError(t, tlog.CheckTree(tlogHashes(cp.Proof), latest.Size, latest.Root, early.Size, early.Root),
			"the checkpoint taken earlier is a prefix of the latest")
		for from := int64(1); from <= latest.Size; from++ {
			for to := from; to <= latest.Size; to++ {
				cp, err := e.app.ConsistencyProof(ctx, from, to)
				require.NoError(t, err)
				oldRoot, err := tlog.TreeHash(from, mine)
				require.NoError(t, err)
				newRoot, err := tlog.TreeHash(to, mine)
				require.NoError(t, err)
				require.NoError(t, tlog.CheckTree(tlogHashes(cp.Proof), to, newRoot, from, oldRoot), "%d → %d", from, to)
			}
		}
		res, err := e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, res.OK, "%+v", res)

		// Seq 3 (the second deposit) is rewritten, and the chain after it,
		// so that it still links: the chain alone cannot tell.
		const tampered = 3
		prev := recs[tampered-2].Hash
		var head audit.Hash
		require.NoError(t, e.db.Tx(ctx, func(q database.Querier) error {
			for _, r := range recs[tampered-1:] {
				en := r.Entry
				if en.Seq == tampered {
					en.Amount += 1000 * cc
					if _, err := q.Exec(ctx, `UPDATE audit_entries SET amount = $1, encoded = $2 WHERE seq = $3`,
						en.Amount, hex.EncodeToString(audit.Encode(en)), en.Seq); err != nil {
						return err
					}
				}
				h := audit.Chain(prev, en)
				if _, err := q.Exec(ctx, `UPDATE audit_entries SET prev_hash = $1, hash = $2 WHERE seq = $3`,
					prev.String(), h.String(), en.Seq); err != nil {
					return err
				}
				prev, head = h, h
			}
			if _, err := q.Exec(ctx, `UPDATE economy SET audit_head = $1`, head.String()); err != nil {
				return err
			}
			_, err := q.Exec(ctx, `UPDATE audit_checkpoints SET chain = $1`, head.String())
			return err
		}))
		rewritten, rrecs := logRecords(t, e.app)
		require.Equal(t, int64(1000*cc), rrecs[tampered-1].Entry.Amount-recs[tampered-1].Entry.Amount)
		require.True(t, audit.Verify(rrecs).OK, "the rewritten chain links")

		res, err = e.app.WalkAudit(ctx, true) // the walk alone: its finding would stop the deposit below
		require.NoError(t, err)
		require.False(t, res.OK)
		require.Equal(t, int64(tampered), res.FirstDivergent)
		require.Equal(t, int64(tampered-1), res.LastVerified)
		require.Equal(t, "the entry is not the one the log signed: its encoding does not hash to the tree's leaf", res.Reason)

		for _, c := range []audit.Checkpoint{early, latest} {
			p, err := e.app.InclusionProof(ctx, tampered, c.Size)
			require.NoError(t, err)
			require.Equal(t, tlog.RecordHash(rewritten[tampered]), tlog.Hash(p.LeafHash), "the entry as stored now")
			require.Error(t, tlog.CheckRecord(tlogHashes(p.Proof), c.Size, c.Root, tampered, tlog.Hash(p.LeafHash)),
				"the rewritten entry is not in the tree of %d the ledger signed", c.Size)
			require.NoError(t, tlog.CheckRecord(tlogHashes(p.Proof), c.Size, c.Root, tampered, tlog.RecordHash(records[tampered])),
				"the entry the client kept still is")
		}

		// The stored tree is rewritten to match the rewritten entries.
		forged := buildTree(t, rewritten)
		require.NoError(t, e.db.Tx(ctx, func(q database.Querier) error {
			for idx, h := range forged {
				n, err := q.Exec(ctx, `UPDATE audit_tree SET hash = $1 WHERE idx = $2`, audit.Hash(h).String(), idx)
				if err != nil {
					return err
				}
				require.Equal(t, int64(1), n, "stored hash %d", idx)
			}
			return nil
		}))
		res, err = e.app.WalkAudit(ctx, true) // the walk alone: its finding would stop the deposit below
		require.NoError(t, err)
		require.False(t, res.OK)
		require.Equal(t, "the stored tree does not hash to the signed checkpoint's root", res.Reason)

		deposits(t, e.app, "after", 1)
		_, err = e.app.Sequence(ctx)
		require.ErrorIs(t, err, usecase.ErrLogTampered)
		backlog, err := e.app.AuditBacklog(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(3), backlog.Entries, "the deposit's entries wait in the queue, and the read_only its refusal caused")
		require.Equal(t, usecase.ModeReadOnly, mode(t, e.app), "the sequencer's refusal is a finding")
		require.Equal(t, latest, signedCheckpoint(t, e.app), "nothing was signed")

		cp, err = e.app.ConsistencyProof(ctx, early.Size, 0)
		require.NoError(t, err)
		require.NotEqual(t, latest.Root, tlog.Hash(cp.NewRoot), "the stored tree is not the signed one")
		require.Error(t, tlog.CheckTree(tlogHashes(cp.Proof), latest.Size, latest.Root, early.Size, early.Root),
			"the early checkpoint is no longer consistent with what the ledger serves")
	})
}

// TestAuditPageByCursor: a page read by its predecessor's cursor starts
// right after that page's last entry however many entries were sequenced
// meanwhile (an offset would shift by them), says its true offset, and
// gives no cursor on the last page; a cursor of another list, a made-up
// one, or a cursor with an offset is a 422 naming the field.
func TestAuditPageByCursor(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "a", 3) // entries 1..6
		sequence(t, e.app)
		seqs := func(l usecase.Listed[store.ListedRecord]) []int64 {
			var out []int64
			for _, r := range l.Items {
				out = append(out, r.Entry.Seq)
			}
			return out
		}
		two := int32(2)
		first, err := e.app.AuditPage(ctx, usecase.Page{Limit: &two})
		require.NoError(t, err)
		require.Equal(t, []int64{6, 5}, seqs(first))
		require.Equal(t, 6, first.Total)
		require.NotEmpty(t, first.Next)

		deposits(t, e.app, "b", 2) // entries 7..10 land at the head
		sequence(t, e.app)
		second, err := e.app.AuditPage(ctx, usecase.Page{Limit: &two, Cursor: first.Next})
		require.NoError(t, err)
		require.Equal(t, []int64{4, 3}, seqs(second), "after entry 5, not shifted by the four new ones")
		require.Equal(t, 10, second.Total)
		require.Equal(t, 6, second.Offset, "entries 10..5 precede it")
		last, err := e.app.AuditPage(ctx, usecase.Page{Limit: &two, Cursor: second.Next})
		require.NoError(t, err)
		require.Equal(t, []int64{2, 1}, seqs(last))
		require.Empty(t, last.Next, "entry 1 ends the log")

		for name, p := range map[string]usecase.Page{
			"another list's": {Cursor: cursor.Encode("tasks", "1", "x")},
			"made up":        {Cursor: "bm90LWEtY3Vyc29y"},
			"with an offset": {Cursor: first.Next, Offset: 2},
			"too deep":       {Offset: cursor.MaxOffset + 1},
		} {
			_, err := e.app.AuditPage(ctx, p)
			fe, ok := fault.As(err)
			require.True(t, ok, name)
			require.Equal(t, fault.Invalid, fe.Kind, name)
			require.Len(t, fe.Fields, 1, name)
		}
	})
}

// TestInclusionProofProvesTheEntryShown: a proof carries the entry as the
// log's list shows it, and its leaf is computed from those fields. A
// column edited after the entry was sequenced (the subject =
// 'mallory' and amount = 1, the stored encoding left as it was) is what the
// list shows and what the proof hashes, so the proof fails against the
// signed root, where it used to pass on the untouched encoding.
func TestInclusionProofProvesTheEntryShown(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "", 3) // seq 1 to 6
		sequence(t, e.app)
		c := signedCheckpoint(t, e.app)
		for seq := int64(1); seq < c.Size; seq++ {
			p, err := e.app.InclusionProof(ctx, seq, 0)
			require.NoError(t, err)
			require.NotNil(t, p.Entry)
			require.Equal(t, seq, p.Entry.Entry.Seq)
			require.Equal(t, audit.Leaf(p.Entry.Entry), p.LeafHash)
			require.NoError(t, tlog.CheckRecord(tlogHashes(p.Proof), c.Size, c.Root, seq, tlog.Hash(p.LeafHash)), "seq %d", seq)
		}
		genesis, err := e.app.InclusionProof(ctx, 0, 0)
		require.NoError(t, err)
		require.Nil(t, genesis.Entry, "record 0 is the genesis record, no entry")
		require.Equal(t, audit.LeafHash(audit.GenesisRecord), genesis.LeafHash)

		for _, edit := range []string{`UPDATE audit_entries SET subject = 'mallory' WHERE seq = 1`,
			`UPDATE audit_entries SET amount = 1 WHERE seq = 5`} {
			n, err := e.db.Exec(ctx, edit)
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
		}
		for seq, shown := range map[int64]func(audit.Entry) bool{
			1: func(en audit.Entry) bool { return en.Subject == "mallory" },
			5: func(en audit.Entry) bool { return en.Amount == 1 },
		} {
			p, err := e.app.InclusionProof(ctx, seq, 0)
			require.NoError(t, err)
			require.True(t, shown(p.Entry.Entry), "seq %d: the proof shows the entry as stored now: %+v", seq, p.Entry.Entry)
			require.Equal(t, audit.Leaf(p.Entry.Entry), p.LeafHash, "seq %d: the leaf of what is shown", seq)
			require.Error(t, tlog.CheckRecord(tlogHashes(p.Proof), c.Size, c.Root, seq, tlog.Hash(p.LeafHash)),
				"seq %d: the entry shown is not the one the log signed", seq)
		}
		p, err := e.app.InclusionProof(ctx, 3, 0)
		require.NoError(t, err)
		require.NoError(t, tlog.CheckRecord(tlogHashes(p.Proof), c.Size, c.Root, 3, tlog.Hash(p.LeafHash)), "an untouched entry still proves")
	})
}

// forkRoot is the root of the tree of n records in tree.
func forkRoot(t *testing.T, tree memTree, n int64) tlog.Hash {
	t.Helper()
	root, err := tlog.TreeHash(n, tree)
	require.NoError(t, err)
	return root
}

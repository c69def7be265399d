package handler_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/handler"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/auditlog/auditlogtest"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestAuditProofsPastTwoToThe31: in a log of 2^31+5 records, the proof
// routes prove an entry at seq 2^31+3 and the tree's consistency with one
// below 2^31, on both engines. The store holds what those proofs read of
// a tree whose records are all the genesis record but that entry (a
// deposit's entry, moved to its seq); sizes and seqs stay 64-bit from the
// store to the answer (they were int32 in the API, and a proof past 2^31
// asked for a tree of a negative size).
func TestAuditProofsPastTwoToThe31(t *testing.T) {
	t.Parallel()
	const size, seq, old = 1<<31 + 5, 1<<31 + 3, 1<<31 - 3
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		app, db := newApp(t, engine)
		_, err := app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada-id", AmountUSD: 1, Reference: "r"}, nil)
		require.NoError(t, err)
		for {
			n, err := app.Sequence(ctx)
			require.NoError(t, err)
			if n == 0 {
				break
			}
		}
		exec := func(query string) {
			t.Helper()
			_, err := db.Exec(ctx, query)
			require.NoError(t, err, query)
		}
		exec(fmt.Sprintf(`UPDATE audit_entries SET seq = %d WHERE seq = (SELECT MAX(seq) FROM audit_entries)`, seq))
		listed, err := app.AuditEntries(ctx, 1, 0)
		require.NoError(t, err)
		require.Equal(t, int64(seq), listed[0].Entry.Seq)
		leaf := tlog.Hash(audit.Leaf(listed[0].Entry))

		tree := auditlogtest.NewSparseTree(size, tlog.Hash(audit.LeafHash(audit.GenesisRecord)), map[int64]tlog.Hash{seq: leaf})
		root, err := tree.Root(size)
		require.NoError(t, err)
		oldRoot, err := tree.Root(old)
		require.NoError(t, err)
		_, err = tlog.ProveRecord(size, seq, tree)
		require.NoError(t, err)
		_, err = tlog.ProveTree(size, old, tree)
		require.NoError(t, err)
		exec(`DELETE FROM audit_tree`)
		for idx, h := range tree.Read {
			exec(fmt.Sprintf(`INSERT INTO audit_tree (idx, hash) VALUES (%d, '%s')`, idx, audit.Hash(h)))
		}
		exec(fmt.Sprintf(`UPDATE audit_checkpoints SET tree_size = %d, root = '%s' WHERE name = 'latest'`, size, audit.Hash(root)))

		h := handler.New(app, handler.Options{Clock: clock.NewFake(t0)})
		p, err := h.GetAuditProof(ctx, &ledgerv1.GetAuditProofRequest{Seq: seq})
		require.NoError(t, err)
		require.Equal(t, int64(seq), p.GetSeq())
		require.Equal(t, int64(size), p.GetTreeSize())
		require.Equal(t, int64(seq), p.GetEntry().GetSeq())
		require.Equal(t, b64(leaf), p.GetLeafHash())
		require.NoError(t, tlog.CheckRecord(unb64s(t, p.GetProof()), size, root, seq, leaf))

		c, err := h.GetAuditConsistency(ctx, &ledgerv1.GetAuditConsistencyRequest{From: old})
		require.NoError(t, err)
		require.Equal(t, int64(old), c.GetFrom())
		require.Equal(t, int64(size), c.GetTo())
		require.Equal(t, b64(oldRoot), c.GetOldRoot())
		require.Equal(t, b64(root), c.GetNewRoot())
		require.NoError(t, tlog.CheckTree(unb64s(t, c.GetProof()), size, root, old, oldRoot))

		_, err = h.GetAuditProof(ctx, &ledgerv1.GetAuditProofRequest{Seq: seq, TreeSize: size + 1})
		require.Error(t, err, "past the latest checkpoint")
	})
}

func b64(h tlog.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

func unb64s(t *testing.T, ss []string) []tlog.Hash {
	t.Helper()
	out := make([]tlog.Hash, len(ss))
	for i, s := range ss {
		b, err := base64.StdEncoding.DecodeString(s)
		require.NoError(t, err)
		require.Len(t, b, len(tlog.Hash{}))
		copy(out[i][:], b)
	}
	return out
}

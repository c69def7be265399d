package usecase_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	fnote "github.com/transparency-dev/formats/note"
	"github.com/transparency-dev/witness/persistence/inmemory"
	"github.com/transparency-dev/witness/witness"
	"golang.org/x/mod/sumdb/note"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// libWitness is transparency-dev's witness itself, in memory, as the
// ledger's usecase.Witness: what foundry audit witness serves over HTTP.
type libWitness struct {
	key string
	w   *witness.Witness
}

func newLibWitness(t *testing.T, logKey string) libWitness {
	t.Helper()
	skey, vkey, err := note.GenerateKey(nil, "test-witness")
	require.NoError(t, err)
	signer, err := fnote.NewSignerForCosignatureV1(skey)
	require.NoError(t, err)
	logV, err := note.NewVerifier(logKey)
	require.NoError(t, err)
	w, err := witness.New(context.Background(), witness.Opts{Persistence: inmemory.New(), Signers: []note.Signer{signer},
		VerifierForLog: func(_ context.Context, origin string) (note.Verifier, bool, error) {
			return logV, origin == logV.Name(), nil
		}})
	require.NoError(t, err)
	return libWitness{key: vkey, w: w}
}

func (l libWitness) Key() string { return l.key }

func (l libWitness) AddCheckpoint(ctx context.Context, oldSize int64, signed string, proof []audit.Hash) (string, int64, error) {
	p := make([][]byte, len(proof))
	for i, h := range proof {
		p[i] = append([]byte(nil), h[:]...)
	}
	sigs, size, err := l.w.Update(ctx, uint64(oldSize), []byte(signed), p)
	switch {
	case errors.Is(err, witness.ErrCheckpointStale):
		return "", int64(size), usecase.ErrWitnessStale
	case errors.Is(err, witness.ErrInvalidProof), errors.Is(err, witness.ErrRootMismatch):
		return "", 0, fmt.Errorf("%w: %w", usecase.ErrWitnessRefused, err)
	}
	return string(sigs), 0, err
}

// cosignedBy reports whether the served checkpoint carries a valid
// cosignature by the witness.
func cosignedBy(t *testing.T, served string, log, w string) bool {
	t.Helper()
	lv, err := note.NewVerifier(log)
	require.NoError(t, err)
	wv, err := fnote.NewVerifierForCosignatureV1(w)
	require.NoError(t, err)
	n, err := note.Open([]byte(served), note.VerifierList(lv, wv))
	require.NoError(t, err)
	for _, s := range n.Sigs {
		if s.Name == wv.Name() && s.Hash == wv.KeyHash() {
			return true
		}
	}
	return false
}

// TestWitnessCosignsTheLog: the ledger asks its witness to cosign each
// checkpoint, from the size it cosigned last (a consistency proof from
// it), and serves the checkpoint it cosigned; a witness that forgot
// where it was is asked again from its own size; a fork signed with the
// ledger's own key the witness refuses, which stops the economy.
func TestWitnessCosignsTheLog(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		w := newLibWitness(t, testSigner.VerifierKey())
		app := usecase.New(e.db, repos, usecase.Config{AuditSigner: testSigner, Clock: e.clock, Ideas: ideas{},
			Witnesses: []usecase.Witness{w}})
		deposits(t, app, "", 1)
		sequence(t, app)
		round, err := app.WitnessCheckpoint(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, round.Cosigned, "%v", round.Failed)
		served, err := app.Checkpoint(ctx)
		require.NoError(t, err)
		require.True(t, cosignedBy(t, served, testSigner.VerifierKey(), w.Key()))
		require.True(t, strings.HasPrefix(served, fmt.Sprintf("%s\n%d\n", testSigner.Origin(), round.Size)))

		// The log grows: cosigned from the last size, with the proof.
		deposits(t, app, "more", 2)
		sequence(t, app)
		round, err = app.WitnessCheckpoint(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, round.Cosigned, "%v", round.Failed)
		require.Equal(t, int64(7), round.Size)
		served, err = app.Checkpoint(ctx)
		require.NoError(t, err)
		require.Contains(t, served, "\n7\n")

		// The ledger's record of the witness lost: the witness says where
		// it is, and is asked again from there.
		exec(t, e.db, `UPDATE audit_witnesses SET tree_size = 0, note = ''`)
		deposits(t, app, "again", 1)
		sequence(t, app)
		round, err = app.WitnessCheckpoint(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, round.Cosigned, "%v", round.Failed)

		// A fork with the ledger's own key: seq 3 rewritten, the tree
		// rebuilt, the checkpoint re-signed. The witness refuses it.
		_, records := logRecords(t, app)
		leaves := [][]byte{audit.GenesisRecord}
		for _, r := range records {
			en := r.Entry
			if en.Seq == 3 {
				en.Amount++
			}
			leaves = append(leaves, audit.Encode(en))
		}
		tree := buildTree(t, leaves)
		for idx, h := range tree {
			exec(t, e.db, fmt.Sprintf(`UPDATE audit_tree SET hash = '%s' WHERE idx = %d`, audit.Hash(h).String(), idx))
		}
		root := forkRoot(t, tree, int64(len(leaves)))
		note, err := testSigner.Sign(audit.Checkpoint{Origin: testSigner.Origin(), Size: int64(len(leaves)), Root: root})
		require.NoError(t, err)
		require.NoError(t, e.db.Tx(ctx, func(q database.Querier) error {
			_, err := q.Exec(ctx, `UPDATE audit_checkpoints SET root = $1, note = $2 WHERE name = 'latest'`, audit.Hash(root).String(), note)
			return err
		}))
		round, err = app.WitnessCheckpoint(ctx)
		require.NoError(t, err)
		require.Zero(t, round.Cosigned)
		require.ErrorIs(t, round.Failed[w.Key()], usecase.ErrWitnessRefused)
		require.Equal(t, usecase.ModeReadOnly, mode(t, app), "a refusal is a finding")
		served, err = app.Checkpoint(ctx)
		require.NoError(t, err)
		body, _, _ := strings.Cut(note, "\n\n")
		require.NotContains(t, served, body, "the fork is never served cosigned")
	})
}

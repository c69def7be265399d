package usecase_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/auditlog"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// newSigner makes a signing key named name.
func newSigner(t *testing.T, name string) *audit.Signer {
	t.Helper()
	skey, _, err := audit.GenerateKey(name)
	require.NoError(t, err)
	s, err := audit.NewSigner(skey)
	require.NoError(t, err)
	return s
}

// TestForgedCheckpointIsTampering is the forgery: seq 3 rewritten
// (another contributor, 100 times the amount), the entries resealed, the
// tree rebuilt and a checkpoint over it signed with a fresh key of one's
// own. It used to be taken for a key rotation: verification answered
// valid and the sequencer signed the forged tree with the real key. Now
// both refuse it, the economy goes read_only at once, and nothing is ever
// signed over it.
func TestForgedCheckpointIsTampering(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "", 3)
		sequence(t, e.app)
		_, records := logRecords(t, e.app)
		real, err := e.app.Checkpoint(ctx)
		require.NoError(t, err)

		// The forger's log: seq 3 rewritten, every hash after it resealed,
		// the tree rebuilt from the forged entries, a checkpoint signed by
		// their key over it, as the latest and the verified one.
		forger := newSigner(t, usecase.EphemeralAuditKeyName)
		prev := records[1].Hash
		leaves := [][]byte{audit.GenesisRecord}
		require.NoError(t, e.db.Tx(ctx, func(q database.Querier) error {
			for _, r := range records {
				en := r.Entry
				if en.Seq == 3 {
					en.Subject, en.Amount = "bob", en.Amount*100
				}
				if en.Seq >= 3 {
					sealed := audit.Seal(prev, en)
					if _, err := q.Exec(ctx, `UPDATE audit_entries SET subject = $1, amount = $2, encoded = $3, prev_hash = $4, hash = $5
						WHERE seq = $6`, en.Subject, en.Amount, fmt.Sprintf("%x", sealed.Encoded), prev.String(), sealed.Hash.String(), en.Seq); err != nil {
						return err
					}
					prev = sealed.Hash
				}
				leaves = append(leaves, audit.Encode(en))
			}
			tree := buildTree(t, leaves)
			for idx, h := range tree {
				if _, err := q.Exec(ctx, `UPDATE audit_tree SET hash = $1 WHERE idx = $2`, audit.Hash(h).String(), idx); err != nil {
					return err
				}
			}
			root, err := tlog.TreeHash(int64(len(leaves)), tree)
			if err != nil {
				return err
			}
			note, err := forger.Sign(audit.Checkpoint{Origin: forger.Origin(), Size: int64(len(leaves)), Root: root})
			if err != nil {
				return err
			}
			if _, err := q.Exec(ctx, `UPDATE economy SET audit_head = $1`, prev.String()); err != nil {
				return err
			}
			_, err = q.Exec(ctx, `UPDATE audit_checkpoints SET root = $1, chain = $2, note = $3`, audit.Hash(root).String(), prev.String(), note)
			return err
		}))

		for _, full := range []bool{true, false} {
			v, err := e.app.VerifyAudit(ctx, full)
			require.NoError(t, err)
			require.False(t, v.Valid(), "full %v: %+v", full, v)
			require.True(t, v.Untrusted)
			_, reason := v.Divergent()
			require.Contains(t, reason, "signed by no key this ledger trusts")
		}
		require.Equal(t, usecase.ModeReadOnly, mode(t, e.app), "at once")
		open, err := e.app.OpenFindings(ctx)
		require.NoError(t, err)
		require.Equal(t, usecase.FindingCheckpoint, open.Open[0].Kind)

		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(cc)}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Equal(t, "read_only", detail)
		_, err = e.app.Sequence(ctx)
		require.ErrorIs(t, err, usecase.ErrUntrustedKey, "the sequencer does not sign over the forgery")
		note, err := e.app.Checkpoint(ctx)
		require.NoError(t, err)
		_, _, err = audit.OpenCheckpoint(note, e.app.VerifierKey())
		require.ErrorIs(t, err, audit.ErrOtherKey, "the forger's checkpoint stays the forger's: nothing was signed with the real key")
		require.NotEqual(t, real, note)
		found := scrubCycle(t, e.app)
		require.NotEmpty(t, found)
		require.Equal(t, usecase.FindingCheckpoint, found[0].Kind, "the scrubber refuses it too")
		_, err = e.app.RepairAudit(ctx, "admin")
		k, _ = kindOf(t, err)
		require.Equal(t, fault.Conflict, k, "a forged history is not repaired from what is stored")
	})
}

// TestRotationNeedsThePreviousKey: a ledger restarted with a new signing
// key takes the checkpoints of the old one only when it is given the old
// one's verifier key; then it records the change in the log, signed by
// the new key alone (the old one was not given to countersign), signs on
// with the new key and warns once.
func TestRotationNeedsThePreviousKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "", 1)
		sequence(t, e.app)
		next := newSigner(t, usecase.EphemeralAuditKeyName)

		unknown := usecase.New(e.db, repos, usecase.Config{AuditSigner: next, Clock: e.clock, Ideas: ideas{}})
		deposits(t, unknown, "unknown", 1)
		_, err := unknown.Sequence(ctx)
		require.ErrorIs(t, err, usecase.ErrUntrustedKey, "an old key it was not given is no rotation")
		require.Equal(t, usecase.ModeReadOnly, mode(t, unknown), "its refusal is a finding")
		_, err = unknown.RepairAudit(ctx, "admin")
		k, _ := kindOf(t, err)
		require.Equal(t, fault.Conflict, k, "no repair makes another key's checkpoints its own")

		rotated := usecase.New(e.db, repos, usecase.Config{AuditSigner: next, AuditPreviousKeys: []string{testSigner.VerifierKey()},
			Clock: e.clock, Ideas: ideas{}})
		sequence(t, rotated)
		note, err := rotated.Checkpoint(ctx)
		require.NoError(t, err)
		_, by, err := audit.OpenCheckpoint(note, next.VerifierKey(), testSigner.VerifierKey())
		require.NoError(t, err)
		require.Equal(t, next.VerifierKey(), by, "signed on with the new key")
		v, err := rotated.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, v.OK, "%+v", v)
		require.False(t, v.Valid(), "the unknown key's finding stays open until a repair")
		rep, err := rotated.RepairAudit(ctx, "admin")
		require.NoError(t, err)
		require.Equal(t, 1, rep.Resolved)
		require.Equal(t, usecase.ModeNormal, rep.Mode)
		page, err := items(rotated.Incidents(ctx, page(20, 0)))
		require.NoError(t, err)
		var rotations int
		for _, in := range page {
			if in.Kind == "audit_key_rotated" {
				rotations++
				require.Equal(t, "warning", in.Severity, "clients cannot follow the change by signature")
				require.Contains(t, in.Detail, testSigner.VerifierKey())
				require.Contains(t, in.Detail, "without the old key's countersignature")
			}
		}
		require.Equal(t, 1, rotations, "%+v", page)
		changes, err := rotated.KeyChanges(ctx)
		require.NoError(t, err)
		require.Len(t, changes, 1)
		require.False(t, changes[0].Countersigned)
		change, countersigned, err := auditlog.OpenKeyChange(changes[0].Statement)
		require.NoError(t, err)
		require.False(t, countersigned)
		require.Equal(t, auditlog.KeyChange{Origin: next.Origin(), Seq: changes[0].Seq, From: testSigner.VerifierKey(),
			To: next.VerifierKey()}, change)
	})
}

// TestKeyChangeIsCountersignedAndRetiresTheOldKey: given the old signing
// key for the rotation, the ledger records the change as a key_changed
// entry whose statement both keys signed, the first entry the new key's
// checkpoint covers. From then on the old key is retired: a checkpoint
// it signs over the log — by whoever still holds it — is tampering, and
// nothing is signed over it.
func TestKeyChangeIsCountersignedAndRetiresTheOldKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "", 1) // seq 1 and its fee, seq 2
		sequence(t, e.app)
		next := newSigner(t, usecase.EphemeralAuditKeyName)
		rotated := usecase.New(e.db, repos, usecase.Config{AuditSigner: next, AuditPreviousSigner: testSigner, Clock: e.clock,
			Ideas: ideas{}})
		deposits(t, rotated, "after", 1)
		sequence(t, rotated)

		changes, err := rotated.KeyChanges(ctx)
		require.NoError(t, err)
		require.Len(t, changes, 1)
		require.Equal(t, int64(3), changes[0].Seq, "the first entry of the new key's first batch")
		require.Equal(t, testSigner.VerifierKey(), changes[0].From)
		require.Equal(t, next.VerifierKey(), changes[0].To)
		require.True(t, changes[0].Countersigned)
		k, countersigned, err := auditlog.OpenKeyChange(changes[0].Statement)
		require.NoError(t, err)
		require.True(t, countersigned, "signed by both keys")
		require.Equal(t, auditlog.KeyChange{Origin: next.Origin(), Seq: 3, From: testSigner.VerifierKey(), To: next.VerifierKey()}, k)

		note, err := rotated.Checkpoint(ctx)
		require.NoError(t, err)
		cp, by, err := audit.OpenCheckpoint(note, next.VerifierKey(), testSigner.VerifierKey())
		require.NoError(t, err)
		require.Equal(t, next.VerifierKey(), by)
		require.Equal(t, int64(6), cp.Size, "the change, the deposit and its fee after the first two")
		v, err := rotated.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, v.Valid(), "%+v", v)
		page, err := items(rotated.Incidents(ctx, page(20, 0)))
		require.NoError(t, err)
		require.Equal(t, "audit_key_rotated", page[0].Kind)
		require.Equal(t, "info", page[0].Severity)
		require.Contains(t, page[0].Detail, "(entry 3, countersigned by the old key)")

		// A replica restarted with the old key (and the new one among its
		// previous keys) does not change the key back.
		back := usecase.New(e.db, repos, usecase.Config{AuditSigner: testSigner, AuditPreviousKeys: []string{next.VerifierKey()},
			Clock: e.clock, Ideas: ideas{}})
		deposits(t, back, "back", 1)
		_, err = back.Sequence(ctx)
		require.ErrorIs(t, err, usecase.ErrRetiredKey)
		require.Contains(t, err.Error(), "it was retired at seq 3, when the log's key changed to "+next.VerifierKey())
		require.Equal(t, usecase.ModeNormal, mode(t, back), "a mistake of configuration, not damage: no finding")
		sequence(t, rotated) // the current key sequences the deposit

		// Whoever still holds the old key signs the log's tree with it, as
		// the latest checkpoint.
		latest, err := sqlstore.NewAudit(e.db).Checkpoint(ctx, "latest")
		require.NoError(t, err)
		latest.Note, err = testSigner.Sign(audit.Checkpoint{Origin: testSigner.Origin(), Size: latest.Size, Root: tlog.Hash(latest.Root)})
		require.NoError(t, err)
		require.NoError(t, sqlstore.NewAudit(e.db).SaveCheckpoint(ctx, "latest", latest))
		e.clock.Advance(10 * time.Second) // past the cached answer
		v, err = rotated.VerifyAudit(ctx, false)
		require.NoError(t, err)
		require.False(t, v.Valid())
		require.True(t, v.Untrusted)
		_, reason := v.Divergent()
		require.Contains(t, reason, "which the log retired at seq 3 (its change to "+next.VerifierKey()+")")
		require.Equal(t, usecase.ModeReadOnly, mode(t, rotated), "at once")
		found := scrubCycle(t, rotated)
		require.NotEmpty(t, found)
		require.Equal(t, usecase.FindingCheckpoint, found[0].Kind, "the scrubber refuses it too")
		_, err = rotated.RepairAudit(ctx, "admin")
		kind, _ := kindOf(t, err)
		require.Equal(t, fault.Conflict, kind, "no repair signs over the retired key's checkpoint")
		got, err := rotated.Checkpoint(ctx)
		require.NoError(t, err)
		require.Equal(t, latest.Note, got)
	})
}

// brokenTree is an audit store whose tree reads fail as a cut database
// session does, while fail is set.
type brokenTree struct {
	store.Audit
	fail *atomic.Bool
}

func (b brokenTree) TreeHashes(ctx context.Context, idx []int64) ([]audit.Hash, error) {
	if b.fail.Load() {
		return nil, errors.New("read the audit tree: unexpected EOF")
	}
	return b.Audit.TreeHashes(ctx, idx)
}

// TestACutSessionIsNoTampering: the sequencer loading the tree over a
// database session that was cut took the read's failure for a tree
// that is not what the ledger signed, recorded a finding and put the
// economy in read_only (the chaos test, Postgres, sessions cut). Now the
// batch fails, the economy stays normal, and the next batch goes on.
func TestACutSessionIsNoTampering(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "ledger", store.Migrations())
		var fail atomic.Bool
		app := usecase.New(db, func(q database.Querier) usecase.Repos {
			r := repos(q)
			r.Audit = brokenTree{Audit: r.Audit, fail: &fail}
			return r
		}, usecase.Config{Clock: clock.NewFake(t0), Ideas: ideas{}, AuditSigner: testSigner})
		ctx := context.Background()
		require.NoError(t, app.Register(ctx, store.Contributor{ID: "ada", Handle: "ada", TrustLevel: "tofu", CreatedAt: t0},
			store.Session{TokenHash: "hash-ada", CreatedAt: t0}))
		deposits(t, app, "", 2)
		sequence(t, app)
		deposits(t, app, "more-", 2)

		fail.Store(true)
		_, err := app.Sequence(ctx)
		require.Error(t, err)
		require.NotErrorIs(t, err, usecase.ErrLogTampered, "a failed read is no tampering")
		s, err := app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, "normal", s.Mode, "no finding, no read_only")

		fail.Store(false)
		sequence(t, app)
		v, err := app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, v.Valid(), "the next batch sequenced them: %+v", v)
	})
}

package usecase_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/cursor"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// The freeze signers' secrets of these tests (32 bytes and more, as the
// configuration requires).
const (
	opsSecret   = "ops-secret-0123456789abcdef01234"
	auditSecret = "audit-secret-0123456789abcdef0123456789"
)

// signed is a freeze by signer, signed with secret at issued with nonce.
func signed(secret, signer string, issued time.Time, nonce, reason string) usecase.FreezeCmd {
	f := credit.SignedFreeze{SignerID: signer, IssuedAt: issued.UTC().Format(time.RFC3339), Nonce: nonce, Reason: reason}
	f.Signature = credit.SignFreeze(secret, f)
	return f
}

// nonceN is a distinct valid nonce per n.
func nonceN(n int) string { return fmt.Sprintf("%032x", n+1) }

func TestFreezeAndUnfreeze(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r"}, nil)
		require.NoError(t, err)

		m, err := e.app.Freeze(ctx, signed(opsSecret, "ops", t0, nonceN(0), "oracle compromised"))
		require.NoError(t, err)
		require.Equal(t, usecase.ModeFrozen, m.Mode)
		sequence(t, e.app)
		recs, err := e.app.AuditEntries(ctx, 1, 0)
		require.NoError(t, err)
		require.Equal(t, map[string]string{"from": "normal", "to": "frozen", "reason": "oracle compromised",
			"issued_at": "2026-11-23T09:00:00Z", "nonce": nonceN(0)}, recs[0].Entry.Attrs)
		require.Equal(t, "signer:ops", recs[0].Entry.Actor)

		_, err = e.app.Freeze(ctx, signed(opsSecret, "ops", t0, nonceN(1), "again"))
		k, _ := kindOf(t, err)
		require.Equal(t, fault.Conflict, k)

		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(cc)}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Equal(t, "frozen", detail)
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(cc), Reference: "r2"}, nil)
		_, detail = kindOf(t, err)
		require.Equal(t, "frozen", detail)

		e.clock.Advance(time.Second)
		_, err = e.app.Unfreeze(ctx, "all clear", "admin")
		require.NoError(t, err)
		_, err = e.app.Unfreeze(ctx, "again", "admin")
		k, _ = kindOf(t, err)
		require.Equal(t, fault.Conflict, k)
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(cc)}, nil)
		require.NoError(t, err)

		incidents, err := items(e.app.Incidents(ctx, page(10, 0)))
		require.NoError(t, err)
		require.Len(t, incidents, 2)
		require.Equal(t, "unfreeze", incidents[0].Kind)
		require.Equal(t, "freeze", incidents[1].Kind)
		requireSound(t, e)
	})
}

// TestFreezeRefusals: a freeze must be well formed (422), signed over its
// signer, time, nonce and reason by that signer (403), within 5 minutes of
// the ledger's clock (403), with a nonce never seen before (403), even
// after a restart; nothing refused writes anything.
func TestFreezeRefusals(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		good := signed(opsSecret, "ops", t0, nonceN(0), "oracle compromised")

		t.Run("malformed: 422 naming the field", func(t *testing.T) {
			for name, c := range map[string]struct {
				cmd    usecase.FreezeCmd
				fields []string
			}{
				"the old reason-only body": {usecase.FreezeCmd{SignerID: "ops", Reason: "x", Signature: credit.SignFreeze(opsSecret, credit.SignedFreeze{Reason: "x"})},
					[]string{"issued_at", "nonce"}},
				"nothing": {usecase.FreezeCmd{}, []string{"signer_id", "issued_at", "nonce", "reason", "signature"}},
				"not UTC": {with(good, func(c *usecase.FreezeCmd) { c.IssuedAt = "2026-11-23T10:00:00+01:00" }), []string{"issued_at"}},
				"no zone": {with(good, func(c *usecase.FreezeCmd) { c.IssuedAt = "2026-11-23T09:00:00" }), []string{"issued_at"}},
				"a date":  {with(good, func(c *usecase.FreezeCmd) { c.IssuedAt = "2026-11-23" }), []string{"issued_at"}},
				"Unix":    {with(good, func(c *usecase.FreezeCmd) { c.IssuedAt = "1795424400" }), []string{"issued_at"}},
				"short nonce": {with(good, func(c *usecase.FreezeCmd) { c.Nonce = strings.Repeat("a", 15) }),
					[]string{"nonce"}},
				"long nonce": {with(good, func(c *usecase.FreezeCmd) { c.Nonce = strings.Repeat("a", 65) }),
					[]string{"nonce"}},
				"nonce not hex": {with(good, func(c *usecase.FreezeCmd) { c.Nonce = strings.Repeat("g", 32) }),
					[]string{"nonce"}},
				"long reason": {with(good, func(c *usecase.FreezeCmd) { c.Reason = strings.Repeat("r", 501) }),
					[]string{"reason"}},
			} {
				_, err := e.app.Freeze(ctx, c.cmd)
				fe, ok := fault.As(err)
				require.True(t, ok, "%s: %v", name, err)
				require.Equal(t, fault.Invalid, fe.Kind, name)
				var fields []string
				for _, f := range fe.Fields {
					fields = append(fields, f.Field)
				}
				require.Equal(t, c.fields, fields, name)
			}
		})

		t.Run("not signed by the signer over every field: 403", func(t *testing.T) {
			for name, cmd := range map[string]usecase.FreezeCmd{
				"another signer's secret": signed(auditSecret, "ops", t0, nonceN(0), "x"),
				"unknown signer":          signed(opsSecret, "nobody", t0, nonceN(0), "x"),
				"signer id, wrong case":   signed(opsSecret, "OPS", t0, nonceN(0), "x"),
				"not hex":                 with(good, func(c *usecase.FreezeCmd) { c.Signature = "zz" }),
				"the old signature":       with(good, func(c *usecase.FreezeCmd) { c.Signature = credit.SignFreeze(opsSecret, credit.SignedFreeze{}) }),
				"reason changed":          with(good, func(c *usecase.FreezeCmd) { c.Reason = "something else" }),
				"time changed":            with(good, func(c *usecase.FreezeCmd) { c.IssuedAt = "2026-11-23T09:00:01Z" }),
				"nonce changed":           with(good, func(c *usecase.FreezeCmd) { c.Nonce = nonceN(7) }),
				"signer changed":          with(good, func(c *usecase.FreezeCmd) { c.SignerID = "audit" }),
				"the reason's HMAC": with(good, func(c *usecase.FreezeCmd) {
					c.Signature = credit.SignFreeze(opsSecret, credit.SignedFreeze{Reason: c.Reason})
				}),
			} {
				_, err := e.app.Freeze(ctx, cmd)
				k, detail := kindOf(t, err)
				require.Equal(t, fault.Forbidden, k, name)
				require.Equal(t, "unknown signer or bad signature", detail, name)
			}
		})

		t.Run("more than 5 minutes off: 403", func(t *testing.T) {
			for _, d := range []time.Duration{-5*time.Minute - time.Second, 5*time.Minute + time.Second, -time.Hour, 24 * time.Hour} {
				_, err := e.app.Freeze(ctx, signed(opsSecret, "ops", t0.Add(d), nonceN(1), "late"))
				k, detail := kindOf(t, err)
				require.Equal(t, fault.Forbidden, k, d)
				require.Contains(t, detail, "issued_at is more than 5m0s from the ledger's clock", d)
			}
		})

		var entries int
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_entries`).Scan(&entries))
		require.Zero(t, entries, "nothing refused wrote anything")
		s, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, usecase.ModeNormal, s.Mode)

		t.Run("a nonce is accepted once, even refused as a conflict, and across a restart", func(t *testing.T) {
			// 4 m 59 s off either way is fresh.
			e.clock.Advance(4*time.Minute + 59*time.Second)
			_, err := e.app.Freeze(ctx, good)
			require.NoError(t, err)
			_, err = e.app.Freeze(ctx, good)
			k, detail := kindOf(t, err)
			require.Equal(t, fault.Forbidden, k)
			require.Equal(t, "nonce was used before: every freeze needs a new one", detail)

			// While frozen, a new freeze is a conflict, and spends its nonce.
			second := signed(opsSecret, "ops", t0.Add(9*time.Minute), nonceN(2), "second")
			_, err = e.app.Freeze(ctx, second)
			k, _ = kindOf(t, err)
			require.Equal(t, fault.Conflict, k)
			_, err = e.app.Unfreeze(ctx, "drill over", "admin")
			require.NoError(t, err)

			// The ledger restarts: a new App over the same database.
			restarted := usecase.New(e.db, repos, usecase.Config{AuditSigner: testSigner, Clock: e.clock, Ideas: ideas{}, Signers: map[string]string{"ops": opsSecret}})
			for _, replay := range []usecase.FreezeCmd{good, second,
				signed(opsSecret, "ops", t0, strings.ToUpper(nonceN(0)), "the same nonce in capitals")} {
				_, err = restarted.Freeze(ctx, replay)
				k, detail = kindOf(t, err)
				require.Equal(t, fault.Forbidden, k, replay.Reason)
				require.Contains(t, detail, "nonce was used before", replay.Reason)
			}
			// The same nonce is another signer's own.
			audit := usecase.New(e.db, repos, usecase.Config{AuditSigner: testSigner, Clock: e.clock, Ideas: ideas{}, Signers: map[string]string{"audit": auditSecret}})
			_, err = audit.Freeze(ctx, signed(auditSecret, "audit", e.clock.Now(), nonceN(0), "audit's own"))
			require.NoError(t, err)
			_, err = e.app.Unfreeze(ctx, "drill over", "admin")
			require.NoError(t, err)
		})

		t.Run("nonces are forgotten only once their time would refuse them", func(t *testing.T) {
			var n int
			require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM freeze_nonces`).Scan(&n))
			require.Equal(t, 3, n)
			// 10 minutes after they were issued, the next freeze forgets
			// them; a replay is refused by its time.
			e.clock.Advance(t0.Add(credit.FreezeNonceTTL + 5*time.Minute).Sub(e.clock.Now()))
			_, err := e.app.Freeze(ctx, signed(opsSecret, "ops", e.clock.Now(), nonceN(3), "later"))
			require.NoError(t, err)
			require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM freeze_nonces`).Scan(&n))
			require.Equal(t, 2, n, "the nonces issued before t0+5m were forgotten: t0+9m's and the new one remain")
			_, err = e.app.Freeze(ctx, good)
			k, detail := kindOf(t, err)
			require.Equal(t, fault.Forbidden, k)
			require.Contains(t, detail, "issued_at is more than")
		})
	})
}

func with(c usecase.FreezeCmd, change func(*usecase.FreezeCmd)) usecase.FreezeCmd {
	change(&c)
	return c
}

// TestConcurrentFreezeReplays: the same signed freeze sent 8 times at once
// freezes once; every other answer is the nonce's 403.
func TestConcurrentFreezeReplays(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		cmd := signed(opsSecret, "ops", t0, nonceN(0), "at once")
		var (
			wg               sync.WaitGroup
			mu               sync.Mutex
			froze, forbidden int
		)
		for range 8 {
			wg.Go(func() {
				_, err := e.app.Freeze(ctx, cmd)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					froze++
				case fault.KindOf(err) == fault.Forbidden:
					forbidden++
				default:
					t.Errorf("unexpected: %v", err)
				}
			})
		}
		wg.Wait()
		require.Equal(t, 1, froze)
		require.Equal(t, 7, forbidden)
	})
}

// deposits makes n deposits of 1 USD (two audit entries each).
func deposits(t *testing.T, app *usecase.App, prefix string, n int) {
	t.Helper()
	for i := range n {
		_, err := app.Deposit(context.Background(), usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(cc), Reference: fmt.Sprint(prefix, i)}, nil)
		require.NoError(t, err)
	}
}

func TestAuditTamperIsFoundAndRepaired(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "", 3)
		sequence(t, e.app)
		rep, err := e.app.RepairAudit(ctx, "admin")
		require.NoError(t, err)
		require.False(t, rep.Repaired, "a sound chain is left alone")

		_, err = e.db.Exec(ctx, `UPDATE audit_entries SET amount = amount + 1 WHERE seq = 3`)
		require.NoError(t, err)
		sequence(t, e.app)
		res, err := e.app.VerifyAudit(ctx, false)
		require.NoError(t, err)
		require.False(t, res.OK)
		require.Equal(t, int64(2), res.LastVerified)
		require.Equal(t, int64(3), res.FirstDivergent)

		// What the walk found is a finding at once: read_only (seq 7 records
		// the change of mode), until the repair.
		require.Equal(t, usecase.ModeReadOnly, mode(t, e.app))
		sequence(t, e.app)
		rep, err = e.app.RepairAudit(ctx, "admin")
		require.NoError(t, err)
		require.True(t, rep.Repaired)
		require.Equal(t, int64(8), rep.Seq)
		require.Equal(t, []int64{8, 3, 3}, []int64{rep.Break.RepairSeq, rep.Break.From, rep.Break.To})
		require.Equal(t, 1, rep.Resolved, "the finding is resolved")
		require.Equal(t, usecase.ModeNormal, rep.Mode, "the verification's read_only is lifted (seq 9)")
		require.Empty(t, rep.Correction, "the journal agrees with what the log signed: nothing to correct")
		sequence(t, e.app)
		recs, err := e.app.AuditEntries(ctx, 3, 0)
		require.NoError(t, err)
		require.Equal(t, []string{"repair", "repair", "integrity"}, []string{recs[0].Entry.Kind, recs[1].Entry.Kind, recs[2].Entry.Kind},
			"the mode lifted, the repair, the mode raised")
		attrs := recs[1].Entry.Attrs
		require.Equal(t, map[string]string{"last_verified": "2", "first_divergent": "3",
			"reason": "entry fields do not match their stored encoding", "repaired_from": "3", "repaired_to": "3",
			"resume_hash": rep.Break.Resume.String(), "digest": rep.Break.Digest}, attrs)
		require.Equal(t, recs[2].Hash, recs[1].PrevHash, "the repair entry chains to the head")
		var n int
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_entries`).Scan(&n))
		require.Equal(t, 9, n, "nothing rewritten or deleted")
		// One instant on the test's clock: the four incidents in any order.
		incidents, err := items(e.app.Incidents(ctx, page(4, 0)))
		require.NoError(t, err)
		byKind := map[string]string{}
		for _, in := range incidents {
			byKind[in.Kind] = in.Detail
		}
		require.Len(t, byKind, 4, "%+v", incidents)
		require.Contains(t, byKind["audit_repair"], "repair entry 8 accepts seq 3 to 3")
		require.Contains(t, byKind["integrity_log"], "audit entry 3: entry fields do not match their stored encoding")
		require.Equal(t, "normal → read_only: integrity: audit entry 3: entry fields do not match their stored encoding", byKind["integrity"])
		require.Equal(t, "read_only → normal: repaired: the audit log, the journal and the balances agree", byKind["repair"])

		deposits(t, e.app, "after", 1)
		sequence(t, e.app)
		res, err = e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, res.Valid(), "%+v", res)
		require.Equal(t, int64(11), res.LastVerified)
		require.Equal(t, int64(11), res.Checked, "the whole chain, the repaired entry included")
		require.Len(t, res.Repaired, 1, "the break stays reported as repaired")
		require.Equal(t, rep.Break, res.Repaired[0])

		// A truncated tail is a break too. Seq 11 was verified already, so
		// the incremental check, which starts after it, does not walk it
		// again: a full walk does.
		_, err = e.db.Exec(ctx, `DELETE FROM audit_entries WHERE seq = 11`)
		require.NoError(t, err)
		res, err = e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.False(t, res.OK)
		require.Equal(t, int64(11), res.FirstDivergent)
		require.Equal(t, "entries missing: the chain's head is seq 11", res.Reason)
		rep, err = e.app.RepairAudit(ctx, "admin")
		require.NoError(t, err)
		// Seq 12 records read_only; the repair entry is 13. Seq 11 was the
		// last deposit's spread fee, which records no journal entry: the
		// journal has nothing to restore it from, so it is recorded lost.
		require.Equal(t, []int64{13, 11, 11}, []int64{rep.Seq, rep.Break.From, rep.Break.To})
		require.Equal(t, []int64{11}, rep.Lost)
		require.Empty(t, rep.Restored)
		require.Equal(t, usecase.ModeNormal, rep.Mode)
		sequence(t, e.app)
		res, err = e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, res.Valid(), "%+v", res)
		require.Len(t, res.Repaired, 2, "both breaks accepted and listed")
	})
}

// TestFullWalkAcceptsARepairedDeletion: once a repair accepted a deleted
// entry, a full walk accepts the break, lists it, and recomputes the
// signed root (the tree still holds the deleted entry's leaf).
func TestFullWalkAcceptsARepairedDeletion(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "", 2)
		sequence(t, e.app)
		_, err := e.db.Exec(ctx, `DELETE FROM audit_entries WHERE seq = 2`)
		require.NoError(t, err)
		rep, err := e.app.RepairAudit(ctx, "admin")
		require.NoError(t, err)
		require.Equal(t, []int64{5, 2, 2}, []int64{rep.Seq, rep.Break.From, rep.Break.To})
		res, err := e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, res.OK, "%+v", res)
		require.Equal(t, []audit.Break{rep.Break}, res.Repaired)
	})
}

// TestHistoryBeforeARepairIsStillChecked is the reproduction: one
// repair must not end the coverage of what came before it. Entry 3 is
// tampered and repaired; the ledger restarts; then entry 1's amount and
// entry 4's subject are edited: each is found, and the monitor's check
// (CheckCoherence) says the chain is broken.
//
// The monitor's check is incremental: it walks each entry once, after the
// last sound verification, so an edit of an entry it verified before is
// found by a full walk (and by clients' proofs, TestAuditLogProofs). The
// edits are therefore made twice: after a verification, found by full
// walks; and in a second ledger before its first check, found by the
// monitor's.
func TestHistoryBeforeARepairIsStillChecked(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		// repaired is a ledger whose entry 3 was tampered and repaired
		// (repair entry 7), followed by two deposits (seq 8 to 11).
		repaired := func() env {
			e := setup(t, engine, "ada")
			deposits(t, e.app, "", 3)
			sequence(t, e.app)
			_, err := e.db.Exec(ctx, `UPDATE audit_entries SET amount = 1 WHERE seq = 3`)
			require.NoError(t, err)
			rep, err := e.app.RepairAudit(ctx, "admin")
			require.NoError(t, err)
			require.True(t, rep.Repaired)
			require.Equal(t, []int64{7, 3, 3}, []int64{rep.Seq, rep.Break.From, rep.Break.To})
			deposits(t, e.app, "more", 2)
			return e
		}
		e := repaired()
		restart := func(e env) *usecase.App {
			return usecase.New(e.db, repos, usecase.Config{AuditSigner: testSigner, Clock: e.clock, Ideas: ideas{}})
		}
		app := restart(e)
		sequence(t, app)
		res, err := app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, res.OK, "only the repaired break: %+v", res)
		require.Equal(t, int64(11), res.LastVerified)
		require.Len(t, res.Repaired, 1)

		for _, c := range []struct {
			sql   string
			first int64
		}{
			{`UPDATE audit_entries SET amount = 1 WHERE seq = 1`, 1},
			{`UPDATE audit_entries SET subject = 'eve' WHERE seq = 4`, 4},
			{`UPDATE audit_entries SET amount = 2 WHERE seq = 3`, 3},      // the repaired entry, edited again
			{`UPDATE audit_entries SET attrs = '{}' WHERE seq = 7`, 3},    // the repair entry: its break is no longer accepted
			{`UPDATE audit_entries SET actor = 'eve' WHERE seq = 10`, 10}, // after the repair
			{`DELETE FROM audit_entries WHERE seq = 3`, 3},                // the repaired entry, deleted
		} {
			undo := snapshotAudit(t, e.db)
			_, err := e.db.Exec(ctx, c.sql)
			require.NoError(t, err)
			res, err := restart(e).WalkAudit(ctx, true)
			require.NoError(t, err)
			require.False(t, res.OK, c.sql)
			require.Equal(t, c.first, res.FirstDivergent, c.sql)
			undo()
			res, err = restart(e).WalkAudit(ctx, true)
			require.NoError(t, err)
			require.True(t, res.OK, "undone: %+v", res)
			require.Len(t, res.Repaired, 1, "undone")
		}

		// Both edits of the issue at once, committed, in a ledger whose
		// incremental verification passed them already (the repair moved it
		// past them): the scrubber finds the first (and the economy stops),
		// the coherence check reports it, and one repair records both
		// breaks.
		e = repaired()
		_, err = e.db.Exec(ctx, `UPDATE audit_entries SET amount = 1 WHERE seq = 1`)
		require.NoError(t, err)
		_, err = e.db.Exec(ctx, `UPDATE audit_entries SET subject = 'eve' WHERE seq = 4`)
		require.NoError(t, err)
		app = restart(e)
		sequence(t, app)
		found := scrubCycle(t, app)
		require.NotEmpty(t, found)
		require.Equal(t, int64(1), found[0].Seq)
		c, err := app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.False(t, c.Trail().OK)
		require.Equal(t, int64(1), c.Trail().FirstDivergent)
		require.Equal(t, usecase.ModeReadOnly, mode(t, app))
		rep, err := app.RepairAudit(ctx, "admin")
		require.NoError(t, err)
		require.Len(t, rep.Breaks, 2, "every break, in one repair")
		require.Equal(t, []int64{1, 4}, []int64{rep.Breaks[0].From, rep.Breaks[1].From})
		require.Equal(t, usecase.ModeNormal, rep.Mode)
		res, err = app.VerifyAudit(ctx, false)
		require.NoError(t, err)
		require.True(t, res.Valid(), "%+v", res)
		require.Empty(t, res.Repaired, "incremental verification resumes from the repaired log's checkpoint")
		res, err = app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		var froms []int64
		for _, b := range res.Repaired {
			froms = append(froms, b.From)
		}
		require.Equal(t, []int64{1, 3, 4}, froms)
		// And the edits stay covered by the full walk.
		res, err = app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, res.OK, "%+v", res)
		require.Len(t, res.Repaired, 3)
	})
}

// TestLegacyRepairIsHonoured: a chain repaired before repairs recorded
// their stretch (the repair entry names only the break, and verification
// used to resume from it) still verifies, and its history before the break
// is checked again.
func TestLegacyRepairIsHonoured(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "", 3)
		sequence(t, e.app)
		_, err := e.db.Exec(ctx, `UPDATE audit_entries SET amount = 1 WHERE seq = 5`)
		require.NoError(t, err)
		// What RepairAudit appended before (outside the tree, which the
		// sequencer then catches up with): chained to the head, naming the break only.
		require.NoError(t, e.db.Tx(ctx, func(q database.Querier) error {
			r := repos(q)
			eco, err := r.Credit.LockEconomy(ctx)
			if err != nil {
				return err
			}
			rec := audit.Seal(eco.AuditHead, audit.Entry{Seq: eco.AuditSeq + 1, Kind: audit.KindRepair, At: t0, Actor: "admin",
				Subject: "audit", Attrs: map[string]string{"last_verified": "4", "first_divergent": "5",
					"reason": "entry fields do not match their stored encoding"}})
			if err := r.Audit.Append(ctx, []audit.Record{rec}, nil, nil); err != nil {
				return err
			}
			eco.AuditSeq, eco.AuditHead = rec.Entry.Seq, rec.Hash
			return r.Credit.SaveEconomy(ctx, eco)
		}))
		_, err = e.db.Exec(ctx, `UPDATE economy SET verify_from_seq = 7, verify_from_hash = audit_head`)
		require.NoError(t, err)
		deposits(t, e.app, "after", 1)

		sequence(t, e.app)
		res, err := e.app.VerifyAudit(ctx, false)
		require.NoError(t, err)
		require.True(t, res.OK, "%+v", res)
		require.Len(t, res.Repaired, 1)
		require.True(t, res.Repaired[0].Legacy)
		require.Equal(t, []int64{5, 6}, []int64{res.Repaired[0].From, res.Repaired[0].To})
		require.Equal(t, int64(9), res.LastVerified, "the legacy repair (7) and the deposit after it (8, 9)")
		require.Equal(t, int64(10), res.TreeSize, "the tree caught up with the repair appended outside it")

		// Seq 2 was verified already: the full walk checks it again.
		_, err = e.db.Exec(ctx, `UPDATE audit_entries SET amount = 1 WHERE seq = 2`)
		require.NoError(t, err)
		res, err = e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.False(t, res.OK)
		require.Equal(t, int64(2), res.FirstDivergent)
	})
}

// snapshotAudit reads every audit row and returns what puts them back.
func snapshotAudit(t *testing.T, db *database.DB) func() {
	t.Helper()
	ctx := context.Background()
	rows, err := db.Query(ctx, `SELECT seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash, entry_id
		FROM audit_entries`)
	require.NoError(t, err)
	var saved [][]any
	for rows.Next() {
		var (
			seq, at, amount                                  int64
			kind, actor, subject, attrs, enc, prev, hashText string
			entryID                                          *string
		)
		require.NoError(t, rows.Scan(&seq, &kind, &at, &actor, &subject, &amount, &attrs, &enc, &prev, &hashText, &entryID))
		saved = append(saved, []any{seq, kind, at, actor, subject, amount, attrs, enc, prev, hashText, entryID})
	}
	require.NoError(t, rows.Err())
	rows.Close()
	return func() {
		t.Helper()
		require.NoError(t, db.Tx(ctx, func(q database.Querier) error {
			if _, err := q.Exec(ctx, `DELETE FROM audit_entries`); err != nil {
				return err
			}
			for _, r := range saved {
				if _, err := q.Exec(ctx, `INSERT INTO audit_entries (seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash,
					entry_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`, r...); err != nil {
					return err
				}
			}
			return nil
		}))
	}
}

// TestCursorPagesCountNothing: a page of incidents or contributions read
// by cursor sends no count of what precedes it (it cost what an offset
// read does: 3 s for contributions at a million rows); the totals come
// from the kept counters, and the offset from the cursor.
func TestCursorPagesCountNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		for n := range 2 {
			_, err := e.app.Freeze(ctx, signed(opsSecret, "ops", e.clock.Now(), nonceN(n), "drill"))
			require.NoError(t, err)
			_, err = e.app.Unfreeze(ctx, "over", "admin")
			require.NoError(t, err)
			e.clock.Advance(time.Second)
		}
		a := createAsset(t, e)
		for range 3 {
			contribute(t, e, "ada", a.ID, money.Scale, e.clock.Now())
			e.clock.Advance(time.Second)
		}
		two := int32(2)
		incidents, err := e.app.Incidents(ctx, usecase.Page{Limit: &two})
		require.NoError(t, err)
		contributions, err := e.app.ListContributions(ctx, usecase.ListContributionsCmd{Page: usecase.Page{Limit: &two}})
		require.NoError(t, err)

		var rec dbtest.Recording
		recorded := usecase.New(e.db, func(q database.Querier) usecase.Repos { return repos(rec.Wrap(q)) },
			usecase.Config{Clock: e.clock, Ideas: ideas{}, AuditSigner: testSigner})
		moreIncidents, err := recorded.Incidents(ctx, usecase.Page{Limit: &two, Cursor: incidents.Next})
		require.NoError(t, err)
		require.Equal(t, [3]int{2, 2, 4}, [3]int{len(moreIncidents.Items), moreIncidents.Offset, moreIncidents.Total})
		require.Empty(t, moreIncidents.Next)
		moreContributions, err := recorded.ListContributions(ctx, usecase.ListContributionsCmd{Page: usecase.Page{Limit: &two, Cursor: contributions.Next}})
		require.NoError(t, err)
		require.Equal(t, [3]int{1, 2, 3}, [3]int{len(moreContributions.Items), moreContributions.Offset, moreContributions.Total})
		require.Empty(t, moreContributions.Next)
		stmts := rec.Take()
		require.NotEmpty(t, stmts)
		for _, st := range stmts {
			require.NotContains(t, strings.ToUpper(st.Query), "COUNT(", "a cursor page counts no row")
		}
	})
}

// TestIncidentsByCursor: a page read by its predecessor's cursor continues
// after that page's last incident however many were recorded meanwhile,
// says its offset as the first page saw the list (carried by the cursor,
// never counted), and gives no cursor on the last page although the head
// grew; a foreign cursor or one with an offset is a 422.
func TestIncidentsByCursor(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		cycle := func(n int) { // a freeze and an unfreeze: two incidents
			t.Helper()
			_, err := e.app.Freeze(ctx, signed(opsSecret, "ops", e.clock.Now(), nonceN(n), fmt.Sprint("drill ", n)))
			require.NoError(t, err)
			e.clock.Advance(time.Second)
			_, err = e.app.Unfreeze(ctx, "over", "admin")
			require.NoError(t, err)
			e.clock.Advance(time.Second)
		}
		cycle(0)
		cycle(1) // four incidents
		two := int32(2)
		first, err := e.app.Incidents(ctx, usecase.Page{Limit: &two})
		require.NoError(t, err)
		require.Len(t, first.Items, 2)
		require.Equal(t, 4, first.Total)
		require.NotEmpty(t, first.Next)

		cycle(2) // two more at the head
		second, err := e.app.Incidents(ctx, usecase.Page{Limit: &two, Cursor: first.Next})
		require.NoError(t, err)
		require.Equal(t, 6, second.Total)
		require.Equal(t, 2, second.Offset, "the first page preceded it when paging began")
		require.Len(t, second.Items, 2)
		require.True(t, second.Items[0].CreatedAt.Before(first.Items[1].CreatedAt) ||
			(second.Items[0].CreatedAt.Equal(first.Items[1].CreatedAt) && second.Items[0].ID < first.Items[1].ID),
			"it starts after the first page's last incident")
		require.Empty(t, second.Next, "the last page")

		for name, p := range map[string]usecase.Page{
			"another list's": {Cursor: cursor.Encode("audit", "3")},
			"with an offset": {Cursor: first.Next, Offset: 1},
			"too deep":       {Offset: cursor.MaxOffset + 1},
		} {
			_, err := e.app.Incidents(ctx, p)
			k, _ := kindOf(t, err)
			require.Equal(t, fault.Invalid, k, name)
		}
		for name, q := range map[string]usecase.ListContributionsCmd{
			"deepest":  {Page: usecase.Page{Offset: cursor.MaxOffset}},
			"too deep": {Page: usecase.Page{Offset: cursor.MaxOffset + 1}},
			"by asset": {AssetID: "a", Page: usecase.Page{Offset: cursor.MaxOffset + 1}},
		} {
			_, err := e.app.ListContributions(ctx, q)
			if name == "deepest" {
				require.NoError(t, err, "the deepest offset is a page")
				continue
			}
			k, detail := kindOf(t, err)
			require.Equal(t, fault.Invalid, k, name)
			require.Contains(t, detail, "offset: must be at most 10000: read further pages by cursor", name)
		}
	})
}

package usecase_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// scrubCycle takes the scrubber's steps until a cycle completes and
// returns what they found.
func scrubCycle(t *testing.T, app *usecase.App) []store.Finding {
	t.Helper()
	var found []store.Finding
	for range 1000 {
		step, err := app.Scrub(context.Background())
		require.NoError(t, err)
		found = append(found, step.Found...)
		if step.Completed {
			return found
		}
	}
	t.Fatal("no scrub cycle completed in 1000 steps")
	return nil
}

// mode is the economy's mode.
func mode(t *testing.T, app *usecase.App) string {
	t.Helper()
	s, err := app.Supply(context.Background())
	require.NoError(t, err)
	return s.Mode
}

// exec runs statements on the ledger's database as a writer of it would,
// each changing at least one row.
func exec(t *testing.T, db *database.DB, statements ...string) {
	t.Helper()
	for _, s := range statements {
		n, err := db.Exec(context.Background(), s)
		require.NoError(t, err, s)
		require.Positive(t, n, s)
	}
}

// scrubbed is an economy whose log the incremental verification and one
// whole scrub cycle have seen sound: 3 deposits (seq 1 to 6), a stake
// (seq 7) and an unstake (seq 8).
func scrubbed(t *testing.T, engine database.Engine) env {
	t.Helper()
	e := setup(t, engine, "ada")
	ctx := context.Background()
	deposits(t, e.app, "", 3)
	_, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(50 * cc)}, nil)
	require.NoError(t, err)
	_, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(10 * cc)}, nil)
	require.NoError(t, err)
	sequence(t, e.app)
	v, err := e.app.VerifyAudit(ctx, false)
	require.NoError(t, err)
	require.True(t, v.Valid(), "%+v", v)
	require.Empty(t, scrubCycle(t, e.app), "a sound economy scrubs clean")
	return e
}

// TestScrubberFindsAnEditedEntry: an edit of any column of an audit entry
// that incremental verification already covered (the blind spot:
// valid, 0 entries checked) is found by the next scrub cycle, which moves
// the economy to read_only at once and makes the verification answer
// invalid at that seq, until a repair.
func TestScrubberFindsAnEditedEntry(t *testing.T) {
	t.Parallel()
	for column, edit := range map[string]string{
		"kind":      `UPDATE audit_entries SET kind = 'withdraw' WHERE seq = 3`,
		"at":        `UPDATE audit_entries SET at = at + 1 WHERE seq = 3`,
		"actor":     `UPDATE audit_entries SET actor = 'mallory' WHERE seq = 3`,
		"subject":   `UPDATE audit_entries SET subject = 'mallory' WHERE seq = 3`,
		"amount":    `UPDATE audit_entries SET amount = 1 WHERE seq = 3`,
		"attrs":     `UPDATE audit_entries SET attrs = '{}' WHERE seq = 3`,
		"encoded":   `UPDATE audit_entries SET encoded = '00' WHERE seq = 3`,
		"prev_hash": `UPDATE audit_entries SET prev_hash = hash WHERE seq = 3`,
		"hash":      `UPDATE audit_entries SET hash = prev_hash WHERE seq = 3`,
	} {
		t.Run(column, func(t *testing.T) {
			t.Parallel()
			dbtest.Each(t, func(t *testing.T, engine database.Engine) {
				e := scrubbed(t, engine)
				ctx := context.Background()
				exec(t, e.db, edit)
				e.clock.Advance(10 * time.Second) // past the cached answer
				v, err := e.app.VerifyAudit(ctx, false)
				require.NoError(t, err)
				require.True(t, v.Valid(), "the incremental verification does not walk seq 3 again: %+v", v)
				require.Zero(t, v.Checked)

				found := scrubCycle(t, e.app)
				require.NotEmpty(t, found)
				require.Equal(t, int64(3), found[0].Seq, "%+v", found)
				require.Equal(t, usecase.FindingLog, found[0].Kind)
				// At once, not at the monitor's next look: read_only for the
				// record, frozen where the journal no longer matches it (an
				// entry of another kind than its journal entry's).
				want := usecase.ModeReadOnly
				if column == "kind" {
					want = usecase.ModeFrozen
				}
				require.Equal(t, want, mode(t, e.app), "%+v", found)

				v, err = e.app.VerifyAudit(ctx, false)
				require.NoError(t, err)
				require.False(t, v.Valid())
				seq, reason := v.Divergent()
				require.Equal(t, int64(3), seq)
				require.Regexp(t, `^integrity finding: .*audit entry 3\b`, reason)
				require.Equal(t, len(found), v.Findings.Total, "found once, however often it is found again")
				require.Len(t, scrubCycle(t, e.app), len(found), "the next cycle finds the same places, which are open already")
				open, err := e.app.OpenFindings(ctx)
				require.NoError(t, err)
				require.Equal(t, len(found), open.Total)

				// The monitor cannot lower it, nor an administrator unfreeze
				// past it.
				m, err := e.app.SetMode(ctx, usecase.ModeNormal, "all checks passed", "monitor")
				require.NoError(t, err)
				require.Equal(t, want, m.Mode)
			})
		})
	}
}

// TestScrubberFindsMintedCC: the consistent edit of the journal —
// 1 000 CC added to a deposit's two lines, both balances, the entry's
// amount and the CC outstanding — passes every check that compares the
// journal with itself, and is found by the scrubber, which compares it
// with what the log recorded: the economy freezes at once, and a
// withdrawal of the minted CC is refused.
func TestScrubberFindsMintedCC(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := scrubbed(t, engine)
		ctx := context.Background()
		var entry string
		require.NoError(t, e.db.QueryRow(ctx, `SELECT entry_id FROM audit_entries WHERE seq = 1`).Scan(&entry))
		const minted = 1000 * cc
		exec(t, e.db,
			fmt.Sprintf(`UPDATE cc_lines SET delta = delta + %d WHERE entry_id = '%s' AND account = 'available:ada'`, minted, entry),
			fmt.Sprintf(`UPDATE cc_lines SET delta = delta - %d WHERE entry_id = '%s' AND account = 'issuance'`, minted, entry),
			fmt.Sprintf(`UPDATE cc_accounts SET balance = balance + %d WHERE account = 'available:ada'`, minted),
			fmt.Sprintf(`UPDATE cc_accounts SET balance = balance - %d WHERE account = 'issuance'`, minted),
			fmt.Sprintf(`UPDATE cc_entries SET amount = amount + %d WHERE id = '%s'`, minted, entry),
			fmt.Sprintf(`UPDATE economy SET outstanding_cc = outstanding_cc + %d`, minted))
		c, err := e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.True(t, c.Trail().OK, "the journal agrees with itself and with the log's links: %+v", c.Trail())
		require.Empty(t, c.Mismatched)

		found := scrubCycle(t, e.app)
		require.Len(t, found, 1, "%+v", found)
		require.Equal(t, usecase.FindingJournal, found[0].Kind)
		require.Equal(t, entry, found[0].EntryID)
		require.Equal(t, int64(1), found[0].Seq)
		require.Contains(t, found[0].Detail, "journal entry "+entry+" (deposit) is not what audit entry 1 records: amount ")
		require.Contains(t, found[0].Detail, "on available:ada where the log records")
		require.Equal(t, usecase.ModeFrozen, mode(t, e.app))

		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(900 * cc), Actor: "ada"}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Equal(t, "frozen", detail)

		_, err = e.app.Unfreeze(ctx, "", "admin")
		k, detail = kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Contains(t, detail, "cannot unfreeze: 1 open integrity finding(s) hold the economy at frozen")
	})
}

// TestScrubberPaces: a step asks for the pause that ends the cycle in
// time, and the report says when the scrubber falls behind.
func TestScrubberPaces(t *testing.T) {
	t.Parallel()
	e := setup(t, database.SQLite, "ada")
	step, err := e.app.Scrub(context.Background())
	require.NoError(t, err)
	require.True(t, step.Completed, "nothing recorded: one step is a cycle")
	require.Equal(t, 5*time.Second, step.Pause, "a small log is scrubbed whole every few seconds")
	rep, err := e.app.ScrubReport(context.Background())
	require.NoError(t, err)
	require.Equal(t, int64(2), rep.Current)
	require.NotNil(t, rep.Last)
	require.Equal(t, int64(1), rep.Last.Cycle)
	require.Empty(t, rep.Late(t0))
	require.Equal(t, "the audit scrubber has completed no step for 1m0s", rep.Late(rep.UpdatedAt.Add(time.Minute+time.Millisecond)))
	rep.UpdatedAt = rep.StartedAt.Add(100 * time.Minute)
	require.Equal(t, "the audit scrubber's cycle 2 has run for 1h40m0s, past its 1h0m0s", rep.Late(rep.UpdatedAt))

	// A short cycle is late a minute past its time, not half a cycle: its
	// few steps' pauses stretch it by seconds on a busy machine.
	rep.Cycle = 2 * time.Second
	rep.UpdatedAt = rep.StartedAt.Add(3 * time.Second)
	require.Empty(t, rep.Late(rep.UpdatedAt), "a 2 s cycle that has run for 3 s")
	rep.UpdatedAt = rep.StartedAt.Add(62*time.Second + time.Millisecond)
	require.Equal(t, "the audit scrubber's cycle 2 has run for 1m2s, past its 2s", rep.Late(rep.UpdatedAt))
}

// healed checks that a repaired economy stays repaired: after the
// administrator unfreezes, a minute of the monitor's checks and one whole
// scrub cycle find nothing, the monitor's normal holds, a stake succeeds
// and the full walk is valid.
func healed(t *testing.T, e env) {
	t.Helper()
	ctx := context.Background()
	if mode(t, e.app) == usecase.ModeFrozen {
		_, err := e.app.Unfreeze(ctx, "repaired", "admin")
		require.NoError(t, err)
	}
	for range 2 {
		e.clock.Advance(30 * time.Second)
		c, err := e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.True(t, c.Trail().OK, "%+v", c.Trail())
		require.Empty(t, c.Mismatched)
		m, err := e.app.SetMode(ctx, usecase.ModeNormal, "all checks passed", "monitor")
		require.NoError(t, err)
		require.Equal(t, usecase.ModeNormal, m.Mode)
	}
	require.Empty(t, scrubCycle(t, e.app))
	_, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-2", AmountCC: units(cc / 2)}, nil)
	require.NoError(t, err)
	sequence(t, e.app)
	v, err := e.app.VerifyAudit(ctx, true)
	require.NoError(t, err)
	require.True(t, v.Valid(), "%+v", v)
	require.Equal(t, usecase.ModeNormal, mode(t, e.app))
}

// TestRepairHeals: what the checks find, a repair heals for good, append
// only — the deleted newest and middle entries, and the minted CC.
func TestRepairHeals(t *testing.T) {
	t.Parallel()
	t.Run("minted", func(t *testing.T) {
		t.Parallel()
		dbtest.Each(t, func(t *testing.T, engine database.Engine) {
			e := scrubbed(t, engine)
			ctx := context.Background()
			before, err := e.app.Balances(ctx, "ada")
			require.NoError(t, err)
			supply, err := e.app.Supply(ctx)
			require.NoError(t, err)
			var entry string
			require.NoError(t, e.db.QueryRow(ctx, `SELECT entry_id FROM audit_entries WHERE seq = 1`).Scan(&entry))
			const minted = 1000 * cc
			exec(t, e.db,
				fmt.Sprintf(`UPDATE cc_lines SET delta = delta + %d WHERE entry_id = '%s' AND account = 'available:ada'`, minted, entry),
				fmt.Sprintf(`UPDATE cc_lines SET delta = delta - %d WHERE entry_id = '%s' AND account = 'issuance'`, minted, entry),
				fmt.Sprintf(`UPDATE cc_accounts SET balance = balance + %d WHERE account = 'available:ada'`, minted),
				fmt.Sprintf(`UPDATE cc_accounts SET balance = balance - %d WHERE account = 'issuance'`, minted),
				fmt.Sprintf(`UPDATE cc_entries SET amount = amount + %d WHERE id = '%s'`, minted, entry),
				fmt.Sprintf(`UPDATE economy SET outstanding_cc = outstanding_cc + %d`, minted))
			require.Len(t, scrubCycle(t, e.app), 1)

			rep, err := e.app.RepairAudit(ctx, "admin")
			require.NoError(t, err)
			require.True(t, rep.Repaired)
			require.Empty(t, rep.Breaks, "the log itself is sound")
			require.NotEmpty(t, rep.Correction)
			require.Equal(t, []string{entry}, rep.Corrected)
			require.True(t, rep.Supply, "the CC outstanding is what the issuance account holds again")
			require.Equal(t, 1, rep.Resolved)
			require.Equal(t, usecase.ModeFrozen, rep.Mode)
			after, err := e.app.Balances(ctx, "ada")
			require.NoError(t, err)
			require.Equal(t, before, after, "the minted 1 000 CC are gone")
			s, err := e.app.Supply(ctx)
			require.NoError(t, err)
			require.Equal(t, supply.OutstandingCC, s.OutstandingCC)
			sequence(t, e.app)
			recs, err := e.app.AuditEntries(ctx, 3, 0)
			require.NoError(t, err)
			var kinds []string
			for _, r := range recs {
				kinds = append(kinds, r.Entry.Kind)
			}
			require.Contains(t, kinds, "correction", "the correction is logged")
			require.Contains(t, kinds, usecase.KindSupplyRestored)
			healed(t, e)
			_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(900 * cc), Actor: "ada"}, nil)
			k, detail := kindOf(t, err)
			require.Equal(t, fault.Rejected, k)
			require.Contains(t, detail, "insufficient balance")
		})
	})
	for name, del := range map[string]string{
		"newest": `DELETE FROM audit_entries WHERE seq = 8`, // the unstake
		"middle": `DELETE FROM audit_entries WHERE seq = 3`, // the second deposit
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbtest.Each(t, func(t *testing.T, engine database.Engine) {
				e := scrubbed(t, engine)
				ctx := context.Background()
				exec(t, e.db, del)
				found := scrubCycle(t, e.app)
				require.NotEmpty(t, found)
				seq := map[string]int64{"newest": 8, "middle": 3}[name]
				require.Equal(t, seq, found[0].Seq, "%+v", found)
				c, err := e.app.CheckCoherence(ctx)
				require.NoError(t, err)
				require.False(t, c.Trail().OK)
				require.Equal(t, usecase.ModeFrozen, mode(t, e.app), "the movement the log no longer records")

				rep, err := e.app.RepairAudit(ctx, "admin")
				require.NoError(t, err)
				require.Equal(t, []int64{seq, seq}, []int64{rep.Break.From, rep.Break.To})
				require.Equal(t, []int64{seq}, rep.Restored, "re-appended from its journal entry")
				require.Empty(t, rep.Lost)
				require.Zero(t, rep.Open.Total, "%+v", rep.Open)
				healed(t, e)
			})
		})
	}
}

// TestWithdrawalChecksItsOwnAccount: before money leaves, a withdrawal
// compares the contributor's own account with the log — a minted deposit
// the scrubber has not reached yet, or a cached balance raised alone, is
// refused at once and freezes the economy.
func TestWithdrawalChecksItsOwnAccount(t *testing.T) {
	t.Parallel()
	withdraw := func(t *testing.T, e env) error {
		t.Helper()
		_, err := e.app.Withdraw(context.Background(), usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(900 * cc), Actor: "ada"}, nil)
		return err
	}
	for name, c := range map[string]struct {
		edit func(entry string) []string
		kind string
	}{
		"minted": {func(entry string) []string {
			return []string{
				fmt.Sprintf(`UPDATE cc_lines SET delta = delta + %d WHERE entry_id = '%s' AND account = 'available:ada'`, 1000*cc, entry),
				fmt.Sprintf(`UPDATE cc_lines SET delta = delta - %d WHERE entry_id = '%s' AND account = 'issuance'`, 1000*cc, entry),
				fmt.Sprintf(`UPDATE cc_accounts SET balance = balance + %d WHERE account = 'available:ada'`, 1000*cc),
				fmt.Sprintf(`UPDATE cc_accounts SET balance = balance - %d WHERE account = 'issuance'`, 1000*cc),
				fmt.Sprintf(`UPDATE economy SET outstanding_cc = outstanding_cc + %d`, 1000*cc),
			}
		}, usecase.FindingJournal},
		"balance": {func(string) []string {
			return []string{fmt.Sprintf(`UPDATE cc_accounts SET balance = balance + %d WHERE account = 'available:ada'`, 1000*cc)}
		}, usecase.FindingBalance},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dbtest.Each(t, func(t *testing.T, engine database.Engine) {
				e := scrubbed(t, engine)
				ctx := context.Background()
				// A deposit the scrubber has not seen, then edited.
				_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "late"}, nil)
				require.NoError(t, err)
				sequence(t, e.app)
				var entry string
				require.NoError(t, e.db.QueryRow(ctx, `SELECT entry_id FROM audit_entries WHERE kind = 'deposit' ORDER BY seq DESC LIMIT 1`).
					Scan(&entry))
				exec(t, e.db, c.edit(entry)...)

				k, detail := kindOf(t, withdraw(t, e))
				require.Equal(t, fault.Rejected, k)
				require.Equal(t, "frozen", detail)
				require.Equal(t, usecase.ModeFrozen, mode(t, e.app), "the economy froze at once")
				open, err := e.app.OpenFindings(ctx)
				require.NoError(t, err)
				require.Equal(t, 1, open.Total, "%+v", open)
				require.Equal(t, c.kind, open.Open[0].Kind)
				require.Equal(t, "withdrawal", open.Open[0].FoundBy)
				b, err := e.app.Balances(ctx, "ada")
				require.NoError(t, err)
				require.Greater(t, b.Available, money.Micros(900*cc), "nothing left: the CC are all still there")
			})
		})
	}
	// A sound account withdraws as before.
	e := scrubbed(t, database.SQLite)
	_, err := e.app.Withdraw(context.Background(), usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(cc), Actor: "ada"}, nil)
	require.NoError(t, err)
}

// TestScrubberCompletesUnderSteadyMovements: while movements keep coming
// faster than a step checks them, each cycle still ends — its walks cover
// what was written before it began — and a journal entry a writer of the
// database dated far in the future, where a walk bounded by time would
// never reach, is found in every cycle.
func TestScrubberCompletesUnderSteadyMovements(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		app := usecase.New(e.db, repos, usecase.Config{Clock: e.clock, Ideas: ideas{}, AuditSigner: testSigner, ScrubSlice: 2})
		deposits(t, app, "before-", 3)
		sequence(t, app)
		// Three movements a second, and a step of two of each walk a
		// second: the journal's end runs ahead of the walk.
		completed := 0
		for i := range 60 {
			step, err := app.Scrub(context.Background())
			require.NoError(t, err)
			require.Empty(t, step.Found, "step %d", i)
			if step.Completed {
				completed++
			}
			deposits(t, app, fmt.Sprintf("during-%d-", i), 3)
			sequence(t, app)
			e.clock.Advance(time.Second)
		}
		require.GreaterOrEqual(t, completed, 2, "cycles end while the journal grows")

		exec(t, e.db, fmt.Sprintf(`INSERT INTO cc_entries (id, kind, contributor_id, amount, audit_seq, created_at)
			VALUES ('forged', 'deposit', 'ada', 1000000000, 0, %d)`, database.Micros(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))))
		var found []store.Finding
		for range 2 { // the cycle in progress may have walked past it
			found = append(found, scrubCycle(t, app)...)
		}
		require.NotEmpty(t, found)
		require.Equal(t, usecase.FindingJournal, found[0].Kind, "%+v", found)
		require.Equal(t, "forged", found[0].EntryID)
		require.Equal(t, "journal entry forged (deposit) is recorded by no audit entry", found[0].Detail)
		require.Equal(t, usecase.ModeFrozen, mode(t, app))
	})
}

// TestAStaleCheckRecordsNothing: a check whose reads began before a
// repair committed records nothing it found — the repair may have healed
// it, and the e2e test saw such a check freeze a repaired economy again —
// while one that began after the repair records what it found.
func TestAStaleCheckRecordsNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		f := store.Finding{Kind: usecase.FindingBalance, Place: "balance:available:ada", Account: "available:ada",
			Detail: "account available:ada holds 1 CC, but its journal lines add up to 0"}
		open := func() int {
			got, err := e.app.OpenFindings(ctx)
			require.NoError(t, err)
			return got.Total
		}
		require.NoError(t, e.app.Report(ctx, "coherence", e.clock.Now(), f))
		require.Equal(t, 1, open())

		began := e.clock.Now()
		e.clock.Advance(time.Second)
		rep, err := e.app.RepairAudit(ctx, "admin")
		require.NoError(t, err)
		require.Equal(t, 1, rep.Resolved)
		require.NoError(t, e.app.Report(ctx, "coherence", began, f), "a check begun before the repair")
		require.Zero(t, open(), "what a check begun before the repair found is not recorded")

		e.clock.Advance(time.Second)
		require.NoError(t, e.app.Report(ctx, "coherence", e.clock.Now(), f))
		require.Equal(t, 1, open(), "a check begun after the repair records what it found")
	})
}

// repairingIntegrity runs a repair the first time a scrub step reads the
// supply once armed: in the middle of the step, after it read its state.
type repairingIntegrity struct {
	store.Integrity
	armed  *atomic.Bool
	repair func()
}

func (r repairingIntegrity) Supply(ctx context.Context) (money.Micros, money.Micros, error) {
	if r.armed.CompareAndSwap(true, false) {
		r.repair()
	}
	return r.Integrity.Supply(ctx)
}

// TestAStepInFlightKeepsARepairsRestart: a repair that commits while a
// scrub step is in flight starts the cycle afresh, and the step does not
// save its place over that restart — its place is of the log before the
// repair, whose breaks it never read, and walking on from it found again
// what the repair healed (the e2e test saw a repaired economy go back to
// read_only).
func TestAStepInFlightKeepsARepairsRestart(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "ledger", store.Migrations())
		fc := clock.NewFake(t0)
		armed := new(atomic.Bool)
		var app *usecase.App
		open := func(q database.Querier) usecase.Repos {
			r := repos(q)
			r.Integrity = repairingIntegrity{Integrity: r.Integrity, armed: armed, repair: func() {
				_, err := app.RepairAudit(ctx, "admin")
				require.NoError(t, err)
			}}
			return r
		}
		app = usecase.New(db, open, usecase.Config{Clock: fc, Ideas: ideas{}, AuditSigner: testSigner, ScrubSlice: 2})
		require.NoError(t, app.Register(ctx, store.Contributor{ID: "ada", Handle: "ada", TrustLevel: "tofu", CreatedAt: t0},
			store.Session{TokenHash: "hash-ada", CreatedAt: t0}))
		deposits(t, app, "", 3)
		sequence(t, app)

		step, err := app.Scrub(ctx)
		require.NoError(t, err)
		require.False(t, step.Completed, "two entries a step: the cycle goes on")
		before, err := app.ScrubReport(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(3), before.NextSeq)

		fc.Advance(time.Second)
		armed.Store(true)
		_, err = app.Scrub(ctx)
		require.NoError(t, err)
		require.False(t, armed.Load(), "the repair ran inside the step")
		after, err := app.ScrubReport(ctx)
		require.NoError(t, err)
		require.Equal(t, before.Current+1, after.Current, "the repair's fresh cycle")
		require.Equal(t, int64(1), after.NextSeq, "from the first entry, not where the step before the repair got to")
	})
}

package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// TestDeletedMovementIsFoundAndItsSeqNeverReused is the issue's
// reproduction: a deposit's two audit entries are deleted and the economy
// row's head is rewound to the entry before them. The chain up to the head
// still links, but the signed checkpoint covers the deleted entries, so
// verification reports them missing, and the reconciliation of the
// journal with the trail reports the deposit the trail no longer records.
// The deposit's seq is never given to another entry: the sequencer assigns
// seqs, and it refuses to extend a log whose head is behind its signed
// checkpoint (two entries would then share seq 3 and the trail would look
// whole again), so the next movement's audit entry waits in the queue.
func TestDeletedMovementIsFoundAndItsSeqNeverReused(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "wire-", 2) // seq 1, 2: the first and its fee; 3, 4: the second

		sequence(t, e.app)
		c, err := e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Empty(t, c.Unreconciled)
		require.True(t, c.Trail().OK, "%+v", c.Trail())
		require.Equal(t, int64(5), c.Log.TreeSize, "the signed checkpoint covers seq 1 to 4")

		var entryID, kind, head string
		require.NoError(t, e.db.QueryRow(ctx, `SELECT entry_id, kind FROM audit_entries WHERE seq = 3`).Scan(&entryID, &kind))
		require.Equal(t, "deposit", kind)
		require.NoError(t, e.db.QueryRow(ctx, `SELECT hash FROM audit_entries WHERE seq = 2`).Scan(&head))
		require.NoError(t, e.db.Tx(ctx, func(q database.Querier) error {
			if _, err := q.Exec(ctx, `DELETE FROM audit_entries WHERE seq IN (3, 4)`); err != nil {
				return err
			}
			_, err := q.Exec(ctx, `UPDATE economy SET audit_seq = 2, audit_head = $1`, head)
			return err
		}))

		// A full walk, and the monitor's incremental check once its cached
		// answer expired, compare the head with the signed checkpoint.
		for _, full := range []bool{true, false} {
			if !full {
				e.clock.Advance(6 * time.Second)
			}
			res, err := e.app.VerifyAudit(ctx, full)
			require.NoError(t, err)
			require.False(t, res.OK, "full %v", full)
			require.Equal(t, int64(3), res.FirstDivergent, "full %v", full)
			require.Equal(t, int64(2), res.LastVerified, "full %v", full)
			require.Equal(t, "entries missing: the chain's head is seq 2, but the signed checkpoint covers seq 4", res.Reason)
		}

		c, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.Discrepancy{{AuditSeq: 0, EntryID: entryID,
			Problem: "journal entry " + entryID + " (deposit) is recorded by no audit entry"}}, c.Unreconciled)
		require.False(t, c.Chain.OK)
		trail := c.Trail()
		require.False(t, trail.OK)
		require.Equal(t, int64(3), trail.FirstDivergent)

		// The economy stopped at once: read_only for the entries missing
		// from the log, frozen for the deposit it no longer records.
		require.Equal(t, usecase.ModeFrozen, mode(t, e.app))
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(cc), Reference: "wire-next"}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Equal(t, "frozen", detail)
		// The two changes of mode are recorded, and wait in the queue: the
		// sequencer refuses to give either seq 3.
		_, err = e.app.Sequence(ctx)
		require.ErrorIs(t, err, usecase.ErrLogRewound, "the sequencer does not reuse seq 3")
		var n int
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_entries`).Scan(&n))
		require.Equal(t, 2, n, "nothing was sequenced")
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_entries WHERE seq = 3`).Scan(&n))
		require.Zero(t, n)
		backlog, err := e.app.AuditBacklog(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(2), backlog.Entries, "the changes of mode wait in the queue")
		eco := economy(t, e)
		require.Equal(t, int64(2), eco.AuditSeq, "the head stays where it was rewound to")
		c, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Len(t, c.Unreconciled, 1, "still reported")
		require.Equal(t, entryID, c.Unreconciled[0].EntryID)

		// The repair moves the head back to the signed checkpoint, records
		// seq 3 and 4 as a break, restores the deposit from its journal
		// entry and records its fee, which no journal entry holds, lost.
		rep, err := e.app.RepairAudit(ctx, "admin")
		require.NoError(t, err)
		require.Equal(t, []int64{3, 4}, []int64{rep.Break.From, rep.Break.To})
		require.Equal(t, []int64{3}, rep.Restored)
		require.Equal(t, []int64{4}, rep.Lost)
		require.Empty(t, rep.Correction, "the journal was not edited")
		require.Equal(t, 3, rep.Resolved, "the walk's, the coherence check's and the sequencer's")
		require.Zero(t, rep.Open.Total)
		require.Equal(t, usecase.ModeFrozen, rep.Mode, "a freeze is an administrator's to lift")
		_, err = e.app.Unfreeze(ctx, "repaired", "admin")
		require.NoError(t, err)
		c, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Empty(t, c.Unreconciled, "the deposit is recorded by its restored entry")
		require.True(t, c.Trail().OK, "%+v", c.Trail())
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(cc), Reference: "wire-next"}, nil)
		require.NoError(t, err)
		sequence(t, e.app)
		res, err := e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, res.Valid(), "%+v", res)
		require.Empty(t, scrubCycle(t, e.app), "the scrubber finds nothing left")
		require.Equal(t, usecase.ModeNormal, mode(t, e.app))
	})
}

// economy reads the economy row.
func economy(t *testing.T, e env) store.Economy {
	t.Helper()
	eco, err := repos(e.db).Credit.Economy(context.Background())
	require.NoError(t, err)
	return eco
}

// TestDeletedQueuedEntryIsFound: a movement's audit entry deleted from the
// queue before the sequencer saw it leaves a chain and a signed tree that
// are sound; the reconciliation of the journal with the trail finds the
// movement the trail does not record, and the trail's verdict fails on it.
func TestDeletedQueuedEntryIsFound(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "wire-", 1)
		var entryID string
		require.NoError(t, e.db.QueryRow(ctx, `SELECT entry_id FROM audit_queue WHERE kind = 'deposit'`).Scan(&entryID))
		n, err := e.db.Exec(ctx, `DELETE FROM audit_queue WHERE entry_id = $1`, entryID)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		deposits(t, e.app, "more-", 1)
		sequence(t, e.app)

		res, err := e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, res.OK, "the log itself is sound: %+v", res)
		require.Equal(t, int64(3), res.LastVerified, "the first deposit's fee and the second deposit's two entries")
		c, err := e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.True(t, c.Chain.OK)
		require.Equal(t, []store.Discrepancy{{EntryID: entryID,
			Problem: "journal entry " + entryID + " (deposit) is recorded by no audit entry"}}, c.Unreconciled)
		trail := c.Trail()
		require.False(t, trail.OK)
		require.Equal(t, "the journal and the audit trail disagree: journal entry "+entryID+" (deposit) is recorded by no audit entry",
			trail.Reason)
	})
}

// TestFreezeWhileTheLogRefusesToGrow: the monitor freezes the economy when
// the log is broken; the freeze commits though the sequencer refuses to
// extend the log (its entry waits in the queue until the log is repaired).
func TestFreezeWhileTheLogRefusesToGrow(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "wire-", 2)
		sequence(t, e.app)
		var head string
		require.NoError(t, e.db.QueryRow(ctx, `SELECT hash FROM audit_entries WHERE seq = 2`).Scan(&head))
		_, err := e.db.Exec(ctx, `DELETE FROM audit_entries WHERE seq IN (3, 4)`)
		require.NoError(t, err)
		_, err = e.db.Exec(ctx, `UPDATE economy SET audit_seq = 2, audit_head = $1`, head)
		require.NoError(t, err)

		m, err := e.app.SetMode(ctx, usecase.ModeFrozen, "audit chain broken at seq 3", "monitor")
		require.NoError(t, err)
		require.True(t, m.Changed)
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(cc)}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Equal(t, "frozen", detail)
		b, err := e.app.AuditBacklog(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(1), b.Entries, "the freeze's entry waits for the log to be repaired")
		_, err = e.app.Sequence(ctx)
		require.ErrorIs(t, err, usecase.ErrLogRewound)
	})
}

// TestAChangeOfModeLeavesALongBacklogToTheSequencer: a change of mode
// used to integrate the whole audit queue in its own transaction, all of
// it in memory (0.9 M entries: gigabytes, and past the monitor's
// deadline, redone and lost each time). Behind more than one of the
// sequencer's batches, it now commits at once and queues its entry after
// every queued one; the sequencer's batches integrate them in order and
// the log verifies. Behind a short queue it is appended at once, as
// before.
func TestAChangeOfModeLeavesALongBacklogToTheSequencer(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setupWith(t, engine, func(c *usecase.Config) { c.AuditBatch = 3 }, "ada")
		ctx := context.Background()
		kinds := func() []string { return texts(t, e.db, `SELECT kind FROM audit_entries ORDER BY seq`) }

		deposits(t, e.app, "short-", 1) // a deposit and its spread fee: within one batch
		m, err := e.app.SetMode(ctx, usecase.ModeWarning, "a short backlog", "monitor")
		require.NoError(t, err)
		require.True(t, m.Changed)
		require.Equal(t, []string{"deposit", "spread_fee", "monitor"}, kinds(), "appended at once, after the queue")

		deposits(t, e.app, "long-", 3) // six entries: two batches
		m, err = e.app.SetMode(ctx, usecase.ModeNormal, "a long backlog", "monitor")
		require.NoError(t, err)
		require.True(t, m.Changed, "the change commits at once")
		mode, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, usecase.ModeNormal, mode.Mode)
		b, err := e.app.AuditBacklog(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(7), b.Entries, "nothing drained by the change: six movements' entries and its own")
		require.Len(t, kinds(), 3)

		for range 3 {
			n, err := e.app.Sequence(ctx)
			require.NoError(t, err)
			require.LessOrEqual(t, n, 3, "a batch at a time")
		}
		require.Equal(t, []string{"deposit", "spread_fee", "monitor", "deposit", "spread_fee", "deposit", "spread_fee",
			"deposit", "spread_fee", "monitor"}, kinds(), "the change follows every movement that committed before it")
		v, err := e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, v.OK, "%+v", v.Result)
	})
}

// TestTheCoherenceCheckReadsWhatWasWrittenSince: each check reconciles
// at most CoherenceSlice journal and audit entries past where the last
// one stopped (it joined the whole journal with the whole trail every
// interval), stays coherenceMargin behind the newest journal entries,
// finds damage to what it reads, and keeps answering what it found until
// a repair; damage behind its place is the scrubber's to find.
func TestTheCoherenceCheckReadsWhatWasWrittenSince(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setupWith(t, engine, func(c *usecase.Config) { c.CoherenceSlice = 3 }, "ada")
		ctx := context.Background()
		place := func() (journalAfter string, logAfter int64) {
			t.Helper()
			require.NoError(t, e.db.QueryRow(ctx, `SELECT journal_after_id, log_after FROM coherence_place`).Scan(&journalAfter, &logAfter))
			return journalAfter, logAfter
		}
		deposits(t, e.app, "old-", 4) // 4 journal entries, 8 audit entries
		sequence(t, e.app)
		ids := texts(t, e.db, `SELECT id FROM cc_entries ORDER BY created_at, id`)

		c, err := e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Empty(t, c.Unreconciled)
		journal, logged := place()
		require.Equal(t, int64(3), logged, "three audit entries read")
		require.Empty(t, journal, "entries of the last 10 s are read again next time")

		e.clock.Advance(time.Minute)
		_, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		journal, logged = place()
		require.Equal(t, ids[2], journal, "three journal entries read")
		require.Equal(t, int64(6), logged)

		// Behind the place: the check does not see it; the scrubber does.
		_, err = e.db.Exec(ctx, `DELETE FROM audit_entries WHERE entry_id = $1`, ids[0])
		require.NoError(t, err)
		// Ahead of it: the next check does.
		_, err = e.db.Exec(ctx, `DELETE FROM audit_entries WHERE entry_id = $1`, ids[3])
		require.NoError(t, err)
		c, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		var got []string
		for _, d := range c.Unreconciled {
			got = append(got, d.EntryID)
		}
		require.Equal(t, []string{ids[3]}, got)
		require.Equal(t, "journal entry "+ids[3]+" (deposit) is recorded by no audit entry", c.Unreconciled[0].Problem)
		journal, logged = place()
		require.Equal(t, ids[3], journal)
		require.Equal(t, int64(8), logged, "up to the head")

		c, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Len(t, c.Unreconciled, 1, "still answered, from its open finding, though the place moved past it")
		require.Equal(t, ids[3], c.Unreconciled[0].EntryID)
		require.Equal(t, "journal entry "+ids[3]+" (deposit) is recorded by no audit entry", c.Unreconciled[0].Problem)
		require.False(t, c.Trail().OK)

		var scrubbed []string
		for _, f := range scrubCycle(t, e.app) {
			scrubbed = append(scrubbed, f.EntryID)
		}
		require.Contains(t, scrubbed, ids[0], "the scrubber finds what was behind the place")
		c, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		got = nil
		for _, d := range c.Unreconciled {
			got = append(got, d.EntryID)
		}
		require.ElementsMatch(t, []string{ids[0], ids[3]}, got, "every open journal finding is answered")

		// Caught up and idle, a check (the public status route's too)
		// writes nothing.
		var saved, again int64
		require.NoError(t, e.db.QueryRow(ctx, `SELECT updated_at FROM coherence_place`).Scan(&saved))
		e.clock.Advance(time.Minute)
		_, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.NoError(t, e.db.QueryRow(ctx, `SELECT updated_at FROM coherence_place`).Scan(&again))
		require.Equal(t, saved, again, "the place did not move, so it was not written")
	})
}

// texts reads the one text column of query's rows, in order.
func texts(t *testing.T, db *database.DB, query string) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), query)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

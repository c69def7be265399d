package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runReconcile checks the journal's reconciliation with the audit log:
// every journal entry is recorded by exactly one audit entry of its kind
// naming it (sequenced or queued), and every movement's audit entry names
// its journal entry.
func runReconcile(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("the journal and the audit log are reconciled, and an entry is recorded once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		prev := audit.Genesis
		seq := int64(0)
		// trail sequences an entry of kind; link is the journal entry it is
		// linked to (its entry_id column), attr the one its attributes name.
		trail := func(kind, link, attr string) error {
			t.Helper()
			attrs := map[string]string{"unit": "micro_cc"}
			if attr != "" {
				attrs["entry_id"] = attr
			}
			seq++
			r := audit.Seal(prev, audit.Entry{Seq: seq, Kind: kind, At: base.Add(time.Duration(seq) * time.Second), Actor: "admin",
				Subject: "ada", Amount: cc, Attrs: attrs})
			r.EntryID = link
			prev = r.Hash
			return h.write(func(rs repos) error { return rs.audit.Append(ctx, []audit.Record{r}, nil, nil) })
		}
		unreconciled := func() []store.Discrepancy {
			t.Helper()
			got, err := h.read().credit.Unreconciled(ctx, 100)
			require.NoError(t, err)
			return got
		}
		deposit := func() credit.Entry {
			return credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available("ada"), cc)
		}
		// queue writes a movement the way a use case does: the journal
		// entry and its audit entry, queued, in one batch.
		queue := func(kind credit.Kind, e credit.Entry) store.JournalEntry {
			t.Helper()
			je := store.JournalEntry{ID: uuid.NewString(), Entry: e, ContributorID: "ada", Amount: cc, CreatedAt: base}
			require.NoError(t, h.write(func(r repos) error {
				_, err := r.credit.Apply(ctx, store.Movement{Journal: je, Audit: []store.Queued{{ID: uuid.NewString(), EntryID: je.ID,
					Entry: audit.Entry{Kind: string(kind), At: base, Actor: "ada", Subject: "ada", Amount: cc,
						Attrs: map[string]string{"entry_id": je.ID}}}}})
				return err
			}))
			return je
		}

		// A deposit (seq 1) and its spread fee (seq 2), an incident entry
		// that names no journal entry (seq 3), and a deposit still queued:
		// reconciled.
		a := apply(t, h, 0, "ada", "", deposit())
		require.NoError(t, trail("deposit", a.ID, a.ID))
		require.NoError(t, trail("spread_fee", "", a.ID))
		require.NoError(t, trail("freeze", "", ""))
		queued := queue(credit.KindDeposit, deposit())
		require.Empty(t, unreconciled())

		// A journal entry is linked to one sequenced audit entry at most.
		require.ErrorIs(t, trail("deposit", a.ID, a.ID), store.ErrAlreadyExists)
		seq--

		// Each way they can disagree.
		missing := apply(t, h, 0, "ada", "", deposit())        // no audit entry
		require.NoError(t, trail("deposit", "", "ghost"))      // seq 4: a movement's entry naming no journal entry
		require.NoError(t, trail("spread_fee", "", "ghost-f")) // seq 5: a fee naming no journal entry
		stake := apply(t, h, 0, "ada", "", credit.Transfer(credit.KindStake, credit.Available("ada"), credit.Staked("ada", "i"), cc))
		require.NoError(t, trail("deposit", stake.ID, stake.ID)) // seq 6: another kind
		other := apply(t, h, 0, "ada", "", deposit())
		require.NoError(t, trail("deposit", other.ID, "someone-else")) // seq 7: attributes that name another entry
		twice := queue(credit.KindDeposit, deposit())
		require.NoError(t, trail("deposit", twice.ID, twice.ID)) // seq 8: sequenced and still queued
		require.ElementsMatch(t, []store.Discrepancy{
			{AuditSeq: 0, EntryID: missing.ID, Problem: "journal entry " + missing.ID + " (deposit) is recorded by no audit entry"},
			{AuditSeq: 4, EntryID: "ghost", Problem: "audit entry 4 (deposit) names journal entry ghost, which is not recorded by it"},
			{AuditSeq: 5, EntryID: "ghost-f", Problem: "audit entry 5 (spread_fee) names journal entry ghost-f, which does not exist"},
			{AuditSeq: 6, EntryID: stake.ID, Problem: "journal entry " + stake.ID + " (stake) is recorded by audit entry 6, which records a deposit"},
			{AuditSeq: 7, EntryID: other.ID, Problem: "audit entry 7 (deposit) is linked to journal entry " + other.ID + ` but its attributes name "someone-else"`},
			{AuditSeq: 8, EntryID: twice.ID, Problem: "journal entry " + twice.ID + " (deposit) is recorded by audit entry 8 and again in the queue"},
		}, unreconciled())
		require.NotContains(t, fmt.Sprint(unreconciled()), queued.ID, "a queued movement is reconciled")

		got, err := h.read().credit.Unreconciled(ctx, 2)
		require.NoError(t, err)
		require.Len(t, got, 2, "cut at the limit")

		// The log's side over a range of seqs, as the coherence check
		// reads what was sequenced since its last look.
		ranged := func(after, through int64, limit int) []int64 {
			t.Helper()
			got, err := h.read().integrity.UnreconciledLog(ctx, after, through, limit)
			require.NoError(t, err)
			seqs := []int64{}
			for _, d := range got {
				seqs = append(seqs, d.AuditSeq)
			}
			return seqs
		}
		require.Equal(t, []int64{4, 5, 7}, ranged(0, 8, 10), "the movement entries that name no journal entry rightly")
		require.Equal(t, []int64{5}, ranged(4, 6, 10), "after 4, at most 6")
		require.Equal(t, []int64{4}, ranged(0, 8, 1), "cut at the limit")
		require.Empty(t, ranged(7, 8, 10))
	})

	t.Run("the coherence check's place is kept", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		zero, err := h.read().integrity.CoherencePlace(ctx)
		require.NoError(t, err)
		require.Equal(t, store.CoherencePlace{}, zero, "the start of both before the first check")
		for _, p := range []store.CoherencePlace{
			{JournalAfter: store.JournalKey{CreatedAt: base.Add(time.Microsecond), ID: "e-1"}, LogAfter: 12, UpdatedAt: base.Add(time.Minute)},
			{LogAfter: 3, UpdatedAt: base.Add(2 * time.Minute)},
		} {
			require.NoError(t, h.write(func(r repos) error { return r.integrity.SaveCoherencePlace(ctx, p) }))
			got, err := h.read().integrity.CoherencePlace(ctx)
			require.NoError(t, err)
			require.Equal(t, p, got)
		}
	})
}

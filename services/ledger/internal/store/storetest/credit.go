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
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

const cc = money.Scale

// apply records one entry in its own transaction, as a use case's move
// does (without the economy row, which these methods do not touch).
func apply(t *testing.T, h Harness, seq int64, contributor, idea string, e credit.Entry) store.JournalEntry {
	t.Helper()
	amount := e.Lines[0].Delta
	if amount < 0 {
		amount = -amount
	}
	je := store.JournalEntry{ID: uuid.NewString(), Entry: e, ContributorID: contributor, IdeaID: idea, Amount: amount,
		AuditSeq: seq, CreatedAt: base.Add(time.Duration(seq) * time.Second)}
	require.NoError(t, h.write(func(r repos) error {
		_, err := r.credit.Apply(context.Background(), store.Movement{Journal: je})
		return err
	}))
	return je
}

// mint pays amount from issuance into contributor's available CC.
func mint(t *testing.T, h Harness, seq int64, contributor string, amount money.Micros) store.JournalEntry {
	t.Helper()
	return apply(t, h, seq, contributor, "", credit.Transfer(credit.KindDistribution, credit.Issuance, credit.Available(contributor), amount))
}

func runCredit(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("ids containing ':' keep their own balances, positions and history", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		// The ids that the name "available:github:octo" or
		// "available:bob:ghost" would be split into, and the ids themselves.
		mint(t, h, 1, "github:octo", 5*cc)
		mint(t, h, 2, "bob", 7*cc)
		mint(t, h, 3, "bob:ghost", 3*cc)
		mint(t, h, 4, "email:ada@example.com", 10*cc)
		stake := apply(t, h, 5, "email:ada@example.com", "x:y", credit.Transfer(credit.KindStake,
			credit.Available("email:ada@example.com"), credit.Staked("email:ada@example.com", "x:y"), 4*cc))
		apply(t, h, 6, "email:ada@example.com", "x:y", credit.Transfer(credit.KindUnstake,
			credit.Staked("email:ada@example.com", "x:y"), credit.Cooling("email:ada@example.com"), 1*cc))
		apply(t, h, 7, "bob", "x:y", credit.Transfer(credit.KindStake, credit.Available("bob"), credit.Staked("bob", "x:y"), 2*cc))

		balances := map[string]store.Balances{
			"github:octo":           {Available: 5 * cc},
			"github":                {},
			"octo":                  {},
			"bob":                   {Available: 5 * cc, Staked: 2 * cc},
			"bob:ghost":             {Available: 3 * cc},
			"email:ada@example.com": {Available: 6 * cc, Staked: 3 * cc, Cooling: 1 * cc},
			"email":                 {},
		}
		for id, want := range balances {
			got, err := h.read().credit.Balances(ctx, id)
			require.NoError(t, err)
			require.Equal(t, want, got, "balances of %q", id)
		}

		ps, err := h.read().credit.Positions(ctx, "email:ada@example.com")
		require.NoError(t, err)
		require.Len(t, ps, 1)
		require.Equal(t, store.Position{IdeaID: "x:y", Amount: 3 * cc, Since: stake.CreatedAt}, ps[0])
		for _, id := range []string{"email", "github", "bob:ghost"} {
			ps, err := h.read().credit.Positions(ctx, id)
			require.NoError(t, err)
			require.Empty(t, ps, "no positions for %q", id)
		}
		staked, n, err := h.read().credit.IdeaStaked(ctx, "x:y")
		require.NoError(t, err)
		require.Equal(t, money.Micros(5*cc), staked)
		require.Equal(t, 2, n)
		for _, idea := range []string{"y", "ada@example.com:x:y"} {
			staked, n, err := h.read().credit.IdeaStaked(ctx, idea)
			require.NoError(t, err)
			require.Zero(t, staked, idea)
			require.Zero(t, n, idea)
		}

		history, err := h.read().credit.History(ctx, "email:ada@example.com", 10, 0)
		require.NoError(t, err)
		require.Len(t, history, 3)
		require.Equal(t, stake.ID, history[1].ID)
		require.ElementsMatch(t, stake.Entry.Lines, history[1].Entry.Lines,
			"lines come back with their accounts' contributor and idea")
		history, err = h.read().credit.History(ctx, "bob", 10, 0)
		require.NoError(t, err)
		require.Len(t, history, 2, "bob:ghost's payout is not Bob's")

		mis, err := h.read().credit.JournalMismatches(ctx)
		require.NoError(t, err)
		require.Empty(t, mis)
	})

	t.Run("a stake's account is its contributor's and idea's, however ':' splits them", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		// Both pairs would once have been "staked:github:octo:x".
		mint(t, h, 1, "github:octo", 5*cc)
		mint(t, h, 2, "github", 5*cc)
		apply(t, h, 3, "github:octo", "x", credit.Transfer(credit.KindStake, credit.Available("github:octo"), credit.Staked("github:octo", "x"), 2*cc))
		apply(t, h, 4, "github", "octo:x", credit.Transfer(credit.KindStake, credit.Available("github"), credit.Staked("github", "octo:x"), 1*cc))

		for id, want := range map[string][]store.Position{
			"github:octo": {{IdeaID: "x", Amount: 2 * cc, Since: base.Add(3 * time.Second)}},
			"github":      {{IdeaID: "octo:x", Amount: 1 * cc, Since: base.Add(4 * time.Second)}},
		} {
			got, err := h.read().credit.Positions(ctx, id)
			require.NoError(t, err)
			require.Equal(t, want, got, "positions of %q", id)
		}
		// Unstaking all of one leaves the other whole.
		apply(t, h, 5, "github", "octo:x", credit.Transfer(credit.KindUnstake, credit.Staked("github", "octo:x"), credit.Available("github"), 1*cc))
		b, err := h.read().credit.Balances(ctx, "github:octo")
		require.NoError(t, err)
		require.Equal(t, store.Balances{Available: 3 * cc, Staked: 2 * cc}, b)
		err = h.write(func(r repos) error {
			_, err := r.credit.Apply(ctx, store.Movement{Journal: store.JournalEntry{ID: uuid.NewString(), AuditSeq: 6, CreatedAt: base,
				Entry: credit.Transfer(credit.KindUnstake, credit.Staked("github", "octo:x"), credit.Available("github"), 1*cc)}})
			return err
		})
		require.ErrorIs(t, err, store.ErrInsufficient, "github's stake is empty, whatever github:octo holds")
		mis, err := h.read().credit.JournalMismatches(ctx)
		require.NoError(t, err)
		require.Empty(t, mis)
	})

	t.Run("the coherence check finds a balance or a line that does not match its account", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		mint(t, h, 1, "github:octo", 5*cc)
		mint(t, h, 2, "bob", 5*cc)
		mis, err := h.read().credit.JournalMismatches(ctx)
		require.NoError(t, err)
		require.Empty(t, mis)

		_, err = h.DB.Exec(ctx, `UPDATE cc_lines SET contributor_id = 'github' WHERE account = 'available:github:octo'`)
		require.NoError(t, err)
		_, err = h.DB.Exec(ctx, `UPDATE cc_accounts SET balance = balance + 1 WHERE account = 'available:bob'`)
		require.NoError(t, err)
		mis, err = h.read().credit.JournalMismatches(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"available:bob", "available:github:octo"}, mis)
	})
}

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
	})
}

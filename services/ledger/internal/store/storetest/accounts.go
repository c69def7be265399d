package storetest

import (
	"context"
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

// runAccounts checks Apply and the accounts it moves: the balance after
// each line, the refusals that leave nothing written, and the balances
// and positions read back, whatever ':' the ids hold.
func runAccounts(t *testing.T, newHarness func(t *testing.T) Harness) {
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

		ps, n, err := h.read().credit.Positions(ctx, "email:ada@example.com", 10, 0)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		require.Equal(t, 1, n)
		require.Equal(t, store.Position{IdeaID: "x:y", Amount: 3 * cc, Since: stake.CreatedAt}, ps[0])
		for _, id := range []string{"email", "github", "bob:ghost"} {
			ps, n, err := h.read().credit.Positions(ctx, id, 10, 0)
			require.NoError(t, err)
			require.NotNil(t, ps)
			require.Empty(t, ps, "no positions for %q", id)
			require.Zero(t, n, id)
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

		history, total, err := h.read().credit.History(ctx, "email:ada@example.com", 10, 0)
		require.NoError(t, err)
		require.Len(t, history, 3)
		require.Equal(t, 3, total)
		require.Equal(t, stake.ID, history[1].ID)
		require.ElementsMatch(t, stake.Entry.Lines, history[1].Entry.Lines,
			"lines come back with their accounts' contributor and idea")
		history, total, err = h.read().credit.History(ctx, "bob", 1, 0)
		require.NoError(t, err)
		require.Len(t, history, 1, "a page of one")
		require.Equal(t, 2, total, "bob:ghost's payout is not Bob's")

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
			got, _, err := h.read().credit.Positions(ctx, id, 10, 0)
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

	t.Run("positions page largest first, then by idea, with the count of all of them; an emptied position is none", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		mint(t, h, 1, "ada", 20*cc)
		for i, s := range []struct {
			idea   string
			amount money.Micros
		}{{"b", 2 * cc}, {"a", 2 * cc}, {"c", 5 * cc}, {"d", 1 * cc}, {"gone", 1 * cc}} {
			apply(t, h, int64(2+i), "ada", s.idea, credit.Transfer(credit.KindStake, credit.Available("ada"), credit.Staked("ada", s.idea), s.amount))
		}
		apply(t, h, 7, "ada", "gone", credit.Transfer(credit.KindUnstake, credit.Staked("ada", "gone"), credit.Available("ada"), 1*cc))
		ideas := func(ps []store.Position) []string {
			out := make([]string, len(ps))
			for i, p := range ps {
				out[i] = p.IdeaID
			}
			return out
		}
		all, n, err := h.read().credit.Positions(ctx, "ada", 10, 0)
		require.NoError(t, err)
		require.Equal(t, []string{"c", "a", "b", "d"}, ideas(all), "largest first, a tie by idea")
		require.Equal(t, 4, n)
		require.Equal(t, store.Position{IdeaID: "c", Amount: 5 * cc, Since: base.Add(4 * time.Second)}, all[0])
		page, n, err := h.read().credit.Positions(ctx, "ada", 2, 1)
		require.NoError(t, err)
		require.Equal(t, all[1:3], page, "a page, each with its since")
		require.Equal(t, 4, n, "the count is of every position")
		past, n, err := h.read().credit.Positions(ctx, "ada", 10, 4)
		require.NoError(t, err)
		require.NotNil(t, past)
		require.Empty(t, past, "past the end: empty, not nil")
		require.Equal(t, 4, n, "past the end still counts")
	})

	t.Run("Apply returns each account's balance after, and the mode when asked; Balance and LockAccount read one account", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		applyM := func(m store.Movement) (store.Applied, error) {
			var out store.Applied
			err := h.write(func(r repos) (err error) {
				out, err = r.credit.Apply(ctx, m)
				return err
			})
			return out, err
		}
		movement := func(e credit.Entry, readMode bool) store.Movement {
			return store.Movement{Journal: store.JournalEntry{ID: uuid.NewString(), Entry: e, ContributorID: "ada", Amount: cc, CreatedAt: base},
				ReadMode: readMode}
		}
		available, staked := credit.Available("ada"), credit.Staked("ada", "i:1")

		got, err := applyM(movement(credit.Transfer(credit.KindDeposit, credit.Issuance, available, 5*cc), true))
		require.NoError(t, err)
		require.Equal(t, store.Applied{Mode: "normal", Balances: map[string]money.Micros{
			credit.Issuance.Name(): -5 * cc, available.Name(): 5 * cc}, At: base}, got)
		got, err = applyM(movement(credit.Transfer(credit.KindStake, available, staked, 2*cc), false))
		require.NoError(t, err)
		require.Equal(t, store.Applied{Balances: map[string]money.Micros{available.Name(): 3 * cc, staked.Name(): 2 * cc}, At: base}, got,
			"no mode unless asked")

		require.NoError(t, h.write(func(r repos) error {
			eco, err := r.credit.LockEconomy(ctx)
			if err != nil {
				return err
			}
			eco.Mode = "read_only"
			return r.credit.SaveEconomy(ctx, eco)
		}))
		got, err = applyM(movement(credit.Transfer(credit.KindStake, available, staked, cc), true))
		require.NoError(t, err)
		require.Equal(t, store.Applied{Mode: "read_only", Balances: map[string]money.Micros{available.Name(): 2 * cc, staked.Name(): 3 * cc}, At: base}, got,
			"the mode as it is; Apply does not judge it")

		for account, want := range map[credit.Account]money.Micros{
			available: 2 * cc, staked: 3 * cc, credit.Issuance: -5 * cc,
			credit.Available("bob"): 0, credit.Staked("ada", "i"): 0, credit.Cooling("ada"): 0,
		} {
			b, err := h.read().credit.Balance(ctx, account)
			require.NoError(t, err)
			require.Equal(t, want, b, account.Name())
		}
		require.NoError(t, h.write(func(r repos) error {
			for account, want := range map[credit.Account]bool{staked: true, available: true, credit.Staked("ada", "i"): false,
				credit.Available("bob"): false} {
				found, err := r.credit.LockAccount(ctx, account)
				require.NoError(t, err)
				require.Equal(t, want, found, account.Name())
			}
			return nil
		}))
	})

	t.Run("a movement whose mode changed after its time was taken is stamped just after the change", func(t *testing.T) {
		// The issue's: a stake's time was taken before its batch got the
		// mode lock, so one made after an unfreeze, having waited on it,
		// carried a time inside the frozen window.
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		changed := base.Add(time.Minute)
		require.NoError(t, h.write(func(r repos) error {
			eco, err := r.credit.LockEconomy(ctx)
			if err != nil {
				return err
			}
			eco.ModeSince = changed // an unfreeze, after the movement's time
			return r.credit.SaveEconomy(ctx, eco)
		}))
		apply := func(at time.Time, readMode bool) (store.Applied, string) {
			je := store.JournalEntry{ID: uuid.NewString(), Entry: credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available("ada"), cc),
				ContributorID: "ada", Amount: cc, CreatedAt: at}
			var got store.Applied
			require.NoError(t, h.write(func(r repos) (err error) {
				got, err = r.credit.Apply(ctx, store.Movement{Journal: je, ReadMode: readMode, Audit: []store.Queued{{ID: uuid.NewString(),
					EntryID: je.ID, Entry: audit.Entry{Kind: string(je.Entry.Kind), At: at, Actor: "ada", Subject: "ada", Amount: cc}}}})
				return err
			}))
			return got, je.ID
		}
		stamped := changed.Add(time.Microsecond)
		got, id := apply(base, true)
		require.Equal(t, stamped, got.At.UTC(), "just after the change")
		later, laterID := apply(changed.Add(time.Second), true)
		require.Equal(t, changed.Add(time.Second), later.At.UTC(), "a time after the change stays")
		history, _, err := h.read().credit.History(ctx, "ada", 10, 0)
		require.NoError(t, err)
		at := map[string]time.Time{}
		for _, e := range history {
			at[e.ID] = e.CreatedAt.UTC()
		}
		require.Equal(t, map[string]time.Time{id: stamped, laterID: changed.Add(time.Second)}, at, "the journal holds the stamped time")
		queued, err := h.read().audit.Queue(ctx, 10)
		require.NoError(t, err)
		for _, q := range queued {
			require.Equal(t, at[q.EntryID], q.Entry.At.UTC(), "the audit entry holds the journal's time")
		}
		require.Len(t, queued, 2)
	})

	t.Run("a debit from a missing or short account is ErrInsufficient, and nothing is written once the transaction rolls back", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		mint(t, h, 1, "ada", 5*cc)
		apply(t, h, 2, "ada", "i", credit.Transfer(credit.KindStake, credit.Available("ada"), credit.Staked("ada", "i"), 2*cc))
		counts := func() map[string]int {
			t.Helper()
			out := map[string]int{}
			for _, table := range []string{"cc_accounts", "cc_entries", "cc_lines", "audit_queue"} {
				var n int
				require.NoError(t, h.DB.QueryRow(ctx, `SELECT COUNT(*) FROM `+table).Scan(&n))
				out[table] = n
			}
			return out
		}
		before := counts()
		require.Equal(t, map[string]int{"cc_accounts": 3, "cc_entries": 2, "cc_lines": 4, "audit_queue": 0}, before)

		for name, e := range map[string]credit.Entry{
			"a contributor with no account":       credit.Transfer(credit.KindStake, credit.Available("bob"), credit.Staked("bob", "i"), cc),
			"more than is available":              credit.Transfer(credit.KindStake, credit.Available("ada"), credit.Staked("ada", "i"), 3*cc+1),
			"a position that does not exist":      credit.Transfer(credit.KindUnstake, credit.Staked("ada", "other"), credit.Available("ada"), cc),
			"more than the position":              credit.Transfer(credit.KindUnstake, credit.Staked("ada", "i"), credit.Available("ada"), 2*cc+1),
			"a credit to an account not yet made": credit.Transfer(credit.KindUnstake, credit.Staked("ada", "i"), credit.Cooling("ada"), 3*cc),
		} {
			je := store.JournalEntry{ID: uuid.NewString(), Entry: e, ContributorID: "ada", IdeaID: "i", Amount: cc, CreatedAt: base}
			var got store.Applied
			err := h.write(func(r repos) (err error) {
				got, err = r.credit.Apply(ctx, store.Movement{Journal: je, ReadMode: true, Audit: []store.Queued{{ID: uuid.NewString(),
					EntryID: je.ID, Entry: audit.Entry{Kind: string(e.Kind), At: base, Actor: "ada", Subject: "ada", Amount: cc}}}})
				return err
			})
			require.ErrorIs(t, err, store.ErrInsufficient, name)
			require.Equal(t, "normal", got.Mode, "%s: the mode is read even so (a frozen economy is refused before a short balance)", name)
			require.Equal(t, before, counts(), name)
		}
		for account, want := range map[credit.Account]money.Micros{credit.Available("ada"): 3 * cc, credit.Staked("ada", "i"): 2 * cc,
			credit.Cooling("ada"): 0, credit.Available("bob"): 0, credit.Issuance: -5 * cc} {
			b, err := h.read().credit.Balance(ctx, account)
			require.NoError(t, err)
			require.Equal(t, want, b, account.Name())
		}
		mis, err := h.read().credit.JournalMismatches(ctx)
		require.NoError(t, err)
		require.Empty(t, mis)
	})
}

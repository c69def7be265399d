package storetest

import (
	"context"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runQueue checks what the parallel movements and the batched audit log
// rest on: Apply's balances, mode and refusals, the audit queue, the
// Merkle tree's stored hashes and the checkpoints.
func runQueue(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("Enqueue queues entries that record no journal entry, in the queue's order", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		freeze := store.Queued{ID: "q-2", Entry: audit.Entry{Kind: "freeze", At: base.Add(time.Second), Actor: "signer:ops",
			Subject: "economy", Attrs: map[string]string{"to": "frozen"}}}
		trip := store.Queued{ID: "q-1", Entry: audit.Entry{Kind: "oracle_tripped", At: base, Actor: "oracle",
			Subject: "exchange_rate", Amount: 120 * cc, Attrs: map[string]string{"unit": "micro_cc_per_usd"}}}
		require.NoError(t, h.write(func(r repos) error { return r.audit.Enqueue(ctx, []store.Queued{freeze, trip}) }))
		require.NoError(t, h.write(func(r repos) error { return r.audit.Enqueue(ctx, nil) }), "nothing to queue")
		got, err := h.read().audit.Queue(ctx, 10)
		require.NoError(t, err)
		require.Len(t, got, 2)
		for i := range got {
			got[i].Entry.At = got[i].Entry.At.UTC()
		}
		require.Equal(t, []store.Queued{trip, freeze}, got, "oldest first, no journal entry named")
		n, oldest, err := h.read().audit.Backlog(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.True(t, oldest.Equal(base))
	})

	t.Run("Apply queues a movement's audit entries; the queue hands them out oldest first and Append dequeues them", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		// queued applies a deposit for ada, journal entry id, with its
		// audit entries.
		queued := func(id string, at time.Time, qs ...store.Queued) {
			t.Helper()
			je := store.JournalEntry{ID: id, Entry: credit.Transfer(credit.KindDeposit, credit.Issuance, credit.Available("ada"), cc),
				ContributorID: "ada", Amount: cc, CreatedAt: at}
			require.NoError(t, h.write(func(r repos) error {
				_, err := r.credit.Apply(ctx, store.Movement{Journal: je, Audit: qs})
				return err
			}))
		}
		entry := func(kind string, at time.Time, attrs map[string]string) audit.Entry {
			return audit.Entry{Kind: kind, At: at, Actor: "ada", Subject: "ada", Amount: cc, Attrs: attrs}
		}
		t1, t2, t3 := base.Add(time.Second+7*time.Microsecond), base.Add(2*time.Second), base.Add(3*time.Second)
		a, b, c := uuid.NewString(), uuid.NewString(), uuid.NewString()
		want := []store.Queued{
			{ID: "q-a", EntryID: a, Entry: entry("deposit", t1, map[string]string{"entry_id": a, "unit": "micro_cc"})},
			{ID: "q-c", EntryID: c, Entry: entry("deposit", t1, map[string]string{"entry_id": c})},
			{ID: "q-b", EntryID: b, Entry: entry("deposit", t2, map[string]string{"entry_id": b, "unit": "micro_cc"})},
			{ID: "q-fee", Entry: entry("spread_fee", t3, nil)},
		}

		n, oldest, err := h.read().audit.Backlog(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		require.True(t, oldest.IsZero(), "no oldest time for an empty queue")

		// Written out of order: the queue orders by time, then id. A fee's
		// entry records no journal entry, and no attributes read back nil.
		queued(b, t2, want[2])
		queued(c, t1, want[1])
		queued(a, t1, want[0], want[3])
		got, err := h.read().audit.Queue(ctx, 100)
		require.NoError(t, err)
		require.Equal(t, want, got, "oldest first by (at, id), each with its journal entry")
		got, err = h.read().audit.Queue(ctx, 2)
		require.NoError(t, err)
		require.Equal(t, want[:2], got, "up to the limit")
		n, oldest, err = h.read().audit.Backlog(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(4), n)
		require.Equal(t, t1, oldest)

		// The sequencer seals the first two and dequeues them in the same
		// batch as the records and their tree hashes.
		seal := func(prev audit.Hash, seq int64, q store.Queued) audit.Record {
			e := q.Entry
			e.Seq = seq
			r := audit.Seal(prev, e)
			r.EntryID = q.EntryID
			return r
		}
		r1 := seal(audit.Genesis, 1, want[0])
		r2 := seal(r1.Hash, 2, want[1])
		require.NoError(t, h.write(func(r repos) error {
			return r.audit.Append(ctx, []audit.Record{r1, r2}, []string{"q-a", "q-c"}, map[int64]audit.Hash{0: hashOf("0"), 1: hashOf("1")})
		}))
		got, err = h.read().audit.Queue(ctx, 100)
		require.NoError(t, err)
		require.Equal(t, want[2:], got)
		n, oldest, err = h.read().audit.Backlog(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Equal(t, t2, oldest)
		recs, err := h.read().audit.Range(ctx, 0, 10)
		require.NoError(t, err)
		require.Equal(t, []audit.Record{r1, r2}, recs, "sequenced with the journal entry each records")

		// A seq taken refuses the whole batch: nothing is dequeued.
		r3 := seal(r2.Hash, 3, want[2])
		err = h.write(func(r repos) error {
			return r.audit.Append(ctx, []audit.Record{r3, r1}, []string{"q-b"}, nil)
		})
		require.ErrorIs(t, err, store.ErrAlreadyExists)
		n, _, err = h.read().audit.Backlog(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "the refused batch dequeued nothing")

		r4 := seal(r3.Hash, 4, want[3])
		require.NoError(t, h.write(func(r repos) error {
			return r.audit.Append(ctx, []audit.Record{r3, r4}, []string{"q-b", "q-fee"}, nil)
		}))
		got, err = h.read().audit.Queue(ctx, 100)
		require.NoError(t, err)
		require.Empty(t, got)
		n, oldest, err = h.read().audit.Backlog(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		require.True(t, oldest.IsZero())
		recs, err = h.read().audit.Range(ctx, 0, 10)
		require.NoError(t, err)
		require.Equal(t, []audit.Record{r1, r2, r3, r4}, recs)
		require.True(t, audit.Verify(recs).OK)
		unreconciled, err := h.read().credit.Unreconciled(ctx, 10)
		require.NoError(t, err)
		require.Empty(t, unreconciled, "each journal entry is recorded by the entry that names it")
	})

	t.Run("the tree's stored hashes are read by index, and a missing one is an error", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		tree := map[int64]audit.Hash{0: hashOf("a"), 1: hashOf("b"), 2: hashOf("c")}
		require.NoError(t, h.write(func(r repos) error { return r.audit.Append(ctx, nil, nil, tree) }))
		require.NoError(t, h.write(func(r repos) error {
			return r.audit.Append(ctx, nil, nil, map[int64]audit.Hash{3: hashOf("d")})
		}))

		got, err := h.read().audit.TreeHashes(ctx, []int64{2, 0, 3, 1})
		require.NoError(t, err)
		require.Equal(t, []audit.Hash{hashOf("c"), hashOf("a"), hashOf("d"), hashOf("b")}, got, "in the order asked")
		got, err = h.read().audit.TreeHashes(ctx, []int64{1, 1})
		require.NoError(t, err)
		require.Equal(t, []audit.Hash{hashOf("b"), hashOf("b")}, got)
		got, err = h.read().audit.TreeHashes(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, got)

		_, err = h.read().audit.TreeHashes(ctx, []int64{0, 4})
		require.Error(t, err, "index 4 is not stored")
		_, err = h.read().audit.TreeHashes(ctx, []int64{-1})
		require.Error(t, err)

		err = h.write(func(r repos) error { return r.audit.Append(ctx, nil, nil, map[int64]audit.Hash{2: hashOf("x")}) })
		require.Error(t, err, "a stored hash is never overwritten")
		got, err = h.read().audit.TreeHashes(ctx, []int64{2})
		require.NoError(t, err)
		require.Equal(t, []audit.Hash{hashOf("c")}, got)
	})

	t.Run("checkpoints round-trip by name; none before the first", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		for _, name := range []string{"latest", "verified"} {
			_, err := h.read().audit.Checkpoint(ctx, name)
			require.ErrorIs(t, err, store.ErrNotFound, name)
		}
		first := store.Checkpoint{Size: 1, Root: hashOf("root-1"), Chain: audit.Genesis, Note: "foundry-audit\n1\nroot\n\n— sig\n",
			At: base.Add(123 * time.Microsecond)}
		require.NoError(t, h.write(func(r repos) error { return r.audit.SaveCheckpoint(ctx, "latest", first) }))
		got, err := h.read().audit.Checkpoint(ctx, "latest")
		require.NoError(t, err)
		require.Equal(t, first, got, "the genesis chain hash round-trips")
		_, err = h.read().audit.Checkpoint(ctx, "verified")
		require.ErrorIs(t, err, store.ErrNotFound, "another name")

		second := store.Checkpoint{Size: 42, Root: hashOf("root-42"), Chain: hashOf("chain-41"), Note: "note 42", At: base.Add(time.Hour)}
		verified := store.Checkpoint{Size: 7, Root: hashOf("root-7"), Chain: hashOf("chain-6"), At: base.Add(time.Minute)}
		require.NoError(t, h.write(func(r repos) error {
			if err := r.audit.SaveCheckpoint(ctx, "latest", second); err != nil {
				return err
			}
			return r.audit.SaveCheckpoint(ctx, "verified", verified)
		}))
		got, err = h.read().audit.Checkpoint(ctx, "latest")
		require.NoError(t, err)
		require.Equal(t, second, got, "saved again: replaced")
		got, err = h.read().audit.Checkpoint(ctx, "verified")
		require.NoError(t, err)
		require.Equal(t, verified, got)
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
			credit.Issuance.Name(): -5 * cc, available.Name(): 5 * cc}}, got)
		got, err = applyM(movement(credit.Transfer(credit.KindStake, available, staked, 2*cc), false))
		require.NoError(t, err)
		require.Equal(t, store.Applied{Balances: map[string]money.Micros{available.Name(): 3 * cc, staked.Name(): 2 * cc}}, got,
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
		require.Equal(t, store.Applied{Mode: "read_only", Balances: map[string]money.Micros{available.Name(): 2 * cc, staked.Name(): 3 * cc}}, got,
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

// hashOf is a distinct hash per text.
func hashOf(s string) audit.Hash { return sha256.Sum256([]byte(s)) }

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
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runQueue checks what the batched audit log rests on: the audit queue
// (filled by Apply and Enqueue, emptied by Append), the Merkle tree's
// stored hashes and the checkpoints. (Apply's balances, mode and refusals
// are accounts.go's.)
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
		tail, newest, err := h.read().audit.QueueTail(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, 1, tail, "the count stops at its limit")
		require.True(t, newest.Equal(base.Add(time.Second)), "the newest entry's time, whatever the limit")
		tail, _, err = h.read().audit.QueueTail(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 2, tail)
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
		tail, newest, err := h.read().audit.QueueTail(ctx, 10)
		require.NoError(t, err)
		require.Zero(t, tail)
		require.True(t, newest.IsZero(), "no newest time for an empty queue")

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
}

// hashOf is a distinct hash per text.
func hashOf(s string) audit.Hash { return sha256.Sum256([]byte(s)) }

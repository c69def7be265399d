package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// item is task id's undelivered advancement of its idea, due at due.
func item(id string, due time.Time) store.OutboxItem {
	return store.OutboxItem{TaskID: id, IdeaID: "idea-" + id, TaskType: task.Impl, CreatedAt: base, NextAttemptAt: due}
}

// enqueue stores items, each in its own transaction, and requires each
// to be new.
func enqueue(t *testing.T, h Harness, items ...store.OutboxItem) {
	t.Helper()
	for _, it := range items {
		var added bool
		require.NoError(t, h.write(func(r repos) (err error) {
			added, err = r.outbox.Enqueue(context.Background(), it)
			return err
		}))
		require.True(t, added, it.TaskID)
	}
}

// taskIDs are the items' task ids, in order.
func taskIDs(items []store.OutboxItem) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.TaskID
	}
	return out
}

// runOutbox checks the idea outbox: an item per task, handed to one
// deliverer at a time (Take holds what it hands out until a time), and
// settled by its attempts until delivered.
func runOutbox(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("an item is enqueued once per task and read back as stored", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		first := store.OutboxItem{TaskID: "t1", IdeaID: "idea:1", TaskType: task.Spec, CreatedAt: at(time.Microsecond),
			NextAttemptAt: at(time.Second)}
		enqueue(t, h, first)
		got, err := h.read().outbox.Get(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, first, got)

		var added bool
		require.NoError(t, h.write(func(r repos) (err error) {
			added, err = r.outbox.Enqueue(ctx, store.OutboxItem{TaskID: "t1", IdeaID: "other", TaskType: task.Test,
				CreatedAt: at(time.Hour), NextAttemptAt: at(time.Hour)})
			return err
		}))
		require.False(t, added, "the task has its item")
		got, err = h.read().outbox.Get(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, first, got, "the first one stays")

		settled := store.OutboxItem{TaskID: "t2", IdeaID: "idea-2", TaskType: task.Review, CreatedAt: base,
			DeliveredAt: at(time.Minute), Attempts: 3, LastError: "unknown idea", NextAttemptAt: at(30 * time.Second)}
		enqueue(t, h, settled)
		got, err = h.read().outbox.Get(ctx, "t2")
		require.NoError(t, err)
		require.Equal(t, settled, got, "every column round-trips")

		_, err = h.read().outbox.Get(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("Take hands out the due undelivered items, oldest due first, and holds them until a time", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		delivered := item("e", base)
		delivered.DeliveredAt = at(time.Second)
		// Stored in another order than they are due.
		enqueue(t, h, item("b", at(3*time.Second)), item("d", at(10*time.Second)), delivered,
			item("a", at(time.Second)), item("c", at(2*time.Second)), item("f", at(5*time.Second)))
		now, until := at(5*time.Second), at(35*time.Second)
		take := func(now, until time.Time, limit int) []store.OutboxItem {
			t.Helper()
			var got []store.OutboxItem
			require.NoError(t, h.write(func(r repos) (err error) {
				got, err = r.outbox.Take(ctx, now, until, limit)
				return err
			}))
			return got
		}

		got := take(now, until, 2)
		require.ElementsMatch(t, []store.OutboxItem{item("a", until), item("c", until)}, got,
			"up to the limit, the oldest due, each handed out with its next attempt moved to until")
		got = take(now, until, 10)
		require.ElementsMatch(t, []string{"b", "f"}, taskIDs(got), "due at or before now; the taken ones are held")
		require.Empty(t, take(now, until, 10), "everything due is held")
		stored, err := h.read().outbox.Get(ctx, "b")
		require.NoError(t, err)
		require.Equal(t, until, stored.NextAttemptAt)

		// A deliverer that took them and vanished: they come due again at
		// until, after d (due before them).
		require.Equal(t, []string{"d"}, taskIDs(take(until, at(time.Hour), 1)), "the oldest due first")
		got = take(until, at(time.Hour), 10)
		require.ElementsMatch(t, []string{"a", "b", "c", "f"}, taskIDs(got))
		for _, it := range got {
			require.True(t, it.DeliveredAt.IsZero())
			require.Equal(t, at(time.Hour), it.NextAttemptAt)
		}
		require.ElementsMatch(t, []string{"a", "b", "c", "d", "f"}, taskIDs(take(at(24*time.Hour), at(48*time.Hour), 10)),
			"the delivered item is never taken")
	})

	t.Run("Take returns the items it hands out oldest due first", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		// Stored in another order than they are due; two due at once go
		// by task id.
		enqueue(t, h, item("e", at(5*time.Second)), item("b", at(2*time.Second)), item("g", at(7*time.Second)),
			item("a", at(time.Second)), item("f", at(5*time.Second)), item("c", at(3*time.Second)), item("d", at(4*time.Second)))
		var got []store.OutboxItem
		require.NoError(t, h.write(func(r repos) (err error) {
			got, err = r.outbox.Take(ctx, at(time.Minute), at(2*time.Minute), 10)
			return err
		}))
		want := []string{"a", "b", "c", "d", "e", "f", "g"}
		require.Equal(t, want, taskIDs(got), "oldest due first, then by task id")
	})

	t.Run("TakeOne takes a task's item whether due or not, and not once delivered", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		delivered := item("done", base)
		delivered.DeliveredAt = at(time.Second)
		enqueue(t, h, item("later", at(time.Hour)), delivered)
		takeOne := func(id string) (store.OutboxItem, error) {
			var got store.OutboxItem
			err := h.write(func(r repos) (err error) {
				got, err = r.outbox.TakeOne(ctx, id, at(time.Minute))
				return err
			})
			return got, err
		}
		got, err := takeOne("later")
		require.NoError(t, err)
		require.Equal(t, item("later", at(time.Minute)), got, "not yet due, taken anyway, held until the given time")
		stored, err := h.read().outbox.Get(ctx, "later")
		require.NoError(t, err)
		require.Equal(t, got, stored)
		_, err = takeOne("done")
		require.ErrorIs(t, err, store.ErrNotFound, "delivered")
		_, err = takeOne("missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("Settle records each attempt; a delivered item stays delivered", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		enqueue(t, h, item("a", base))
		settle := func(it store.OutboxItem) {
			t.Helper()
			require.NoError(t, h.write(func(r repos) error { return r.outbox.Settle(ctx, it) }))
		}
		read := func() store.OutboxItem {
			t.Helper()
			got, err := h.read().outbox.Get(ctx, "a")
			require.NoError(t, err)
			return got
		}
		due := func(now time.Time) []string {
			t.Helper()
			var got []store.OutboxItem
			require.NoError(t, h.write(func(r repos) (err error) {
				got, err = r.outbox.Take(ctx, now, now.Add(30*time.Second), 10)
				return err
			}))
			return taskIDs(got)
		}

		failed := item("a", at(7*time.Second))
		failed.Attempts, failed.LastError = 1, "portfolio unavailable"
		settle(failed)
		require.Equal(t, failed, read(), "the attempt, its error and the retry's time")
		require.Empty(t, due(at(6*time.Second)), "backing off")
		require.Equal(t, []string{"a"}, due(at(7*time.Second)))

		ok := item("a", at(7*time.Second))
		ok.Attempts, ok.DeliveredAt = 2, at(8*time.Second)
		settle(ok)
		require.Equal(t, ok, read(), "delivered, the last error cleared")

		late := item("a", at(9*time.Second))
		late.Attempts, late.LastError = 2, "a slower deliverer's failure"
		settle(late)
		require.Equal(t, ok, read(), "a late failure report does not undo the delivery")
		require.Empty(t, due(at(24*time.Hour)))
	})

	t.Run("deliverers taking at once share out the due items", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		enqueue(t, h, item("a", at(time.Second)), item("b", at(2*time.Second)), item("c", at(3*time.Second)))
		now, until := at(time.Minute), at(2*time.Minute)
		take := func(limit int) ([]store.OutboxItem, error) {
			tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			var got []store.OutboxItem
			err := h.DB.Tx(tctx, func(q database.Querier) (err error) {
				got, err = h.Outbox(q).Take(tctx, now, until, limit)
				return err
			})
			return got, err
		}
		var first, second []store.OutboxItem
		if h.DB.Engine() == database.Postgres {
			commit := hold(t, h, func(r repos) (err error) {
				first, err = r.outbox.Take(ctx, now, until, 2)
				return err
			})
			var err error
			second, err = take(10)
			require.NoError(t, err, "the rows the first deliverer is taking are skipped, not waited for")
			require.NoError(t, commit())
		} else {
			var err error
			first, err = take(2)
			require.NoError(t, err)
			second, err = take(10)
			require.NoError(t, err)
		}
		require.ElementsMatch(t, []string{"a", "b"}, taskIDs(first), "the oldest due")
		require.Equal(t, []string{"c"}, taskIDs(second))
	})

	t.Run("the backlog counts the undelivered items and names when the oldest was queued", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		backlog := func() store.OutboxBacklog {
			t.Helper()
			var out store.OutboxBacklog
			var b database.Batch
			h.read().outbox.QueueBacklog(&b, &out)
			require.NoError(t, h.DB.SendBatch(ctx, &b))
			return out
		}
		require.Equal(t, store.OutboxBacklog{}, backlog(), "empty")

		queued := func(id string, created time.Time) store.OutboxItem {
			it := item(id, created)
			it.CreatedAt = created
			return it
		}
		enqueue(t, h, queued("a", at(time.Second)), queued("b", at(2*time.Second)), queued("c", at(3*time.Second)))
		require.Equal(t, store.OutboxBacklog{Items: 3, Oldest: at(time.Second)}, backlog())

		delivered := queued("a", at(time.Second))
		delivered.Attempts, delivered.DeliveredAt = 1, at(time.Minute)
		require.NoError(t, h.write(func(r repos) error { return r.outbox.Settle(ctx, delivered) }))
		retrying := queued("b", at(time.Hour))
		retrying.CreatedAt, retrying.Attempts, retrying.LastError = at(2*time.Second), 1, "portfolio unavailable"
		require.NoError(t, h.write(func(r repos) error { return r.outbox.Settle(ctx, retrying) }))
		require.Equal(t, store.OutboxBacklog{Items: 2, Oldest: at(2 * time.Second)}, backlog(),
			"a delivered item leaves it; one waiting for a retry stays, aged from when it was queued")
	})
}

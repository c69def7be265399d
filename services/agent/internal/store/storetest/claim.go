package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// claimNext is the claim use case's transaction body: the next pending
// task of the types, saved as worker's (usecase.App.Claim).
func claimNext(ctx context.Context, r repos, worker string, types []task.Type, now time.Time) (store.Task, error) {
	cur, err := r.tasks.NextPending(ctx, types)
	if err != nil {
		return store.Task{}, err
	}
	next := running(cur, worker, time.Minute, now)
	return next, r.tasks.Save(ctx, next)
}

// runClaim checks NextPending, the claim's SQL: the oldest pending task
// of the types, locked, and skipped by every other claimer while its
// claimer's transaction is open (FOR UPDATE SKIP LOCKED on Postgres;
// SQLite's write transactions exclude each other).
func runClaim(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("the next pending task is the oldest of the types, ties by id; other statuses are never next", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		old := func(id string, typ task.Type, status task.Status) store.Task {
			tk := pending(id, typ, at(-time.Hour))
			tk.Status = status
			return tk
		}
		insert(t, h,
			pending("t-1", task.Spec, at(3*time.Second)),
			pending("t-5", task.Impl, at(time.Second)),
			pending("t-4", task.Impl, at(time.Second)), // same time as t-5: the smaller id first
			pending("t-2", task.Test, at(2*time.Second)),
			pending("t-9", task.Review, at(4*time.Second)),
			// Older than every pending task, in every other status.
			old("x-running", task.Impl, task.Running),
			old("x-decision", task.Spec, task.NeedsDecision),
			old("x-completed", task.Impl, task.Completed),
			old("x-failed", task.Test, task.Failed),
			old("x-timed-out", task.Spec, task.TimedOut),
		)
		next := func(types ...task.Type) string {
			t.Helper()
			tk, err := h.read().tasks.NextPending(ctx, types)
			require.NoError(t, err, "%v", types)
			return tk.ID
		}
		require.Equal(t, "t-4", next(), "any type: the oldest pending task, the smaller id of a tie")
		require.Equal(t, "t-4", next(task.Impl), "one type")
		require.Equal(t, "t-2", next(task.Test, task.Spec), "several types: the oldest of them")
		require.Equal(t, "t-1", next(task.Spec), "the running, needs_decision and finished spec tasks are older, and skipped")
		require.Equal(t, "t-9", next(task.Review, task.Deploy))
		_, err := h.read().tasks.NextPending(ctx, []task.Type{task.Deploy, task.Merge})
		require.ErrorIs(t, err, store.ErrNotFound, "none pending of the types")

		got, err := h.read().tasks.NextPending(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, pending("t-4", task.Impl, at(time.Second)), got, "the whole task, as stored")
		require.Equal(t, task.Pending, get(t, h, "t-4").Status, "NextPending only reads (and locks): the claimer saves")
	})

	t.Run("claims in turn walk the queue in order until none is pending", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		insert(t, h,
			pending("c", task.Impl, at(2*time.Second)),
			pending("a", task.Spec, at(3*time.Second)),
			pending("d", task.Impl, at(time.Second)),
			pending("b", task.Test, at(2*time.Second)),
		)
		var order []string
		for i := range 4 {
			var got store.Task
			require.NoError(t, h.write(func(r repos) (err error) {
				got, err = claimNext(ctx, r, fmt.Sprintf("w%d", i), nil, at(time.Minute))
				return err
			}))
			order = append(order, got.ID)
			stored := get(t, h, got.ID)
			require.Equal(t, got, stored, "the claim as saved")
			require.Equal(t, task.Running, stored.Status)
			require.Equal(t, fmt.Sprintf("w%d", i), stored.WorkerID)
			require.Equal(t, 1, stored.Attempts)
		}
		require.Equal(t, []string{"d", "b", "c", "a"}, order, "by creation time, then id")
		err := h.write(func(r repos) error {
			_, err := claimNext(ctx, r, "late", nil, at(time.Minute))
			return err
		})
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("two claimers at once never get the same task", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		insert(t, h, pending("first", task.Impl, at(time.Second)), pending("second", task.Impl, at(2*time.Second)))

		// claim runs a claimer's transaction; on Postgres while another
		// claimer's is open, so it must not wait: a short deadline.
		claim := func(worker string) (store.Task, error) {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			var got store.Task
			err := h.DB.Tx(cctx, func(q database.Querier) (err error) {
				got, err = claimNext(cctx, h.over(q), worker, nil, at(time.Minute))
				return err
			})
			return got, err
		}
		var one, two store.Task
		if h.DB.Engine() == database.Postgres {
			// The first claimer's transaction is open, holding "first".
			commit := hold(t, h, func(r repos) (err error) {
				one, err = claimNext(ctx, r, "w1", nil, at(time.Minute))
				return err
			})
			var err error
			two, err = claim("w2")
			require.NoError(t, err, "the second claimer skips the held task rather than wait for it")
			_, err = claim("w3")
			require.ErrorIs(t, err, store.ErrNotFound, "the held task is skipped, not handed out: nothing else is pending")
			require.NoError(t, commit())
		} else {
			var err error
			one, err = claim("w1")
			require.NoError(t, err)
			two, err = claim("w2")
			require.NoError(t, err)
			_, err = claim("w3")
			require.ErrorIs(t, err, store.ErrNotFound)
		}
		require.Equal(t, "first", one.ID)
		require.Equal(t, "second", two.ID)
		require.Equal(t, "w1", get(t, h, "first").WorkerID)
		require.Equal(t, "w2", get(t, h, "second").WorkerID)
	})

	t.Run("a task another transaction locked is skipped by claims and waited for by Lock", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		postgresOnly(t, h)
		ctx := context.Background()
		insert(t, h, pending("locked", task.Spec, at(time.Second)), pending("free", task.Spec, at(2*time.Second)))
		var locked store.Task
		commit := hold(t, h, func(r repos) (err error) {
			locked, err = r.tasks.Lock(ctx, "locked") // an update's lock, not a claim
			return err
		})
		require.Equal(t, pending("locked", task.Spec, at(time.Second)), locked)

		got, err := h.read().tasks.NextPending(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, "free", got.ID, "outside a transaction too, the locked row is skipped")

		// The server gives up the wait (lock_timeout): a client-side
		// deadline could leave the backend waiting, and then holding the
		// row, after the test moved on.
		err = h.DB.Tx(ctx, func(q database.Querier) error {
			if _, err := q.Exec(ctx, `SET LOCAL lock_timeout = '200ms'`); err != nil {
				return err
			}
			_, err := h.Tasks(q).Lock(ctx, "locked")
			return err
		})
		require.ErrorContains(t, err, "lock timeout", "Lock waits for the row (here until the lock timeout)")
		require.NoError(t, commit())

		got, err = h.read().tasks.NextPending(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, "locked", got.ID, "released at commit: the oldest again")
		_, err = h.read().tasks.Lock(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("many claimers in parallel each get a different task, and every task is claimed", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		const tasks, workers = 60, 8
		for i := range tasks {
			insert(t, h, pending(fmt.Sprintf("task-%03d", i), task.Types[i%3], at(time.Duration(i%7)*time.Second)))
		}
		var (
			mu     sync.Mutex
			byTask = map[string][]string{}
			errs   []error
			wg     sync.WaitGroup
		)
		for w := range workers {
			worker := fmt.Sprintf("worker-%d", w)
			wg.Go(func() {
				for {
					var got store.Task
					err := h.write(func(r repos) (err error) {
						got, err = claimNext(ctx, r, worker, nil, at(time.Minute))
						return err
					})
					mu.Lock()
					switch {
					case err == nil:
						byTask[got.ID] = append(byTask[got.ID], worker)
					case !isNotFound(err):
						errs = append(errs, err)
					}
					mu.Unlock()
					if err != nil {
						return
					}
				}
			})
		}
		wg.Wait()
		require.Empty(t, errs)
		require.Len(t, byTask, tasks, "every task was claimed")
		for id, ws := range byTask {
			require.Len(t, ws, 1, "task %s was handed to %v", id, ws)
			require.Equal(t, ws[0], get(t, h, id).WorkerID)
		}
		_, err := h.read().tasks.NextPending(ctx, nil)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

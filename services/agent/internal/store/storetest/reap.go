package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
)

// summary is the error summary the reaper gives a task it times out.
const summary = "the worker's lease expired on its last attempt"

// runReap checks Reap, the lease reaper's one statement: running tasks
// whose lease expired go back to pending, or time out after their last
// attempt; nothing else changes.
func runReap(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("only running tasks whose lease expired before now are reaped, each reset or timed out as it should be", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := at(time.Hour)
		claimedAt := func(id string, attempts int, expires time.Time) store.Task {
			tk := pending(id, task.Impl, base)
			tk.Output, tk.ProgressPct, tk.CurrentStep = "half way", 50, "step 2"
			tk.Attempts = attempts - 1
			tk = running(tk, "w-"+id, expires.Sub(at(10*time.Minute)), at(10*time.Minute))
			return tk
		}
		expired := claimedAt("expired", 1, now.Add(-time.Microsecond))
		onTheDot := claimedAt("on-the-dot", 1, now) // expires at now: not before it
		live := claimedAt("live", 2, now.Add(time.Second))
		last := claimedAt("last-attempt", 3, now.Add(-time.Minute))
		beyond := claimedAt("beyond", 5, now.Add(-time.Minute))
		beyond.StartedAt = time.Time{} // never started: its duration runs from its creation
		// Other statuses with a stale lease are left alone.
		stale := func(id string, status task.Status) store.Task {
			tk := claimedAt(id, 3, now.Add(-time.Hour))
			tk.Status = status
			return tk
		}
		others := []store.Task{stale("pending", task.Pending), stale("decision", task.NeedsDecision),
			stale("completed", task.Completed), stale("failed", task.Failed)}
		insert(t, h, expired, onTheDot, live, last, beyond)
		insert(t, h, others...)

		var reaped []store.Task
		require.NoError(t, h.write(func(r repos) (err error) {
			reaped, err = r.tasks.Reap(ctx, now, 3, summary)
			return err
		}))

		requeued := expired
		requeued.Status, requeued.WorkerID, requeued.ClaimedBy, requeued.LeaseExpiresAt, requeued.UpdatedAt =
			task.Pending, "", "", time.Time{}, now
		// attempts, the lease's length, started_at and the progress stay:
		// the next claim counts on from them.
		timedOut := func(tk store.Task, since time.Time) store.Task {
			tk.Status, tk.LeaseExpiresAt, tk.UpdatedAt, tk.CompletedAt = task.TimedOut, time.Time{}, now, now
			tk.ErrorSummary, tk.ErrorCategory = summary, task.CategoryTimeout
			tk.Duration = ptr(now.Sub(since).Seconds())
			return tk // worker and claimer stay: who held it last
		}
		want := []store.Task{requeued, timedOut(last, last.StartedAt), timedOut(beyond, beyond.CreatedAt)}
		require.ElementsMatch(t, want, reaped, "the changed tasks, as they now are")
		for _, w := range want {
			require.Equal(t, w, get(t, h, w.ID), "stored as returned")
		}
		for _, same := range append([]store.Task{onTheDot, live}, others...) {
			require.Equal(t, same, get(t, h, same.ID), "%s is untouched", same.ID)
		}

		require.NoError(t, h.write(func(r repos) (err error) {
			reaped, err = r.tasks.Reap(ctx, now, 3, summary)
			return err
		}))
		require.Empty(t, reaped, "reaping again changes nothing")
		require.NotNil(t, reaped)

		next, err := h.read().tasks.NextPending(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, "expired", next.ID, "the requeued task is pending again, in its place in the queue")
	})

	t.Run("maxAttempts decides between the queue and the timeout; a later now reaps the rest", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		claim := func(id string, attempts int, expires time.Time) {
			tk := pending(id, task.Test, base)
			tk.Attempts = attempts - 1
			insert(t, h, running(tk, "w", expires.Sub(base), base))
		}
		claim("one", 1, at(time.Minute))
		claim("two", 2, at(time.Minute))
		claim("later", 1, at(time.Hour))
		reap := func(now time.Time, maxAttempts int) map[string]task.Status {
			t.Helper()
			var reaped []store.Task
			require.NoError(t, h.write(func(r repos) (err error) {
				reaped, err = r.tasks.Reap(ctx, now, maxAttempts, "s")
				return err
			}))
			out := map[string]task.Status{}
			for _, tk := range reaped {
				out[tk.ID] = tk.Status
			}
			return out
		}
		require.Equal(t, map[string]task.Status{"one": task.Pending, "two": task.TimedOut}, reap(at(2*time.Minute), 2),
			"at maxAttempts claims the task times out; below, it is queued again")
		require.Equal(t, task.Pending, get(t, h, "one").Status)
		require.Equal(t, map[string]task.Status{"later": task.TimedOut}, reap(at(2*time.Hour), 1),
			"the later lease expires by the later now")
		got := get(t, h, "later")
		require.Equal(t, "s", got.ErrorSummary)
		require.InDelta(t, 2*time.Hour.Seconds(), *got.Duration, 1e-9)
	})

	t.Run("concurrent reapers reap a task once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		postgresOnly(t, h)
		ctx := context.Background()
		for _, id := range []string{"a", "b"} {
			insert(t, h, running(pending(id, task.Spec, base), "w", time.Minute, base))
		}
		now := at(time.Hour)
		var first []store.Task
		commit := hold(t, h, func(r repos) (err error) {
			first, err = r.tasks.Reap(ctx, now, 3, summary)
			return err
		})
		require.ElementsMatch(t, []string{"a", "b"}, ids(first))

		// A second replica's reaper queues behind the first's row locks,
		// then re-checks the rows it waited for: no longer running.
		type result struct {
			reaped []store.Task
			err    error
		}
		second := make(chan result, 1)
		go func() {
			var r result
			r.err = h.write(func(rs repos) (err error) {
				r.reaped, err = rs.tasks.Reap(ctx, now, 3, summary)
				return err
			})
			second <- r
		}()
		require.Eventually(t, func() bool { return waitingForALock(t, h) }, 5*time.Second, 5*time.Millisecond,
			"the second reaper waits for the first's rows")
		require.NoError(t, commit())
		got := <-second
		require.NoError(t, got.err)
		require.Empty(t, got.reaped, "the second reaper found nothing left to reap")
		for _, id := range []string{"a", "b"} {
			require.Equal(t, task.Pending, get(t, h, id).Status)
		}
	})
}

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

// runRetry checks Retry, which puts failed tasks whose retry is due back
// in the queue, the attempts' records, and the open-task rules a failed
// task waiting for its retry takes part in.
func runRetry(t *testing.T, newHarness func(t *testing.T) Harness) {
	// failedAt is tk failed on its first attempt, its retry due at due.
	failedAt := func(tk store.Task, due time.Time) store.Task {
		tk = running(tk, "w1", time.Minute, at(time.Minute))
		tk.Status, tk.Output, tk.ProgressPct, tk.CurrentStep = task.Failed, "HTTP 429", 40, "calling the model"
		tk.ErrorSummary, tk.ErrorCategory = "HTTP 429", task.CategoryProviderError
		tk.ValueScore, tk.ResourceCost = ptr(0.0), ptr(0.5)
		tk.CompletedAt, tk.Duration, tk.LeaseExpiresAt = at(2*time.Minute), ptr(60.0), time.Time{}
		tk.MaxAttempts, tk.NextAttemptAt, tk.UpdatedAt = 3, due, at(2*time.Minute)
		return tk
	}

	t.Run("only failed tasks whose retry is due go back to pending, as a fresh attempt", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := at(time.Hour)
		due := failedAt(pending("due", task.Impl, base), now.Add(-time.Minute))
		onTheDot := failedAt(pending("on-the-dot", task.Impl, base), now)
		later := failedAt(pending("later", task.Impl, base), now.Add(time.Microsecond))
		final := failedAt(pending("final", task.Impl, base), time.Time{}) // no retry due: stays failed
		discarded := failedAt(pending("discarded", task.Impl, base), time.Time{})
		discarded.Status, discarded.StatusReason = task.Discarded, "attempt 3 of 3 failed: HTTP 429"
		insert(t, h, due, onTheDot, later, final, discarded)

		var retried []store.Task
		require.NoError(t, h.write(func(r repos) (err error) {
			retried, err = r.tasks.Retry(ctx, now, 10)
			return err
		}))
		back := func(tk store.Task) store.Task {
			tk.Status, tk.NextAttemptAt, tk.WorkerID, tk.ClaimedBy, tk.LeaseSeconds = task.Pending, time.Time{}, "", "", 0
			tk.ErrorSummary, tk.ErrorCategory, tk.Output, tk.ProgressPct, tk.CurrentStep = "", "", "", 0, ""
			tk.ValueScore, tk.ResourceCost, tk.CompletedAt, tk.Duration, tk.UpdatedAt = nil, nil, time.Time{}, nil, now
			return tk // attempts, max_attempts and started_at stay: the next claim counts on
		}
		require.ElementsMatch(t, []store.Task{back(due), back(onTheDot)}, retried, "the due ones, as they now are")
		for _, w := range retried {
			require.Equal(t, w, get(t, h, w.ID), "stored as returned")
		}
		for _, same := range []store.Task{later, final, discarded} {
			require.Equal(t, same, get(t, h, same.ID), "%s is untouched", same.ID)
		}
		require.NoError(t, h.write(func(r repos) (err error) {
			retried, err = r.tasks.Retry(ctx, now, 10)
			return err
		}))
		require.Empty(t, retried, "retrying again changes nothing")
	})

	t.Run("a retry takes at most its limit, the soonest due", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		for i, id := range []string{"c", "a", "b"} {
			insert(t, h, failedAt(pending(id, task.Test, base), at(time.Duration(3-i)*time.Minute)))
		}
		var retried []store.Task
		require.NoError(t, h.write(func(r repos) (err error) {
			retried, err = r.tasks.Retry(ctx, at(time.Hour), 2)
			return err
		}))
		require.ElementsMatch(t, []string{"b", "a"}, ids(retried))
		require.Equal(t, task.Failed, get(t, h, "c").Status)
	})

	t.Run("a failed loop task waiting for its retry holds its idea open", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		loopTask := func(id string) store.Task {
			tk := pending(id, task.Spec, base)
			tk.Source, tk.IdeaID = store.SourceLoop, "idea-1"
			return tk
		}
		waiting := failedAt(loopTask("waiting"), at(time.Hour))
		insert(t, h, waiting)
		open, err := h.read().tasks.OpenIdeas(ctx, []string{"idea-1"})
		require.NoError(t, err)
		require.Equal(t, map[string]bool{"idea-1": true}, open)
		err = h.write(func(r repos) error { return r.tasks.Insert(ctx, loopTask("second")) })
		require.ErrorIs(t, err, store.ErrLoopTaskOpen, "no second loop task beside one waiting for its retry")

		// Out of retries, it no longer holds the idea.
		waiting.Status, waiting.NextAttemptAt = task.Discarded, time.Time{}
		require.NoError(t, h.write(func(r repos) error { return r.tasks.Save(ctx, waiting) }))
		open, err = h.read().tasks.OpenIdeas(ctx, []string{"idea-1"})
		require.NoError(t, err)
		require.Empty(t, open)
		insert(t, h, loopTask("second"))
	})

	t.Run("attempts are recorded once each and read back first first", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		first := store.Attempt{TaskID: "t1", Attempt: 1, Status: task.Failed, Summary: "HTTP 429", Category: task.CategoryProviderError,
			WorkerID: "w1", StartedAt: at(time.Minute), FinishedAt: at(2 * time.Minute)}
		second := store.Attempt{TaskID: "t1", Attempt: 2, Status: task.Pending, Summary: "the lease expired",
			Category: task.CategoryTimeout, FinishedAt: at(time.Hour)}
		other := store.Attempt{TaskID: "t2", Attempt: 1, Status: task.Cancelled, Summary: "not needed", FinishedAt: at(time.Hour)}
		for _, a := range []store.Attempt{second, first, other, {TaskID: "t1", Attempt: 1, Status: task.Failed, Summary: "again",
			FinishedAt: at(3 * time.Hour)}} {
			var b database.Batch
			h.read().tasks.QueueAddAttempt(&b, a)
			require.NoError(t, h.DB.SendBatch(ctx, &b))
		}
		got, err := h.read().tasks.Attempts(ctx, "t1")
		require.NoError(t, err)
		require.Equal(t, []store.Attempt{first, second}, got, "in order; the repeat of attempt 1 skipped")
		got, err = h.read().tasks.Attempts(ctx, "none")
		require.NoError(t, err)
		require.Empty(t, got)
		require.NotNil(t, got)
	})
}

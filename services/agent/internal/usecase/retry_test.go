package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// retrying is the policies the retry tests run under: impl gets three
// attempts, 10 s after the first failure and 20 s after the second.
func retrying(c *usecase.Config) {
	c.Retries = task.Policies{Default: task.DefaultRetry, ByType: map[task.Type]task.RetryPolicy{
		task.Impl: {MaxAttempts: 3, Backoff: 10 * time.Second, MaxBackoff: time.Minute},
	}}
}

// TestAFailingTaskIsRetriedByItsPolicyThenDiscarded: a task failing every
// time is retried as the same task after a jittered, doubling wait, keeps
// each attempt's error, is discarded after its last attempt, and an
// operator's retry gives it one more attempt, which completes.
func TestAFailingTaskIsRetriedByItsPolicyThenDiscarded(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine, retrying)
		tk := e.create(t, "impl", nil)
		require.Equal(t, 3, tk.MaxAttempts, "the type's policy")
		reap := func() usecase.Reaped {
			t.Helper()
			r, err := e.app.Reap(ctx)
			require.NoError(t, err)
			return r
		}
		fail := func(attempt int, wait time.Duration) store.Task {
			t.Helper()
			claimed, ok, err := e.app.Claim(ctx, task.Reporter{}, "w1", []string{"impl"}, nil, nil)
			require.NoError(t, err)
			require.True(t, ok, "attempt %d is claimable", attempt)
			require.Equal(t, tk.ID, claimed.ID, "the same task")
			require.Equal(t, attempt, claimed.Attempts)
			failed := e.patch(t, tk.ID, usecase.Patch{Status: ptr("failed"), Output: ptr("HTTP 429 Too Many Requests")})
			if wait == 0 {
				return failed
			}
			require.Equal(t, task.Failed, failed.Status, "attempt %d of 3 failed: retried", attempt)
			after := failed.NextAttemptAt.Sub(e.clock.Now())
			require.GreaterOrEqual(t, after, time.Duration(float64(wait)*(1-task.Jitter)), "attempt %d", attempt)
			require.LessOrEqual(t, after, time.Duration(float64(wait)*(1+task.Jitter)), "attempt %d", attempt)
			e.clock.Advance(after - time.Second)
			require.Equal(t, usecase.Reaped{}, reap(), "not due yet")
			_, ok, err = e.app.Claim(ctx, task.Reporter{}, "w2", nil, nil, nil)
			require.NoError(t, err)
			require.False(t, ok, "a task waiting for its retry is not in the queue")
			e.clock.Advance(time.Second)
			require.Equal(t, usecase.Reaped{Retried: 1}, reap(), "due: back in the queue")
			back, err := e.app.Get(ctx, tk.ID)
			require.NoError(t, err)
			require.Equal(t, task.Pending, back.Status)
			require.Empty(t, back.ErrorSummary, "the attempt's error left the task for its record")
			require.True(t, back.NextAttemptAt.IsZero())
			return back
		}
		fail(1, 10*time.Second)
		fail(2, 20*time.Second)
		discarded := fail(3, 0)
		require.Equal(t, task.Discarded, discarded.Status, "the last attempt's failure discards the task")
		require.Equal(t, "attempt 3 of 3 failed: HTTP 429 Too Many Requests", discarded.StatusReason)
		require.True(t, discarded.NextAttemptAt.IsZero())
		repeat := e.patch(t, tk.ID, usecase.Patch{Status: ptr("failed"), Output: ptr("HTTP 429 Too Many Requests")})
		require.Equal(t, task.Discarded, repeat.Status, "the last failure sent again answers the task unchanged")

		attempts, err := e.app.Attempts(ctx, tk.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 3)
		for i, a := range attempts {
			require.Equal(t, i+1, a.Attempt)
			require.Equal(t, "HTTP 429 Too Many Requests", a.Summary)
			require.Equal(t, task.CategoryProviderError, a.Category)
			require.Equal(t, "w1", a.WorkerID)
		}
		require.Equal(t, []task.Status{task.Failed, task.Failed, task.Discarded},
			[]task.Status{attempts[0].Status, attempts[1].Status, attempts[2].Status})

		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts.ByStatus[task.Discarded])
		require.Equal(t, 0, counts.ByStatus[task.Failed])
		d, err := e.app.Diagnostics(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, d.TotalFailed, "every failed attempt counts")

		// An operator retries it: one attempt more, and it completes.
		again, err := e.app.Retry(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, task.Pending, again.Status)
		require.Equal(t, 4, again.MaxAttempts)
		require.Empty(t, again.StatusReason)
		claimed, ok, err := e.app.Claim(ctx, task.Reporter{}, "w1", nil, nil, nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, 4, claimed.Attempts)
		done := e.patch(t, tk.ID, usecase.Patch{Status: ptr("completed"), Output: ptr("merged")})
		require.Equal(t, task.Completed, done.Status)
		_, err = e.app.Retry(ctx, tk.ID)
		requireKind(t, fault.Conflict, err)
	})
}

// TestCancel: a task not finished, or failed and waiting for its retry,
// is cancelled with its reason and counts in no success rate; a
// finished one is not; the worker running it is refused its next report.
func TestCancel(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine, retrying)
		runningTask := e.create(t, "impl", nil)
		e.patch(t, runningTask.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		cancelled, err := e.app.Cancel(ctx, runningTask.ID, "  superseded by another idea ")
		require.NoError(t, err)
		require.Equal(t, task.Cancelled, cancelled.Status)
		require.Equal(t, "superseded by another idea", cancelled.StatusReason)
		require.True(t, cancelled.LeaseExpiresAt.IsZero())
		_, err = e.app.Update(ctx, runningTask.ID, usecase.Patch{ProgressPct: ptr(50.0), WorkerID: ptr("w1")})
		requireKind(t, fault.Conflict, err)

		waiting := e.create(t, "impl", nil)
		e.run(t, waiting.ID, "failed", time.Second)
		cancelled, err = e.app.Cancel(ctx, waiting.ID, "")
		require.NoError(t, err)
		require.Equal(t, "cancelled by an operator", cancelled.StatusReason)
		e.clock.Advance(time.Hour)
		r, err := e.app.Reap(ctx)
		require.NoError(t, err)
		require.Zero(t, r.Retried, "a cancelled task is not retried")

		done := e.create(t, "spec", nil)
		e.run(t, done.ID, "completed", time.Second)
		_, err = e.app.Cancel(ctx, done.ID, "")
		requireKind(t, fault.Conflict, err)
		_, err = e.app.Cancel(ctx, "nope", "")
		requireKind(t, fault.NotFound, err)
		_, err = e.app.Cancel(ctx, done.ID, string(make([]byte, 501)))
		requireKind(t, fault.Invalid, err)
		for _, s := range []string{"cancelled", "discarded"} {
			_, err = e.app.Update(ctx, e.create(t, "spec", nil).ID, usecase.Patch{Status: ptr(s)})
			requireKind(t, fault.Invalid, err) // the operators' and the retry policy's, not a PATCH's
		}

		m, err := e.app.Metrics(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, 1, m.Overall.Completed)
		require.Equal(t, 1, m.Overall.Failed, "the failed attempt counts; its cancellation does not")
		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, counts.ByStatus[task.Cancelled])
	})
}

// TestRetryMany retries the tasks a filter selects, skipping a loop task
// whose idea has another open one, and refuses a bad filter.
func TestRetryMany(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine, func(c *usecase.Config) { c.MaxAttempts = 1 })
		var discarded []string
		for range 3 {
			tk := e.create(t, "test", nil)
			require.Equal(t, task.Discarded, e.run(t, tk.ID, "failed", time.Second).Status, "one attempt: discarded at once")
			discarded = append(discarded, tk.ID)
		}
		loopTask, err := e.app.Create(ctx, usecase.NewTask{Direction: "d", Type: "spec", Context: map[string]any{"idea_id": "i1"}, Loop: true})
		require.NoError(t, err)
		e.run(t, loopTask.ID, "failed", time.Second)
		_, err = e.app.Create(ctx, usecase.NewTask{Direction: "d", Type: "spec", Context: map[string]any{"idea_id": "i1"}, Loop: true})
		require.NoError(t, err, "the discarded loop task freed its idea")

		got, err := e.app.RetryMany(ctx, usecase.RetryFilter{Status: "discarded", Type: "test", Limit: ptr(2)})
		require.NoError(t, err)
		require.Len(t, got.Tasks, 2, "the limit")
		require.Equal(t, []string{discarded[2], discarded[1]}, []string{got.Tasks[0].ID, got.Tasks[1].ID}, "newest first")
		require.Empty(t, got.Skipped)

		got, err = e.app.RetryMany(ctx, usecase.RetryFilter{Status: "discarded"})
		require.NoError(t, err)
		require.Len(t, got.Tasks, 1)
		require.Equal(t, discarded[0], got.Tasks[0].ID)
		require.Len(t, got.Skipped, 1, "the loop task: its idea has another open one")
		require.Equal(t, loopTask.ID, got.Skipped[0].TaskID)
		require.Contains(t, got.Skipped[0].Detail, "another open task of the pipeline loop")

		for _, bad := range []usecase.RetryFilter{{}, {Status: "pending"}, {Status: "failed", Type: "nope"},
			{Status: "failed", Limit: ptr(0)}, {Status: "failed", Limit: ptr(1001)}} {
			_, err := e.app.RetryMany(ctx, bad)
			requireKind(t, fault.Invalid, err)
		}
		_, err = e.app.Retry(ctx, discarded[0])
		requireKind(t, fault.Conflict, err)
		_, err = e.app.Retry(ctx, "nope")
		requireKind(t, fault.NotFound, err)
	})
}

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

// TestFinishedTasksLastTheirRetention: a task that finished for good
// before its retention is pruned (PruneFinishedTasks, the retention
// runner's prune), oldest first, with its attempts and its delivered idea
// advancement, and leaves the counts and the list; a pending task, a
// failed one waiting for its retry and one finished since stay. What the
// reports and the loop read outlives the pruned tasks: the metrics keep
// their sums (the percentiles then come from the histogram, which holds
// every duration), and the idea's later stages are still handed the
// pruned loop task's output.
func TestFinishedTasksLastTheirRetention(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()

		spec, err := e.app.Create(ctx, usecase.NewTask{Direction: "spec idea-1", Type: "spec",
			Context: map[string]any{"idea_id": "idea-1", "source": "pipeline_loop"}, Loop: true})
		require.NoError(t, err)
		e.patch(t, spec.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		e.clock.Advance(time.Minute)
		e.patch(t, spec.ID, usecase.Patch{Status: ptr("completed"), Output: ptr("the spec")})
		delivered, err := e.app.DeliverOutbox(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, delivered, "the idea's advancement went out")
		cancelled := e.create(t, "impl", nil)
		_, err = e.app.Cancel(ctx, cancelled.ID, "not now")
		require.NoError(t, err)
		retrying := e.run(t, e.create(t, "test", nil).ID, "failed", 2*time.Minute)
		require.False(t, retrying.NextAttemptAt.IsZero(), "a retry is due")
		pending := e.create(t, "review", nil)

		e.clock.Advance(usecase.DefaultTaskRetention + time.Hour)
		recent := e.run(t, e.create(t, "spec", nil).ID, "completed", 3*time.Minute)
		before := e.clock.Now().Add(-usecase.DefaultTaskRetention)

		attempts, err := e.app.Attempts(ctx, cancelled.ID)
		require.NoError(t, err)
		require.Len(t, attempts, 1, "the cancellation is recorded")

		n, err := e.app.PruneFinishedTasks(ctx, before, 1)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "a batch at most")
		_, err = e.app.Get(ctx, spec.ID)
		requireKind(t, fault.NotFound, err)
		_, err = e.app.Get(ctx, cancelled.ID)
		require.NoError(t, err, "the oldest went first")
		n, err = e.app.PruneFinishedTasks(ctx, before, 10)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "the cancelled task")
		n, err = e.app.PruneFinishedTasks(ctx, before, 10)
		require.NoError(t, err)
		require.Zero(t, n, "nothing more aged out")

		attempts, err = e.app.Attempts(ctx, cancelled.ID)
		require.NoError(t, err)
		require.Empty(t, attempts, "pruned with its task")
		_, err = e.app.OutboxItem(ctx, spec.ID)
		require.ErrorIs(t, err, store.ErrNotFound, "the delivered advancement went with its task")
		for _, id := range []string{retrying.ID, pending.ID, recent.ID} {
			_, err := e.app.Get(ctx, id)
			require.NoError(t, err, "task %s stays", id)
		}
		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, counts.Total)
		require.Equal(t, map[task.Status]int{task.Pending: 1, task.Running: 0, task.Completed: 1, task.Failed: 1, task.TimedOut: 0,
			task.NeedsDecision: 0, task.Discarded: 0, task.Cancelled: 0}, counts.ByStatus)
		page, err := e.app.List(ctx, usecase.ListQuery{})
		require.NoError(t, err)
		require.Equal(t, 3, page.Total)
		require.Len(t, page.Tasks, 3)

		outs, err := e.app.StageOutputs(ctx, "idea-1")
		require.NoError(t, err)
		require.Equal(t, []store.StageOutput{{TaskID: spec.ID, Type: task.Spec, Output: "the spec", CompletedAt: spec.CreatedAt.Add(time.Minute)}},
			outs, "the pruned loop task's output still reaches the idea's next stage")

		days := usecase.MaxWindowDays
		m, err := e.app.Metrics(ctx, &days)
		require.NoError(t, err)
		require.Equal(t, 2, m.Overall.Completed, "the daily sums keep the pruned task")
		require.Equal(t, 3, m.Samples, "every duration: two completed, one failed")
		require.False(t, m.Exact, "two durations left to read: the histogram answers")
	})
}

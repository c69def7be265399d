package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/loop"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// pass is a pass of outcome that finished at finished.
func pass(id, outcome string, finished time.Time) store.LoopPass {
	return store.LoopPass{Holder: "replica-a", Iteration: loop.Iteration{ID: id, Outcome: outcome,
		StartedAt: finished.Add(-time.Second), FinishedAt: finished}}
}

// runLoop checks the pipeline loop's passes: the newest is read back,
// every pass is counted under its outcome, and pruning keeps the counts.
func runLoop(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("passes round-trip, the newest is the latest, and each is counted by outcome", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		_, err := h.read().loop.Latest(ctx)
		require.ErrorIs(t, err, store.ErrNotFound, "before the first pass")
		counts, err := h.read().loop.Counts(ctx)
		require.NoError(t, err)
		require.Empty(t, counts)

		full := store.LoopPass{Holder: "replica-b", Iteration: loop.Iteration{ID: "p2", Outcome: "dispatched", IdeaID: "idea:7",
			Score: 0.8125, StageBefore: "specced", TaskType: "impl", TaskID: "task-9", StageAfter: "implementing",
			Detail: "opened impl", StartedAt: at(time.Minute - 250*time.Microsecond), FinishedAt: at(time.Minute)}}
		insertPass := func(p store.LoopPass) {
			t.Helper()
			require.NoError(t, h.write(func(r repos) error { return r.loop.Insert(ctx, p) }))
		}
		insertPass(pass("p1", "idle", at(time.Second)))
		insertPass(full)
		insertPass(pass("p0", "idle", at(time.Minute))) // finished with p2: the greater id is the later
		insertPass(pass("p3", "failed", at(30*time.Second)))
		got, err := h.read().loop.Latest(ctx)
		require.NoError(t, err)
		require.Equal(t, full, got, "the newest by finish time then id, every field as stored")

		counts, err = h.read().loop.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"idle": 2, "dispatched": 1, "failed": 1}, counts)
	})

	t.Run("a pass refused writes no count; pruning deletes the older passes and keeps the counts", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		for _, p := range []store.LoopPass{pass("a", "idle", at(time.Second)), pass("b", "idle", at(2*time.Second)),
			pass("c", "dispatched", at(3*time.Second))} {
			require.NoError(t, h.write(func(r repos) error { return r.loop.Insert(ctx, p) }))
		}
		err := h.write(func(r repos) error { return r.loop.Insert(ctx, pass("a", "failed", at(time.Hour))) })
		require.Error(t, err, "a pass id is recorded once")
		counts, err := h.read().loop.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"idle": 2, "dispatched": 1}, counts, "the refused pass's transaction counted nothing")

		var n int64
		require.NoError(t, h.write(func(r repos) (err error) {
			n, err = r.loop.Prune(ctx, at(2*time.Second))
			return err
		}))
		require.Equal(t, int64(1), n, "only the pass that finished before the cut; one finished at it stays")
		latest, err := h.read().loop.Latest(ctx)
		require.NoError(t, err)
		require.Equal(t, "c", latest.ID)

		require.NoError(t, h.write(func(r repos) (err error) {
			n, err = r.loop.Prune(ctx, at(time.Hour))
			return err
		}))
		require.Equal(t, int64(2), n)
		_, err = h.read().loop.Latest(ctx)
		require.ErrorIs(t, err, store.ErrNotFound, "every pass pruned")
		counts, err = h.read().loop.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int64{"idle": 2, "dispatched": 1}, counts, "the counts outlive the passes")
	})

	t.Run("an idea's pending loop task is found, and its completed ones give their outputs oldest first", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		loopTask := func(id, idea string, typ task.Type, st task.Status, output string, done time.Duration) store.Task {
			tk := pending(id, typ, at(done-time.Minute))
			tk.Source, tk.IdeaID, tk.Status, tk.Output = store.SourceLoop, idea, st, output
			if st == task.Completed {
				tk.CompletedAt = at(done)
			}
			return tk
		}
		api := pending("api-1", task.Spec, at(0))
		api.IdeaID = "idea-2"
		impl := loopTask("impl-1", "idea-1", task.Impl, task.Completed, strings.Repeat("x", 10)+"the end", 2*time.Minute)
		impl.Artifact = "https://example.com/pull/7"
		insert(t, h,
			loopTask("spec-1", "idea-1", task.Spec, task.Completed, "a spec", time.Minute),
			impl,
			loopTask("test-1", "idea-1", task.Test, task.Pending, "", 3*time.Minute),
			loopTask("spec-3", "idea-3", task.Spec, task.Failed, "no", time.Minute),
			api)
		retrying := loopTask("spec-4", "idea-4", task.Spec, task.Failed, "429", time.Minute)
		retrying.NextAttemptAt = at(time.Hour)
		insert(t, h, retrying)
		ideas := []string{"idea-1", "idea-2", "idea-3", "idea-4"}
		orphans, err := h.read().tasks.PendingLoopTasks(ctx, ideas, at(time.Hour-time.Microsecond))
		require.NoError(t, err)
		require.Equal(t, map[string]string{"idea-1": "test-1"}, orphans, "only pending tasks of the loop's")
		orphans, err = h.read().tasks.PendingLoopTasks(ctx, ideas, at(time.Hour))
		require.NoError(t, err)
		require.Equal(t, map[string]string{"idea-1": "test-1", "idea-4": "spec-4"}, orphans, "and failed ones whose retry is due")
		none, err := h.read().tasks.PendingLoopTasks(ctx, nil, at(time.Hour))
		require.NoError(t, err)
		require.Empty(t, none)

		got, err := h.read().tasks.Get(ctx, "impl-1")
		require.NoError(t, err)
		require.Equal(t, "https://example.com/pull/7", got.Artifact, "stored with the task")
	})

	t.Run("an idea keeps its newest stage outputs, oldest first, past its tasks", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		keep := func(idea string, n int, outs ...store.StageOutput) {
			t.Helper()
			var b database.Batch
			for _, o := range outs {
				h.read().tasks.QueueStageOutput(&b, idea, o, n)
			}
			require.NoError(t, h.DB.SendBatch(ctx, &b))
		}
		spec := store.StageOutput{TaskID: "spec-1", Type: task.Spec, Output: "a spec", CompletedAt: at(time.Minute)}
		impl := store.StageOutput{TaskID: "impl-1", Type: task.Impl, Output: strings.Repeat("x", 10) + "the end",
			Artifact: "https://example.com/pull/7", CompletedAt: at(2 * time.Minute)}
		keep("idea-1", 3, spec, impl)
		keep("idea-2", 3, store.StageOutput{TaskID: "spec-2", Type: task.Spec, Output: "another", CompletedAt: at(time.Minute)})

		outs, err := h.read().tasks.StageOutputs(ctx, "idea-1", 10, 7, 7)
		require.NoError(t, err)
		require.Equal(t, []store.StageOutput{
			{TaskID: "spec-1", Type: task.Spec, Output: "a spec", CompletedAt: at(time.Minute)},
			{TaskID: "impl-1", Type: task.Impl, Output: "the end", Artifact: "/pull/7", CompletedAt: at(2 * time.Minute)},
		}, outs, "oldest first, each output's and artifact's last bytes")
		whole, err := h.read().tasks.StageOutputs(ctx, "idea-1", 10, 100, 7)
		require.NoError(t, err)
		require.Equal(t, "a spec", whole[0].Output)
		require.Equal(t, "/pull/7", whole[1].Artifact, "the artifact's own bound")
		require.Equal(t, strings.Repeat("x", 10)+"the end", whole[1].Output)
		newest, err := h.read().tasks.StageOutputs(ctx, "idea-1", 1, 100, 100)
		require.NoError(t, err)
		require.Len(t, newest, 1)
		require.Equal(t, "impl-1", newest[0].TaskID, "the limit keeps the newest")

		// Past keep, the idea's oldest go; another idea's stay.
		keep("idea-1", 3, store.StageOutput{TaskID: "test-1", Type: task.Test, Output: "tested", CompletedAt: at(3 * time.Minute)},
			store.StageOutput{TaskID: "review-1", Type: task.Review, Output: "reviewed", CompletedAt: at(4 * time.Minute)})
		kept, err := h.read().tasks.StageOutputs(ctx, "idea-1", 10, 100, 100)
		require.NoError(t, err)
		ids := make([]string, len(kept))
		for i, o := range kept {
			ids[i] = o.TaskID
		}
		require.Equal(t, []string{"impl-1", "test-1", "review-1"}, ids, "the newest three")
		other, err := h.read().tasks.StageOutputs(ctx, "idea-2", 10, 100, 100)
		require.NoError(t, err)
		require.Len(t, other, 1)
		require.Equal(t, "another", other[0].Output)
		none, err := h.read().tasks.StageOutputs(ctx, "idea-3", 10, 100, 100)
		require.NoError(t, err)
		require.Empty(t, none)
	})
}

package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// finished is a task of status that finished at done after running for
// seconds (nil: no duration).
func finished(id string, status task.Status, done time.Time, seconds *float64) store.Task {
	tk := pending(id, task.Impl, base)
	tk.Status, tk.CompletedAt, tk.Duration = status, done, seconds
	return tk
}

// runTasks checks the task repository's writes and reads: every column's
// round trip, the unique rules, Save's reach, and the lists and reads the
// API and the reports use.
func runTasks(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("a task round-trips every column; empty values are NULL and read back empty", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		full := store.Task{
			ID: "full", Direction: "write the spec", Type: task.Spec, Status: task.Running, Model: "claude-opus-4-1",
			Executor: "claude", Tier: "strong", Command: "claude -p 'write the spec'", Context: `{"idea_id":"idea:1","n":2}`,
			IdeaID: "idea:1", PromptVariant: "v2", Source: store.SourceLoop,
			Output: "partial", ProgressPct: 42.5, CurrentStep: "drafting", DecisionPrompt: "which one?",
			ErrorSummary: "earlier failure", ErrorCategory: task.CategoryProviderError,
			WorkerID: "worker-1", ClaimedBy: "token-1", LeaseSeconds: 90, LeaseExpiresAt: at(91 * time.Second), Attempts: 2,
			ValueScore: ptr(0.0), ResourceCost: ptr(1.25), Duration: ptr(12.5),
			CreatedAt: at(time.Microsecond), UpdatedAt: at(2 * time.Second), StartedAt: at(time.Second), CompletedAt: at(3 * time.Second),
		}
		bare := pending("bare", task.Heal, base)
		bare.Source = "" // a task from before sources were recorded
		insert(t, h, full, bare)
		require.Equal(t, full, get(t, h, "full"), "a zero value score is a value, not NULL")
		require.Equal(t, bare, get(t, h, "bare"))

		var nulls int
		require.NoError(t, h.DB.QueryRow(ctx, `SELECT COUNT(*) FROM tasks WHERE id = 'bare' AND idea_id IS NULL
			AND prompt_variant IS NULL AND error_summary IS NULL AND error_category IS NULL AND worker_id IS NULL
			AND claimed_by IS NULL AND source IS NULL AND lease_expires_at IS NULL AND started_at IS NULL
			AND completed_at IS NULL AND value_score IS NULL AND resource_cost IS NULL AND duration_seconds IS NULL`).Scan(&nulls))
		require.Equal(t, 1, nulls, "empty strings, zero times and nil measurements are stored as NULL")

		_, err := h.read().tasks.Get(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("an id is taken once; a refused insert writes nothing and leaves the transaction usable", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := pending("a", task.Impl, base)
		insert(t, h, a)
		again := pending("a", task.Test, at(time.Hour))
		require.NoError(t, h.write(func(r repos) error {
			require.ErrorIs(t, r.tasks.Insert(ctx, again), store.ErrAlreadyExists)
			return r.tasks.Insert(ctx, pending("b", task.Impl, at(time.Second)))
		}), "the transaction goes on and commits")
		require.Equal(t, a, get(t, h, "a"), "the first task stays")
		require.Equal(t, "b", get(t, h, "b").ID)
	})

	t.Run("a queued insert refused by a unique rule fails its batch before what follows it; Refused says which rule", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := pending("a", task.Impl, base)
		insert(t, h, a)
		open := pending("l1", task.Impl, base)
		open.IdeaID, open.Source = "idea-1", store.SourceLoop
		insert(t, h, open)
		counts := func() int64 {
			var n int64
			require.NoError(t, h.DB.QueryRow(ctx, `SELECT COALESCE(SUM(n), 0) FROM task_counts`).Scan(&n))
			return n
		}
		before := counts()
		second := pending("l2", task.Impl, at(time.Second))
		second.IdeaID, second.Source = "idea-1", store.SourceLoop
		for _, c := range []struct {
			tk   store.Task
			want error
		}{{pending("a", task.Test, at(time.Hour)), store.ErrAlreadyExists}, {second, store.ErrLoopTaskOpen}} {
			err := h.DB.Tx(ctx, func(q database.Querier) error {
				r := h.over(q)
				var b database.Batch
				r.tasks.QueueInsert(&b, c.tk)
				r.stats.QueueAddCounts(&b, []store.Count{{Status: c.tk.Status, Type: c.tk.Type, N: 1}})
				b.Final()
				return q.SendBatch(ctx, &b)
			})
			require.True(t, database.IsUniqueViolation(err), "%s: %v", c.tk.ID, err)
			require.ErrorIs(t, h.read().tasks.Refused(ctx, c.tk), c.want, c.tk.ID)
		}
		require.Equal(t, before, counts(), "the counters queued after a refused insert did not run")
		require.Equal(t, a, get(t, h, "a"), "the first task stays")

		// Accepted: the task and what follows it.
		b3 := pending("b", task.Impl, at(time.Second))
		require.NoError(t, h.DB.Tx(ctx, func(q database.Querier) error {
			r := h.over(q)
			var b database.Batch
			r.tasks.QueueInsert(&b, b3)
			r.stats.QueueAddCounts(&b, []store.Count{{Status: b3.Status, Type: b3.Type, N: 1}})
			b.Final()
			return q.SendBatch(ctx, &b)
		}))
		require.Equal(t, b3, get(t, h, "b"))
		require.Equal(t, before+1, counts())
	})

	t.Run("the loop opens one open task per idea; API tasks and finished ones are not bound", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		loopTask := func(id, idea string) store.Task {
			tk := pending(id, task.Impl, base)
			tk.IdeaID, tk.Source = idea, store.SourceLoop
			return tk
		}
		api := func(id, idea string) store.Task {
			tk := pending(id, task.Impl, base)
			tk.IdeaID = idea
			return tk
		}
		insertOne := func(tk store.Task) error {
			return h.write(func(r repos) error { return r.tasks.Insert(ctx, tk) })
		}
		require.NoError(t, insertOne(loopTask("l1", "idea-1")))
		require.ErrorIs(t, insertOne(loopTask("l2", "idea-1")), store.ErrLoopTaskOpen)
		require.NoError(t, insertOne(api("a1", "idea-1")), "an API task for the idea")
		require.NoError(t, insertOne(api("a2", "idea-1")), "and another")
		require.NoError(t, insertOne(loopTask("l3", "idea-2")), "another idea")
		require.ErrorIs(t, insertOne(loopTask("a1", "idea-3")), store.ErrAlreadyExists, "the id's rule is told apart")

		// In one transaction: the refusal leaves it usable.
		require.NoError(t, h.write(func(r repos) error {
			require.ErrorIs(t, r.tasks.Insert(ctx, loopTask("l4", "idea-2")), store.ErrLoopTaskOpen)
			return r.tasks.Insert(ctx, loopTask("l5", "idea-5"))
		}))

		for _, step := range []struct {
			status task.Status
			open   bool
		}{{task.Running, true}, {task.NeedsDecision, true}, {task.Completed, false}} {
			cur := get(t, h, "l1")
			cur.Status = step.status
			require.NoError(t, h.write(func(r repos) error { return r.tasks.Save(ctx, cur) }))
			err := insertOne(loopTask("l-"+string(step.status), "idea-1"))
			if step.open {
				require.ErrorIs(t, err, store.ErrLoopTaskOpen, "a %s task is open", step.status)
			} else {
				require.NoError(t, err, "a %s task is not open", step.status)
			}
		}
		n, err := h.read().stats.IdeaCount(ctx, "idea-1", "", "")
		require.NoError(t, err)
		require.Equal(t, 4, n, "l1, a1, a2 and the loop's new task, counted as they were written")
	})

	t.Run("Save writes every mutable field and nothing else; a missing task is not found", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		orig := pending("t", task.Impl, base)
		orig.IdeaID = "idea-1"
		insert(t, h, orig)

		next := orig
		next.Status, next.Output, next.ProgressPct, next.CurrentStep, next.DecisionPrompt = task.Failed, "out", 99, "last", "decide"
		next.ErrorSummary, next.ErrorCategory, next.WorkerID, next.ClaimedBy = "boom", task.CategoryExecutorCrash, "w", "token"
		next.LeaseSeconds, next.LeaseExpiresAt, next.Attempts = 60, at(time.Hour), 3
		next.ValueScore, next.ResourceCost, next.Duration = ptr(0.5), ptr(2.0), ptr(30.0)
		next.TokensIn, next.TokensOut, next.CostUSD = ptr(int64(12000)), ptr(int64(3000)), ptr(0.081)
		next.MaxAttempts, next.NextAttemptAt, next.StatusReason = 4, at(2*time.Hour), "why"
		next.UpdatedAt, next.StartedAt, next.CompletedAt, next.PromptVariant = at(time.Minute), at(time.Second), at(31*time.Second), "v9"
		changed := next
		// The rest is fixed at creation.
		changed.Direction, changed.Type, changed.Model, changed.Executor, changed.Tier = "other", task.Spec, "m2", "x2", "t2"
		changed.Command, changed.Context, changed.IdeaID, changed.Source, changed.CreatedAt = "c2", `{"a":1}`, "idea-2", store.SourceLoop, at(time.Hour)
		require.NoError(t, h.write(func(r repos) error { return r.tasks.Save(ctx, changed) }))
		require.Equal(t, next, get(t, h, "t"))

		cleared := next
		cleared.Status, cleared.ErrorSummary, cleared.ErrorCategory, cleared.WorkerID, cleared.ClaimedBy = task.Pending, "", "", "", ""
		cleared.LeaseExpiresAt, cleared.ValueScore, cleared.Duration, cleared.StartedAt, cleared.CompletedAt, cleared.PromptVariant =
			time.Time{}, nil, nil, time.Time{}, time.Time{}, ""
		require.NoError(t, h.write(func(r repos) error { return r.tasks.Save(ctx, cleared) }))
		require.Equal(t, cleared, get(t, h, "t"), "empty values clear their columns")

		err := h.write(func(r repos) error { return r.tasks.Save(ctx, pending("missing", task.Impl, base)) })
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("lists are newest first, filtered and paged; an idea's counts take the same filters", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		mk := func(id string, typ task.Type, status task.Status, idea string, created time.Duration) store.Task {
			tk := pending(id, typ, at(created))
			tk.Status, tk.IdeaID = status, idea
			return tk
		}
		insert(t, h,
			mk("a", task.Impl, task.Pending, "i1", time.Second),
			mk("b", task.Spec, task.Running, "i1", 2*time.Second),
			mk("c", task.Impl, task.Pending, "", 3*time.Second),
			mk("e", task.Impl, task.Failed, "i2", 4*time.Second),
			mk("d", task.Impl, task.Pending, "i1", 4*time.Second), // same time as e: e (the greater id) first
			mk("f", task.Test, task.NeedsDecision, "i1", 5*time.Second),
		)
		list := func(f store.Filter) []string {
			t.Helper()
			got, err := h.read().tasks.List(ctx, f)
			require.NoError(t, err)
			require.NotNil(t, got)
			if f.IdeaID != "" && f.Offset == 0 && f.Before == nil && len(got) < f.Limit {
				n, err := h.read().stats.IdeaCount(ctx, f.IdeaID, f.Status, f.Type)
				require.NoError(t, err)
				require.Equal(t, len(got), n, "the kept count of %+v", f)
			}
			return ids(got)
		}
		require.Equal(t, []string{"f", "e", "d", "c", "b", "a"}, list(store.Filter{Limit: 10}))
		require.Equal(t, []string{"d", "c", "a"}, list(store.Filter{Status: task.Pending, Limit: 10}))
		require.Equal(t, []string{"e", "d", "c", "a"}, list(store.Filter{Type: task.Impl, Limit: 10}))
		require.Equal(t, []string{"f", "d", "b", "a"}, list(store.Filter{IdeaID: "i1", Limit: 10}))
		require.Equal(t, []string{"d", "a"}, list(store.Filter{Status: task.Pending, Type: task.Impl, IdeaID: "i1", Limit: 10}))
		require.Equal(t, []string{"e", "d"}, list(store.Filter{Limit: 2, Offset: 1}), "a page")
		require.Empty(t, list(store.Filter{Limit: 10, Offset: 6}), "past the end: empty, not nil")
		require.Empty(t, list(store.Filter{Status: task.TimedOut, Limit: 10}))
		keyOf := func(id string) *store.Key {
			tk := get(t, h, id)
			return &store.Key{CreatedAt: tk.CreatedAt, ID: tk.ID}
		}
		require.Equal(t, []string{"d", "c"}, list(store.Filter{Before: keyOf("e"), Limit: 2}),
			"a keyset page: after e in the order, its twin in time d (the smaller id) first")
		require.Equal(t, []string{"a"}, list(store.Filter{Before: keyOf("c"), Status: task.Pending, Limit: 10}), "with the filters")
		// A change of status moves the idea's count; a task without an
		// idea counts in none.
		b := get(t, h, "b")
		b.Status = task.Completed
		require.NoError(t, h.write(func(r repos) error { return r.tasks.Save(ctx, b) }))
		for st, want := range map[task.Status]int{task.Running: 0, task.Completed: 1, task.Pending: 2, "": 4} {
			n, err := h.read().stats.IdeaCount(ctx, "i1", st, "")
			require.NoError(t, err)
			require.Equal(t, want, n, "i1's %q tasks", st)
		}
		n, err := h.read().stats.IdeaCount(ctx, "i1", task.Pending, task.Spec)
		require.NoError(t, err)
		require.Zero(t, n)
		n, err = h.read().stats.IdeaCount(ctx, "", "", "")
		require.NoError(t, err)
		require.Zero(t, n, "c has no idea")

		attention, err := h.read().tasks.Attention(ctx, 10, 0)
		require.NoError(t, err)
		require.Equal(t, []string{"f", "e"}, ids(attention), "failed and needs_decision, newest first")
		attention, err = h.read().tasks.Attention(ctx, 1, 1)
		require.NoError(t, err)
		require.Equal(t, []string{"e"}, ids(attention), "paged")
		attention, err = h.read().tasks.Attention(ctx, 10, 2)
		require.NoError(t, err)
		require.NotNil(t, attention)
		require.Empty(t, attention)
	})

	t.Run("an idea is open while it has a pending, running or needs_decision task", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		for i, status := range task.Statuses {
			tk := pending("t-"+string(status), task.Impl, at(time.Duration(i)*time.Second))
			tk.Status, tk.IdeaID = status, "idea-"+string(status)
			insert(t, h, tk)
		}
		both := pending("t-both", task.Spec, base)
		both.IdeaID = "idea-completed" // a finished task and a pending one
		insert(t, h, both)
		got, err := h.read().tasks.OpenIdeas(ctx, []string{"idea-pending", "idea-running", "idea-needs_decision",
			"idea-completed", "idea-failed", "idea-timed_out", "idea-none"})
		require.NoError(t, err)
		require.Equal(t, map[string]bool{"idea-pending": true, "idea-running": true, "idea-needs_decision": true,
			"idea-completed": true}, got)
		got, err = h.read().tasks.OpenIdeas(ctx, nil)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
	})

	t.Run("the reports' reads: durations since a time, the oldest pending task, the last finished", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		oldestPending := func() (time.Time, bool) {
			t.Helper()
			var (
				when time.Time
				ok   = true
			)
			b := &database.Batch{}
			h.read().tasks.QueueOldestPending(b, &when, &ok)
			require.NoError(t, h.DB.SendBatch(ctx, b))
			return when, ok
		}
		lastFinished := func(n int) []task.Status {
			t.Helper()
			var out []task.Status
			b := &database.Batch{}
			h.read().tasks.QueueLastFinished(b, n, &out)
			require.NoError(t, h.DB.SendBatch(ctx, b))
			return out
		}
		_, ok := oldestPending()
		require.False(t, ok, "none pending")
		require.Equal(t, []task.Status{}, lastFinished(3), "none finished: empty, not nil")

		running := pending("r", task.Impl, at(-time.Hour))
		running.Status = task.Running
		insert(t, h, running, pending("p2", task.Impl, at(2*time.Second)), pending("p1", task.Spec, at(time.Second)),
			finished("f1", task.Completed, at(time.Minute), ptr(1.5)),
			finished("f2", task.Failed, at(2*time.Minute), ptr(2.5)),
			finished("f3", task.TimedOut, at(3*time.Minute), nil), // no duration
			finished("f5", task.Completed, at(4*time.Minute), ptr(4.5)),
			finished("f4", task.Failed, at(4*time.Minute), ptr(3.5)), // same time as f5: f5 (the greater id) first
		)
		when, ok := oldestPending()
		require.True(t, ok)
		require.Equal(t, at(time.Second), when, "the longest-waiting pending task; the older running one is not pending")
		require.Equal(t, []task.Status{task.Completed, task.Failed, task.TimedOut}, lastFinished(3), "newest first")
		require.Len(t, lastFinished(10), 5)

		durations := func(since time.Time, limit int) []float64 {
			t.Helper()
			var got []float64
			b := &database.Batch{}
			h.read().tasks.QueueDurations(b, since, limit, nil, &got)
			require.NoError(t, h.DB.SendBatch(ctx, b))
			return got
		}
		require.Equal(t, []float64{4.5, 3.5, 2.5, 1.5}, durations(base, 10), "most recently finished first; none without a duration")
		require.Equal(t, []float64{4.5, 3.5, 2.5}, durations(at(2*time.Minute), 10), "finished at since is inside")
		require.Equal(t, []float64{4.5, 3.5}, durations(base, 2), "at most limit")
		require.Equal(t, []float64{}, durations(at(time.Hour), 10))

		// With a condition: read only when the histogram's days count,
		// with what was counted before, no more than limit.
		few := func(counted int64, limit int) []float64 {
			t.Helper()
			var out []float64
			b := &database.Batch{}
			h.read().tasks.QueueDurations(b, base, limit, &store.FewDurations{Counted: counted, From: base.Add(-24 * time.Hour), To: base.Add(48 * time.Hour)}, &out)
			require.NoError(t, h.DB.SendBatch(ctx, b))
			return out
		}
		require.NoError(t, h.write(func(r repos) error {
			for _, at := range []time.Time{base, base, base.Add(time.Hour)} {
				if err := r.stats.AddDuration(ctx, at, 3); err != nil {
					return err
				}
			}
			return nil
		}))
		require.Equal(t, []float64{4.5, 3.5, 2.5, 1.5}, few(0, 10), "3 counted by the histogram, at most 10")
		require.Equal(t, []float64{4.5, 3.5, 2.5, 1.5}, few(7, 10), "3 and the 7 counted before: 10")
		require.Equal(t, []float64{}, few(8, 10), "11: more than the limit, none read")
		require.Equal(t, []float64{}, few(0, 2), "3: more than the limit of 2")
	})

	t.Run("finished tasks go oldest first, a batch at a time, with their attempts, outcomes and delivered items", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		retrying := finished("failed-1", task.Failed, at(time.Minute), nil)
		retrying.NextAttemptAt = at(time.Hour)
		ideas := finished("completed-1", task.Completed, at(3*time.Minute), nil)
		ideas.IdeaID = "idea-1"
		insert(t, h,
			ideas,
			finished("cancelled-1", task.Cancelled, at(time.Minute), nil),
			finished("timed-out-1", task.TimedOut, at(2*time.Minute), nil),
			finished("discarded-1", task.Discarded, at(4*time.Minute), nil),
			retrying,
			pending("pending-1", task.Spec, at(0)),
			finished("completed-2", task.Completed, at(time.Hour), nil))
		for _, id := range []string{"completed-1", "cancelled-1", "completed-2"} {
			_, err := h.read().prompts.RecordOutcome(ctx, store.Outcome{TaskID: id, Variant: "v1", ValueScore: 1, CreatedAt: at(0)})
			require.NoError(t, err)
		}
		for _, it := range []store.OutboxItem{
			{TaskID: "completed-1", IdeaID: "idea-1", TaskType: task.Spec, CreatedAt: at(0), NextAttemptAt: at(0)},
			{TaskID: "discarded-1", IdeaID: "idea-2", TaskType: task.Spec, CreatedAt: at(0), NextAttemptAt: at(0)},
		} {
			_, err := h.read().outbox.Enqueue(ctx, it)
			require.NoError(t, err)
		}
		delivered, err := h.read().outbox.TakeOne(ctx, "completed-1", at(time.Hour))
		require.NoError(t, err)
		delivered.DeliveredAt = at(time.Hour)
		require.NoError(t, h.read().outbox.Settle(ctx, delivered))
		var b database.Batch
		for _, id := range []string{"cancelled-1", "discarded-1", "failed-1"} {
			h.read().tasks.QueueAddAttempt(&b, store.Attempt{TaskID: id, Attempt: 1, Status: task.Failed, FinishedAt: at(time.Minute)})
		}
		require.NoError(t, h.DB.SendBatch(ctx, &b))

		prune := func(batch int) []store.Pruned {
			t.Helper()
			var gone []store.Pruned
			require.NoError(t, h.DB.Tx(ctx, func(q database.Querier) error {
				r := h.over(q)
				var err error
				if gone, err = r.tasks.DeleteFinished(ctx, at(30*time.Minute), batch); err != nil {
					return err
				}
				ids := make([]string, len(gone))
				for i, p := range gone {
					ids[i] = p.ID
				}
				var b database.Batch
				r.tasks.QueueDeleteAttempts(&b, ids)
				r.prompts.QueueDeleteOutcomes(&b, ids)
				r.outbox.QueueDeleteDelivered(&b, ids)
				return q.SendBatch(ctx, &b)
			}))
			return gone
		}
		require.Equal(t, []store.Pruned{
			{ID: "cancelled-1", Status: task.Cancelled, Type: task.Impl},
			{ID: "timed-out-1", Status: task.TimedOut, Type: task.Impl},
		}, sortedPruned(prune(2)), "the two oldest")
		require.Equal(t, []store.Pruned{
			{ID: "completed-1", Status: task.Completed, Type: task.Impl},
			{ID: "discarded-1", Status: task.Discarded, Type: task.Impl},
		}, sortedPruned(prune(10)), "the rest that finished before the cut")
		require.Empty(t, prune(10), "nothing more")
		n, err := h.read().stats.IdeaCount(ctx, "idea-1", "", "")
		require.NoError(t, err)
		require.Zero(t, n, "a pruned task leaves its idea's count")

		left, err := h.read().tasks.List(ctx, store.Filter{Limit: 10})
		require.NoError(t, err)
		ids := make([]string, len(left))
		for i, tk := range left {
			ids[i] = tk.ID
		}
		require.ElementsMatch(t, []string{"failed-1", "pending-1", "completed-2"}, ids,
			"a failed task waiting for its retry, a live one, one finished after the cut")
		for id, want := range map[string]int{"cancelled-1": 0, "discarded-1": 0, "failed-1": 1} {
			attempts, err := h.read().tasks.Attempts(ctx, id)
			require.NoError(t, err)
			require.Len(t, attempts, want, id)
		}
		recorded, err := h.read().prompts.RecordOutcome(ctx, store.Outcome{TaskID: "completed-1", Variant: "v1", CreatedAt: at(0)})
		require.NoError(t, err)
		require.True(t, recorded, "the pruned task's outcome went")
		recorded, err = h.read().prompts.RecordOutcome(ctx, store.Outcome{TaskID: "completed-2", Variant: "v1", CreatedAt: at(0)})
		require.NoError(t, err)
		require.False(t, recorded, "a kept task's outcome stays")
		_, err = h.read().outbox.Get(ctx, "completed-1")
		require.ErrorIs(t, err, store.ErrNotFound, "the delivered item went")
		undelivered, err := h.read().outbox.Get(ctx, "discarded-1")
		require.NoError(t, err, "an undelivered item stays to be delivered")
		require.Equal(t, "idea-2", undelivered.IdeaID)
	})
}

// sortedPruned is ps by id: one batch's rows come back in no set order.
func sortedPruned(ps []store.Pruned) []store.Pruned {
	slices.SortFunc(ps, func(a, b store.Pruned) int { return strings.Compare(a.ID, b.ID) })
	return ps
}

package usecase_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/prompt"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/cursor"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func requireKind(t *testing.T, want fault.Kind, err error) {
	t.Helper()
	require.Error(t, err)
	require.Equal(t, want.String(), fault.KindOf(err).String(), "error: %v", err)
}

func TestCreateRoutesAndEchoes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		tk, err := e.app.Create(ctx, usecase.NewTask{Direction: "write the spec; don't 'break' it", Type: "spec",
			Context: map[string]any{"idea_id": "idea-1", "prompt_variant": "v2", "extra": map[string]any{"n": 3.0}}})
		require.NoError(t, err)
		require.Equal(t, "task-0001", tk.ID)
		require.Equal(t, task.Pending, tk.Status)
		require.Equal(t, "claude", tk.Executor)
		require.Equal(t, "strong", tk.Tier)
		require.Equal(t, "claude-opus-4-1", tk.Model)
		require.True(t, strings.HasPrefix(tk.Command, `claude -p --model claude-opus-4-1 -- 'You are an agent carrying out the spec task`), tk.Command,
			"options end before the prompt, which then can never be read as one")
		require.Contains(t, tk.Command, `Task: write the spec; don'\''t '\''break'\'' it`, "the prompt, quoted for the shell")
		require.True(t, strings.HasSuffix(tk.Command, `</previous>'`), tk.Command)
		require.Equal(t, prompt.Render(prompt.Default, prompt.Vars{TaskType: "spec", Direction: tk.Direction, IdeaID: "idea-1"}), tk.Prompt)
		require.Equal(t, "idea-1", tk.IdeaID)
		require.Equal(t, "v2", tk.PromptVariant)
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(tk.Context), &c))
		require.Equal(t, map[string]any{"idea_id": "idea-1", "prompt_variant": "v2", "extra": map[string]any{"n": 3.0}}, c)
		require.Equal(t, start, tk.CreatedAt)
		require.Empty(t, tk.ErrorSummary)
		require.Nil(t, tk.Duration)

		got, err := e.app.Get(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, tk, got, "what create answered is what a read returns")

		impl := e.create(t, "impl", nil)
		require.Equal(t, "codex", impl.Executor)
		require.Equal(t, "gpt-5-codex", impl.Model)
		require.Equal(t, "{}", impl.Context)
		require.Empty(t, impl.PromptVariant, "no variant is known, so none is chosen")

		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, counts.Total)
		require.Equal(t, 2, counts.ByStatus[task.Pending])
		require.Len(t, counts.ByStatus, len(task.Statuses))

		_, err = e.app.Get(ctx, "nope")
		requireKind(t, fault.NotFound, err)
	})
}

func TestCreateValidation(t *testing.T) {
	t.Parallel()
	e := setup(t, database.SQLite)
	tests := []struct {
		name  string
		in    usecase.NewTask
		field string
	}{
		{"missing direction", usecase.NewTask{Type: "spec"}, "direction"},
		{"blank direction", usecase.NewTask{Direction: "  ", Type: "spec"}, "direction"},
		{"unknown type", usecase.NewTask{Direction: "x", Type: "dance"}, "task_type"},
		{"idea_id not a string", usecase.NewTask{Direction: "x", Type: "spec", Context: map[string]any{"idea_id": 7.0}}, "context.idea_id"},
		{"blank prompt variant", usecase.NewTask{Direction: "x", Type: "spec", Context: map[string]any{"prompt_variant": " "}}, "context.prompt_variant"},
		{"context too large", usecase.NewTask{Direction: "x", Type: "spec", Context: map[string]any{"blob": strings.Repeat("a", 70000)}}, "context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := e.app.Create(context.Background(), tt.in)
			requireKind(t, fault.Invalid, err)
			fe, _ := fault.As(err)
			require.Equal(t, tt.field, fe.Fields[0].Field)
		})
	}
	counts, err := e.app.Count(context.Background())
	require.NoError(t, err)
	require.Equal(t, 0, counts.Total, "nothing was written")
}

func TestUpdateRules(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		tk := e.create(t, "impl", nil)

		_, err := e.app.Update(ctx, tk.ID, usecase.Patch{})
		requireKind(t, fault.Rejected, err)
		_, err = e.app.Update(ctx, "missing", usecase.Patch{ProgressPct: ptr(5.0)})
		requireKind(t, fault.NotFound, err)
		for _, p := range []usecase.Patch{
			{Status: ptr("paused")}, {ProgressPct: ptr(101.0)}, {ProgressPct: ptr(-1.0)}, {ErrorCategory: ptr("oops")},
			{ValueScore: ptr(-1.0)}, {WorkerID: ptr(" ")}, {Status: ptr("running")}, {Status: ptr("completed"), ErrorSummary: ptr("x")},
			{Status: ptr("failed")},
		} {
			_, err = e.app.Update(ctx, tk.ID, p)
			requireKind(t, fault.Invalid, err)
		}

		claimed := e.patch(t, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		require.Equal(t, task.Running, claimed.Status)
		require.Equal(t, "w1", claimed.WorkerID)
		require.Equal(t, 1, claimed.Attempts)
		require.Equal(t, start, claimed.StartedAt)
		require.Equal(t, start.Add(usecase.DefaultLease), claimed.LeaseExpiresAt)

		_, err = e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w2")})
		requireKind(t, fault.Conflict, err)
		_, err = e.app.Update(ctx, tk.ID, usecase.Patch{ProgressPct: ptr(10.0), WorkerID: ptr("w2")})
		requireKind(t, fault.Conflict, err)

		e.clock.Advance(time.Minute)
		again := e.patch(t, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		require.Equal(t, 1, again.Attempts, "the same worker's repeated claim is no new attempt")
		beat := e.patch(t, tk.ID, usecase.Patch{ProgressPct: ptr(40.0), CurrentStep: ptr("compiling")})
		require.Equal(t, start.Add(time.Minute+usecase.DefaultLease), beat.LeaseExpiresAt, "a PATCH renews the lease")
		require.InDelta(t, 40.0, beat.ProgressPct, 0)
		require.Equal(t, "compiling", beat.CurrentStep)

		e.clock.Advance(30 * time.Second)
		done := e.patch(t, tk.ID, usecase.Patch{Status: ptr("completed"), Output: ptr("all green"), WorkerID: ptr("w1"),
			ValueScore: ptr(0.75), ResourceCost: ptr(2.0)})
		require.Equal(t, task.Completed, done.Status)
		require.Equal(t, start.Add(90*time.Second), done.CompletedAt)
		require.InDelta(t, 90.0, *done.Duration, 1e-9)
		require.InDelta(t, 100.0, done.ProgressPct, 0, "completion is 100 %")
		require.True(t, done.LeaseExpiresAt.IsZero())
		require.Empty(t, done.ErrorSummary)

		same := e.patch(t, tk.ID, usecase.Patch{Status: ptr("completed"), Output: ptr("all green")})
		require.Equal(t, done, same, "repeating the finishing PATCH answers the task unchanged")
		_, err = e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("failed"), Output: ptr("boom")})
		requireKind(t, fault.Conflict, err)
		_, err = e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		requireKind(t, fault.Conflict, err)

		decide := e.create(t, "review", nil)
		nd := e.patch(t, decide.ID, usecase.Patch{Status: ptr("needs_decision"), DecisionPrompt: ptr("merge or split?")})
		require.Equal(t, task.NeedsDecision, nd.Status)
		require.Equal(t, "merge or split?", nd.DecisionPrompt)
		_, err = e.app.Update(ctx, decide.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		requireKind(t, fault.Conflict, err)
		back := e.patch(t, decide.ID, usecase.Patch{Status: ptr("pending")})
		require.Equal(t, task.Pending, back.Status)

		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, map[task.Status]int{task.Pending: 1, task.Running: 0, task.Completed: 1, task.Failed: 0, task.TimedOut: 0,
			task.NeedsDecision: 0, task.Discarded: 0, task.Cancelled: 0}, counts.ByStatus)
	})
}

func TestFailureIsDiagnosed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		tests := []struct {
			patch    usecase.Patch
			summary  string
			category string
		}{
			{usecase.Patch{Output: ptr("\n  Traceback (most recent call last):\n  File x\n")}, "Traceback (most recent call last):", task.CategoryExecutorCrash},
			{usecase.Patch{Output: ptr("step 1 ok\ncontext deadline exceeded")}, "step 1 ok", task.CategoryTimeout},
			{usecase.Patch{Output: ptr("429 Too Many Requests")}, "429 Too Many Requests", task.CategoryProviderError},
			{usecase.Patch{Output: ptr("--- FAIL: TestX")}, "--- FAIL: TestX", task.CategoryValidationFailure},
			{usecase.Patch{Output: ptr("something odd")}, "something odd", task.CategoryUnknown},
			{usecase.Patch{ErrorSummary: ptr("disk full"), ErrorCategory: ptr("executor_crash")}, "disk full", task.CategoryExecutorCrash},
			{usecase.Patch{Output: ptr(strings.Repeat("é", 600))}, strings.Repeat("é", 500), task.CategoryUnknown},
		}
		for _, tt := range tests {
			tk := e.create(t, "test", nil)
			tt.patch.Status = ptr("failed")
			got := e.patch(t, tk.ID, tt.patch)
			require.Equal(t, task.Failed, got.Status)
			require.Equal(t, tt.summary, got.ErrorSummary)
			require.Equal(t, tt.category, got.ErrorCategory)
			require.NotNil(t, got.Duration)
		}
		d, err := e.app.Diagnostics(ctx)
		require.NoError(t, err)
		require.Equal(t, 7, d.TotalFailed)
		require.Equal(t, 7, d.WithDiagnostics)
		require.InDelta(t, 0.0, d.MissingPct, 0)
		require.Equal(t, map[string]int{"timeout": 1, "executor_crash": 2, "provider_error": 1, "validation_failure": 1, "unknown": 2}, d.ByCategory)

		empty := e.create(t, "test", nil)
		_, err = e.app.Update(ctx, empty.ID, usecase.Patch{Status: ptr("failed"), Output: ptr(" \n ")})
		requireKind(t, fault.Invalid, err)
		got, err := e.app.Get(ctx, empty.ID)
		require.NoError(t, err)
		require.Equal(t, task.Pending, got.Status, "a refused failure changes nothing")
	})
}

func TestListsAndAttention(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		var ids []string
		for i, typ := range []string{"spec", "impl", "spec", "test", "spec"} {
			ids = append(ids, e.create(t, typ, nil).ID)
			e.clock.Advance(time.Duration(i+1) * time.Second)
		}
		e.patch(t, ids[0], usecase.Patch{Status: ptr("failed"), Output: ptr("boom")})
		e.patch(t, ids[3], usecase.Patch{Status: ptr("needs_decision")})
		e.patch(t, ids[4], usecase.Patch{Status: ptr("completed")})

		idsOf := func(p usecase.Page) []string {
			out := []string{}
			for _, tk := range p.Tasks {
				out = append(out, tk.ID)
			}
			return out
		}
		all, err := e.app.List(ctx, usecase.ListQuery{})
		require.NoError(t, err)
		require.Equal(t, []string{ids[4], ids[3], ids[2], ids[1], ids[0]}, idsOf(all), "newest first")
		require.Equal(t, 5, all.Total)
		require.Equal(t, usecase.DefaultLimit, all.Limit)

		specs, err := e.app.List(ctx, usecase.ListQuery{Type: "spec", Limit: ptr(2)})
		require.NoError(t, err)
		require.Equal(t, []string{ids[4], ids[2]}, idsOf(specs))
		require.Equal(t, 3, specs.Total)
		page2, err := e.app.List(ctx, usecase.ListQuery{Type: "spec", Limit: ptr(2), Offset: 2})
		require.NoError(t, err)
		require.Equal(t, []string{ids[0]}, idsOf(page2))

		pendingSpecs, err := e.app.List(ctx, usecase.ListQuery{Type: "spec", Status: "pending"})
		require.NoError(t, err)
		require.Equal(t, []string{ids[2]}, idsOf(pendingSpecs))
		require.Equal(t, 1, pendingSpecs.Total)

		// An idea's tasks: its total is counted, not read off the counters.
		forIdea := []string{e.create(t, "spec", map[string]any{"idea_id": "idea-1"}).ID}
		e.clock.Advance(time.Second)
		e.create(t, "spec", map[string]any{"idea_id": "idea-2"})
		e.clock.Advance(time.Second)
		forIdea = append([]string{e.create(t, "impl", map[string]any{"idea_id": "idea-1"}).ID}, forIdea...)
		e.patch(t, forIdea[0], usecase.Patch{Status: ptr("completed")})
		idea1, err := e.app.List(ctx, usecase.ListQuery{IdeaID: "idea-1"})
		require.NoError(t, err)
		require.Equal(t, forIdea, idsOf(idea1), "newest first")
		require.Equal(t, 2, idea1.Total)
		idea1Done, err := e.app.List(ctx, usecase.ListQuery{IdeaID: "idea-1", Status: "completed", Limit: ptr(1)})
		require.NoError(t, err)
		require.Equal(t, []string{forIdea[0]}, idsOf(idea1Done))
		require.Equal(t, 1, idea1Done.Total)
		none, err := e.app.List(ctx, usecase.ListQuery{IdeaID: "idea-9"})
		require.NoError(t, err)
		require.Empty(t, none.Tasks)
		require.Zero(t, none.Total)

		for _, q := range []usecase.ListQuery{{Limit: ptr(0)}, {Limit: ptr(501)}, {Offset: -1}, {Status: "nope"}, {Type: "nope"},
			{IdeaID: strings.Repeat("i", usecase.MaxIdeaID+1)}} {
			_, err := e.app.List(ctx, q)
			requireKind(t, fault.Invalid, err)
		}
		biggest, err := e.app.List(ctx, usecase.ListQuery{Limit: ptr(500)})
		require.NoError(t, err)
		require.Equal(t, 500, biggest.Limit)

		att, err := e.app.Attention(ctx, nil, 0)
		require.NoError(t, err)
		require.Equal(t, []string{ids[3], ids[0]}, idsOf(att))
		require.Equal(t, 2, att.Total)
		_, err = e.app.Attention(ctx, ptr(0), 0)
		requireKind(t, fault.Invalid, err)
	})
}

// TestACursorPageCountsNothing: a page read by cursor sends no count of
// the tasks before it (it cost what an offset read does: 0.3 s at a
// million tasks), and the list's total comes from the kept counters, an
// idea's list's from the idea's (migration 0016).
func TestACursorPageCountsNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		for k := range 4 {
			e.create(t, "impl", map[string]any{"idea_id": fmt.Sprint("idea-", k%2)})
			e.clock.Advance(time.Second)
		}
		first, err := e.app.List(ctx, usecase.ListQuery{Limit: ptr(2)})
		require.NoError(t, err)
		var rec dbtest.Recording
		recorded := usecase.New(e.db, func(q database.Querier) usecase.Repos { return repos(rec.Wrap(q)) },
			usecase.Config{Clock: e.clock})
		second, err := recorded.List(ctx, usecase.ListQuery{Limit: ptr(2), Cursor: first.Next})
		require.NoError(t, err)
		require.Len(t, second.Tasks, 2)
		require.Equal(t, 2, second.Offset)
		require.Equal(t, 4, second.Total)
		ideas, err := recorded.List(ctx, usecase.ListQuery{IdeaID: "idea-1", Limit: ptr(1)})
		require.NoError(t, err)
		require.Equal(t, 2, ideas.Total, "idea-1's tasks, kept")
		require.NotEmpty(t, ideas.Next)
		pending, err := recorded.List(ctx, usecase.ListQuery{IdeaID: "idea-1", Status: "running"})
		require.NoError(t, err)
		require.Zero(t, pending.Total)
		stmts := rec.Take()
		require.NotEmpty(t, stmts)
		for _, st := range stmts {
			require.NotContains(t, strings.ToUpper(st.Query), "COUNT(", "a cursor page counts no task")
		}
	})
}

// TestListByCursor: a page read by its predecessor's cursor continues
// right after that page's last task however many tasks were created
// meanwhile (an offset would shift by them), keeps the filters, says its
// offset in the list as its first page saw it (carried by the cursor,
// never counted), and gives no cursor on the last page; a bad cursor or
// a cursor with an offset is a 422.
func TestListByCursor(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		for range 5 {
			e.create(t, "impl", nil)
			e.clock.Advance(time.Second)
		}
		ids := func(p usecase.Page) []string {
			var out []string
			for _, tk := range p.Tasks {
				out = append(out, tk.ID)
			}
			return out
		}
		first, err := e.app.List(ctx, usecase.ListQuery{Limit: ptr(2)})
		require.NoError(t, err)
		require.Equal(t, []string{"task-0005", "task-0004"}, ids(first))
		require.NotEmpty(t, first.Next)

		e.create(t, "impl", nil) // task-0006 lands at the head
		second, err := e.app.List(ctx, usecase.ListQuery{Limit: ptr(2), Cursor: first.Next})
		require.NoError(t, err)
		require.Equal(t, []string{"task-0003", "task-0002"}, ids(second), "not shifted by the new task")
		require.Equal(t, 2, second.Offset, "0005 and 0004 preceded it when paging began")
		require.Equal(t, 6, second.Total)
		last, err := e.app.List(ctx, usecase.ListQuery{Limit: ptr(2), Cursor: second.Next})
		require.NoError(t, err)
		require.Equal(t, []string{"task-0001"}, ids(last))
		require.Equal(t, 4, last.Offset)
		require.Empty(t, last.Next, "the last page, though the head grew: nothing follows it")
		whole, err := e.app.List(ctx, usecase.ListQuery{Limit: ptr(6)})
		require.NoError(t, err)
		require.Len(t, whole.Tasks, 6)
		require.Empty(t, whole.Next, "a page holding the whole list has no cursor")

		typed, err := e.app.List(ctx, usecase.ListQuery{Type: "spec", Cursor: first.Next})
		require.NoError(t, err)
		require.Empty(t, typed.Tasks, "the filters hold on a cursor page")

		for name, q := range map[string]usecase.ListQuery{
			"made up":        {Cursor: "nope"},
			"with an offset": {Cursor: first.Next, Offset: 1},
			"too deep":       {Offset: cursor.MaxOffset + 1},
		} {
			_, err := e.app.List(ctx, q)
			fe, ok := fault.As(err)
			require.True(t, ok, name)
			require.Equal(t, fault.Invalid, fe.Kind, name)
		}
		deepest, err := e.app.List(ctx, usecase.ListQuery{Offset: cursor.MaxOffset})
		require.NoError(t, err)
		require.Empty(t, deepest.Tasks, "the deepest offset is a page")
	})
}

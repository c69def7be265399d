package usecase_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// TestLoopLeaseIgnoresReplicaClocks runs two replicas' use cases over one
// database, one replica's clock minutes ahead of the other's: whichever
// takes the loop's lease first holds it, and both report the same leader.
func TestLoopLeaseIgnoresReplicaClocks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine)
		now := time.Now().UTC()
		right := usecase.New(e.db, repos, usecase.Config{Clock: clock.NewFake(now)})
		ahead := usecase.New(e.db, repos, usecase.Config{Clock: clock.NewFake(now.Add(10 * time.Minute))})
		behind := usecase.New(e.db, repos, usecase.Config{Clock: clock.NewFake(now.Add(-10 * time.Minute))})
		const ttl = 30 * time.Second

		ok, err := behind.LeadLoop(ctx, "behind", ttl)
		require.NoError(t, err)
		require.True(t, ok, "the free lease")
		for _, other := range []*usecase.App{right, ahead} {
			ok, err := other.LeadLoop(ctx, "other", ttl)
			require.NoError(t, err)
			require.False(t, ok, "a lease taken by a replica whose clock runs behind is not expired for the others")
			rep, err := other.Loop(ctx)
			require.NoError(t, err)
			require.Equal(t, "behind", rep.Leader)
		}

		require.NoError(t, behind.ReleaseLoop(ctx, "behind"))
		ok, err = right.LeadLoop(ctx, "right", ttl)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = ahead.LeadLoop(ctx, "ahead", ttl)
		require.NoError(t, err)
		require.False(t, ok, "a replica whose clock runs ahead does not take a lease the holder renews")
		ok, err = right.LeadLoop(ctx, "right", ttl)
		require.NoError(t, err)
		require.True(t, ok, "the holder renews")
	})
}

// TestOneOpenLoopTaskPerIdea: concurrent attempts of the loop to open a
// task for one idea (two replicas that both believe they lead) open one;
// the others are told the idea already has one, and nothing of theirs is
// written. Tasks created through the API are not bound by the rule.
func TestOneOpenLoopTaskPerIdea(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine)
		open := func(idea string) (store.Task, error) {
			return e.app.Create(ctx, usecase.NewTask{Direction: "move " + idea + " on", Type: "spec",
				Context: map[string]any{"idea_id": idea, "source": "pipeline_loop"}, Loop: true})
		}

		const attempts = 8
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			opened  []store.Task
			refused int
		)
		for range attempts {
			wg.Go(func() {
				tk, err := open("idea-1")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					opened = append(opened, tk)
				case assert.ErrorIs(t, err, store.ErrLoopTaskOpen):
					refused++
				}
			})
		}
		wg.Wait()
		require.Equal(t, 1, len(opened), "one task opened")
		require.Equal(t, attempts-1, refused, "the others were told the idea has one")
		require.Equal(t, store.SourceLoop, opened[0].Source)
		page, err := e.app.List(ctx, usecase.ListQuery{IdeaID: "idea-1"})
		require.NoError(t, err)
		require.Equal(t, 1, page.Total)
		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts.Total, "a refused task counted nothing")

		// API tasks for the idea may be several, beside the loop's.
		api1 := e.create(t, "review", map[string]any{"idea_id": "idea-1"})
		e.create(t, "review", map[string]any{"idea_id": "idea-1", "source": "pipeline_loop"})
		require.Equal(t, store.SourceAPI, api1.Source)
		got, err := e.app.Get(ctx, api1.ID)
		require.NoError(t, err)
		require.Equal(t, store.SourceAPI, got.Source, "the source is stored")
		// Another idea is another matter.
		_, err = open("idea-2")
		require.NoError(t, err)

		// Running, waiting for a decision and waiting for a retry are
		// open too; a finished task frees the idea.
		first := opened[0]
		e.patch(t, first.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		_, err = open("idea-1")
		requireLoopTaskOpen(t, err)
		e.patch(t, first.ID, usecase.Patch{Status: ptr("needs_decision"), DecisionPrompt: ptr("which way?")})
		_, err = open("idea-1")
		requireLoopTaskOpen(t, err)
		failed := e.patch(t, first.ID, usecase.Patch{Status: ptr("failed"), Output: ptr("no way")})
		require.Equal(t, task.Failed, failed.Status)
		require.False(t, failed.NextAttemptAt.IsZero(), "the first of three attempts failed: a retry is due")
		_, err = open("idea-1")
		requireLoopTaskOpen(t, err)
		_, err = e.app.Cancel(ctx, first.ID, "")
		require.NoError(t, err)
		second, err := open("idea-1")
		require.NoError(t, err, "the idea's loop task finished: the loop may open the next")
		require.NotEqual(t, first.ID, second.ID)

		_, err = e.app.Create(ctx, usecase.NewTask{Direction: "d", Type: "spec", Loop: true})
		requireKind(t, fault.Invalid, err)
	})
}

func requireLoopTaskOpen(t *testing.T, err error) {
	t.Helper()
	require.ErrorIs(t, err, store.ErrLoopTaskOpen)
}

// TestLoopTaskFailuresCountAgainstTheirIdea: each loop task of an idea
// that fails or times out counts one more failure in a row, whoever
// finished it; a run the loop stopped itself counts none; a completed one
// ends the run; a task created through the API counts nothing.
func TestLoopTaskFailuresCountAgainstTheirIdea(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		// One attempt each: a failure discards the task, which frees the
		// idea for the next.
		e := setup(t, engine, func(c *usecase.Config) { c.MaxAttempts = 1 })
		finish := func(idea string, loop bool, status string, stopped bool) {
			t.Helper()
			tk, err := e.app.Create(ctx, usecase.NewTask{Direction: "move " + idea + " on", Type: "spec",
				Context: map[string]any{"idea_id": idea}, Loop: loop})
			require.NoError(t, err)
			p := usecase.Patch{Status: &status, Stopped: stopped}
			if status != "completed" {
				summary := "429 rate limited"
				p.ErrorSummary = &summary
			}
			_, err = e.app.Update(ctx, tk.ID, p)
			require.NoError(t, err)
		}
		failures := func(idea string) store.IdeaFailures {
			t.Helper()
			fs, err := e.app.IdeaFailures(ctx, []string{idea})
			require.NoError(t, err)
			return fs[idea]
		}
		finish("idea-1", true, "failed", false)
		finish("idea-1", true, "timed_out", false)
		got := failures("idea-1")
		require.Equal(t, 2, got.Failures)
		require.Equal(t, "429 rate limited", got.LastError)
		require.False(t, got.LastAt.IsZero())
		finish("idea-1", true, "failed", true)
		require.Equal(t, 2, failures("idea-1").Failures, "a run the loop stopped itself is no failure of the idea")
		finish("idea-1", false, "failed", false)
		require.Equal(t, 2, failures("idea-1").Failures, "an API task is not the loop's")
		finish("idea-1", true, "completed", false)
		require.Zero(t, failures("idea-1").Failures, "a success ends the run")
	})
}

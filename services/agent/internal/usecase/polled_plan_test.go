package usecase_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// agentGrowing are the agent's tables that grow with its history (the
// rollups by hour and day grow too, but by the clock, not the work).
var agentGrowing = []string{"tasks", "task_attempts", "task_durations", "idempotency_keys", "idea_outbox",
	"loop_passes", "idea_failures", "prompt_outcomes", "task_hourly", "task_daily", "task_finished_hourly", "stage_outputs", "idea_task_counts"}

// recorded is the use cases over a fresh Postgres agent database whose
// repositories' statements rec keeps, as setup's otherwise.
func recorded(t *testing.T) (env, *dbtest.Recording) {
	t.Helper()
	db := dbtest.Open(t, database.Postgres, "agent", store.Migrations())
	rec := &dbtest.Recording{}
	clk := clock.NewFake(start)
	var n atomic.Int64
	ideas := &fakeIdeas{}
	app := usecase.New(db, func(q database.Querier) usecase.Repos { return repos(rec.Wrap(q)) },
		usecase.Config{Clock: clk, NewID: func() string { return fmt.Sprintf("task-%04d", n.Add(1)) }, Seed: 42, Ideas: ideas})
	return env{app: app, clock: clk, ideas: ideas, db: db}, rec
}

// TestPolledRoutesReadIndexRanges: every statement the routes the
// dashboard polls send (the task list and its attention list, the
// pipeline status, the metrics and their days, the diagnostics), and the
// queue's gauges every metrics scrape reads, reads
// the tables that grow with history by ranges of their indexes, in the
// generic plan Postgres caches for it (dbtest.RequireIndexReads). The
// hourly prune of finished tasks is held to ranges too: it runs however
// long the history behind the retention is.
func TestPolledRoutesReadIndexRanges(t *testing.T) {
	t.Parallel()
	e, rec := recorded(t)
	app, clk, db := e.app, e.clock, e.db
	ctx := context.Background()
	for range 3 {
		e.create(t, "impl", nil)
		clk.Advance(time.Minute)
	}
	done := e.run(t, e.create(t, "spec", nil).ID, "completed", time.Minute)
	_, err := app.Cancel(ctx, e.create(t, "test", nil).ID, "")
	require.NoError(t, err)
	_, err = db.Exec(ctx, `ANALYZE`)
	require.NoError(t, err)

	days, window := int32(30), 7
	dbtest.RequireCallsReadIndexRanges(t, db, rec, map[string]func() error{
		"GET /api/agent/tasks":         func() error { _, err := app.List(ctx, usecase.ListQuery{}); return err },
		"GET /api/agent/tasks?status=": func() error { _, err := app.List(ctx, usecase.ListQuery{Status: "pending"}); return err },
		"GET /api/agent/tasks?cursor=": func() error {
			first, err := app.List(ctx, usecase.ListQuery{Limit: ptr(1)})
			if err == nil {
				_, err = app.List(ctx, usecase.ListQuery{Limit: ptr(1), Cursor: first.Next})
			}
			return err
		},
		"GET /api/agent/tasks?idea_id=": func() error {
			_, err := app.List(ctx, usecase.ListQuery{IdeaID: "idea-1", Status: "pending"})
			return err
		},
		"GET /api/agent/tasks/attention":    func() error { _, err := app.Attention(ctx, nil, 0); return err },
		"GET /api/agent/pipeline-status":    func() error { _, err := app.PipelineStatus(ctx); return err },
		"GET /api/agent/metrics":            func() error { _, err := app.Metrics(ctx, &window); return err },
		"GET /api/agent/metrics/daily":      func() error { _, err := app.DailyMetrics(ctx, &days); return err },
		"the queue's gauges (every scrape)": func() error { _, err := app.Gauges(ctx); return err },
		"the finished tasks' prune (hourly)": func() error {
			_, err := app.PruneFinishedTasks(ctx, done.CompletedAt.Add(time.Hour), 10)
			return err
		},
		"GET /api/agent/diagnostics-completeness": func() error {
			_, err := app.Diagnostics(ctx)
			return err
		},
	}, agentGrowing...)
}

// TestAKeysetPageIsARange: a page read by cursor bounds its index scan
// by the cursor's created_at (an Index Cond), in the generic plan
// Postgres caches for it. Spelled as a bare disjunction the keyset was a
// Filter under the page's Limit: a walk from the list's head past every
// task before the cursor (30 ms a page 190 000 deep against 1 ms at the
// head; BenchmarkListWithoutCounting), which the polled-routes test lets
// pass because a Limit stops it.
func TestAKeysetPageIsARange(t *testing.T) {
	t.Parallel()
	e, rec := recorded(t)
	app, clk, db := e.app, e.clock, e.db
	ctx := context.Background()
	for range 3 {
		_, err := app.Create(ctx, usecase.NewTask{Direction: "d", Type: "impl"})
		require.NoError(t, err)
		clk.Advance(time.Second)
	}
	first, err := app.List(ctx, usecase.ListQuery{Limit: ptr(1)})
	require.NoError(t, err)
	rec.Take()
	for _, q := range []usecase.ListQuery{{Limit: ptr(1), Cursor: first.Next}, {Limit: ptr(1), Cursor: first.Next, Type: "impl"}} {
		_, err = app.List(ctx, q)
		require.NoError(t, err)
		var page *dbtest.Statement
		for _, st := range rec.Take() {
			if strings.Contains(st.Query, "FROM tasks") && strings.Contains(st.Query, "created_at <") {
				page = &st
			}
		}
		require.NotNil(t, page, "the cursor page's read")
		plan := dbtest.GenericPlan(t, db, page.Query, page.Args, "enable_seqscan = off", "enable_bitmapscan = off")
		require.Regexp(t, `Index Cond: .*created_at <=`, plan, "the cursor bounds the scan:\n%s", plan)
	}
}

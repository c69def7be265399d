package usecase_test

import (
	"context"
	"fmt"
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
	db := dbtest.Open(t, database.Postgres, "agent", store.Migrations())
	var rec dbtest.Recording
	clk := clock.NewFake(start)
	var n atomic.Int64
	app := usecase.New(db, func(q database.Querier) usecase.Repos { return repos(rec.Wrap(q)) },
		usecase.Config{Clock: clk, NewID: func() string { return fmt.Sprintf("task-%04d", n.Add(1)) }, Seed: 42, Ideas: &fakeIdeas{}})
	e := env{app: app, clock: clk, ideas: &fakeIdeas{}, db: db}
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
	dbtest.RequireCallsReadIndexRanges(t, db, &rec, map[string]func() error{
		"GET /api/agent/tasks":         func() error { _, err := app.List(ctx, usecase.ListQuery{}); return err },
		"GET /api/agent/tasks?status=": func() error { _, err := app.List(ctx, usecase.ListQuery{Status: "pending"}); return err },
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

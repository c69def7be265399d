package usecase_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// start is the fake clock's starting time (microsecond precision, as stored).
var start = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

func repos(q database.Querier) usecase.Repos {
	return usecase.Repos{Tasks: sqlstore.NewTasks(q), Stats: sqlstore.NewStats(q), Prompts: sqlstore.NewPrompts(q), Outbox: sqlstore.NewOutbox(q), Loop: sqlstore.NewLoopPasses(q), Keys: idempotency.SQL{Q: q}, Send: q.SendBatch}
}

// advanceCall is one call the fake portfolio received.
type advanceCall struct{ IdeaID, TaskType, TaskID string }

// fakeIdeas is the portfolio: it records calls and answers err (nil: ok).
type fakeIdeas struct {
	mu    sync.Mutex
	calls []advanceCall
	err   error
}

func (f *fakeIdeas) AdvanceForTask(_ context.Context, ideaID, taskType, taskID string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, advanceCall{ideaID, taskType, taskID})
	return f.err
}

func (f *fakeIdeas) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func (f *fakeIdeas) Calls() []advanceCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]advanceCall(nil), f.calls...)
}

type env struct {
	app   *usecase.App
	clock *clock.Fake
	ideas *fakeIdeas
	db    *database.DB
}

// setup opens a fresh agent database on engine and the use cases over it,
// with a fake clock at start, sequential task ids (task-0001, ...) and seed 42.
func setup(t testing.TB, engine database.Engine, opts ...func(*usecase.Config)) env {
	t.Helper()
	db := dbtest.Open(t, engine, "agent", store.Migrations())
	clk := clock.NewFake(start)
	ideas := &fakeIdeas{}
	var n atomic.Int64
	cfg := usecase.Config{Clock: clk, NewID: func() string { return fmt.Sprintf("task-%04d", n.Add(1)) }, Seed: 42, Ideas: ideas}
	for _, o := range opts {
		o(&cfg)
	}
	return env{app: usecase.New(db, repos, cfg), clock: clk, ideas: ideas, db: db}
}

func ptr[T any](v T) *T { return &v }

// at moves the clock forward to t.
func (e env) at(t time.Time) { e.clock.Advance(t.Sub(e.clock.Now())) }

// create makes a task of typ with the context, failing the test on error.
func (e env) create(t *testing.T, typ string, c map[string]any) store.Task {
	t.Helper()
	tk, err := e.app.Create(context.Background(), usecase.NewTask{Direction: "do the " + typ + " work", Type: typ, Context: c})
	require.NoError(t, err)
	return tk
}

// patch applies p, failing the test on error.
func (e env) patch(t *testing.T, id string, p usecase.Patch) store.Task {
	t.Helper()
	tk, err := e.app.Update(context.Background(), id, p)
	require.NoError(t, err)
	return tk
}

// run claims the task for worker, waits d on the fake clock, and finishes
// it with status (and output for a failure).
func (e env) run(t *testing.T, id, status string, d time.Duration) store.Task {
	t.Helper()
	e.patch(t, id, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
	e.clock.Advance(d)
	p := usecase.Patch{Status: ptr(status)}
	if status != "completed" {
		p.Output = ptr("provider returned 503 service unavailable")
	}
	return e.patch(t, id, p)
}

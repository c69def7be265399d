package usecase_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// tripCounter counts the trips its queriers make to the database: a
// statement, or a batch (one pipelined round trip on Postgres); ended
// counts the batches that ended their transaction (database.Batch.Final:
// on Postgres the COMMIT rode with them, no trip of its own).
type tripCounter struct{ n, ended atomic.Int64 }

type countingQ struct {
	database.Querier
	c *tripCounter
}

func (q countingQ) Exec(ctx context.Context, s string, args ...any) (int64, error) {
	q.c.n.Add(1)
	return q.Querier.Exec(ctx, s, args...)
}

func (q countingQ) Query(ctx context.Context, s string, args ...any) (database.Rows, error) {
	q.c.n.Add(1)
	return q.Querier.Query(ctx, s, args...)
}

func (q countingQ) QueryRow(ctx context.Context, s string, args ...any) database.Row {
	q.c.n.Add(1)
	return q.Querier.QueryRow(ctx, s, args...)
}

func (q countingQ) SendBatch(ctx context.Context, b *database.Batch) error {
	q.c.n.Add(1)
	if err := q.Querier.SendBatch(ctx, b); err != nil {
		return err
	}
	// A statement after a batch that ended its transaction is refused.
	if _, err := q.Querier.Exec(ctx, `SELECT 1`); errors.Is(err, database.ErrTxEnded) {
		q.c.ended.Add(1)
	}
	return nil
}

// tripApp is a use case App over a fresh database whose repositories
// count their trips.
func tripApp(t *testing.T, engine database.Engine) (*usecase.App, *tripCounter) {
	t.Helper()
	db := dbtest.Open(t, engine, "agent", store.Migrations())
	trips := &tripCounter{}
	open := func(q database.Querier) usecase.Repos { return repos(countingQ{Querier: q, c: trips}) }
	var n atomic.Int64
	return usecase.New(db, open, usecase.Config{Clock: clock.NewFake(start), Seed: 42, Ideas: &fakeIdeas{},
		NewID: func() string { return fmt.Sprintf("task-%04d", n.Add(1)) }}), trips
}

// TestTaskWritesAreFewTrips: a create is one batch of the task, its
// counters and rollup; a PATCH that completes a task of an idea is its
// locked read and one batch of the task, the counters, rollups and the
// outbox row. Each write's last batch ends its transaction (on Postgres it
// carries the COMMIT, and the first trip the BEGIN).
func TestTaskWritesAreFewTrips(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		app, trips := tripApp(t, engine)

		// A known prompt variant, so the create samples none (a read).
		tk, err := app.Create(ctx, usecase.NewTask{Direction: "write the spec", Type: "spec",
			Context: map[string]any{"idea_id": "idea-1", "prompt_variant": "v1"}})
		require.NoError(t, err)
		before, ended := trips.n.Load(), trips.ended.Load()
		_, err = app.Create(ctx, usecase.NewTask{Direction: "write it", Type: "spec",
			Context: map[string]any{"idea_id": "idea-2", "prompt_variant": "v1"}})
		require.NoError(t, err)
		require.Equal(t, int64(1), trips.n.Load()-before, "create: the task and its counters in one batch")
		require.Equal(t, int64(1), trips.ended.Load()-ended, "create: the batch ends the transaction")

		before, ended = trips.n.Load(), trips.ended.Load()
		_, err = app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		require.NoError(t, err)
		require.Equal(t, int64(2), trips.n.Load()-before, "a claim: the locked read, then one batch")
		require.Equal(t, int64(1), trips.ended.Load()-ended, "a claim: its batch ends the transaction")

		// A task with a prompt variant also records its outcome when it
		// finishes (a read of its arm): count one without.
		tk3, err := app.Create(ctx, usecase.NewTask{Direction: "build it", Type: "impl", Context: map[string]any{"idea_id": "idea-3"}})
		require.NoError(t, err)
		_, err = app.Update(ctx, tk3.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		require.NoError(t, err)
		before, ended = trips.n.Load(), trips.ended.Load()
		done, err := app.Update(ctx, tk3.ID, usecase.Patch{Status: ptr("completed"), WorkerID: ptr("w1"), Output: ptr("built")})
		require.NoError(t, err)
		require.Equal(t, "completed", string(done.Status))
		require.Equal(t, int64(2), trips.n.Load()-before,
			"completing: the locked read, then the task, counters, rollups and outbox in one batch")
		require.Equal(t, int64(1), trips.ended.Load()-ended, "completing: its batch ends the transaction")
	})
}

// TestMetricsIsOneTrip: once its closed days are cached, a metrics report
// reads the open days' histogram and rollup and, when they are few, the
// exact durations in one trip.
func TestMetricsIsOneTrip(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		app, trips := tripApp(t, engine)
		tk, err := app.Create(ctx, usecase.NewTask{Direction: "build it", Type: "impl", Context: map[string]any{"prompt_variant": "v1"}})
		require.NoError(t, err)
		_, err = app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
		require.NoError(t, err)
		_, err = app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("completed"), WorkerID: ptr("w1"), Output: ptr("built")})
		require.NoError(t, err)

		_, err = app.Metrics(ctx, nil) // fills the closed days' cache
		require.NoError(t, err)
		before := trips.n.Load()
		m, err := app.Metrics(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, int64(1), trips.n.Load()-before, "one trip")
		require.True(t, m.Exact, "the one duration, read in that trip")
		require.Equal(t, 1, m.Samples)
	})
}

// Package storetest is the agent repositories' conformance suite: every
// engine's implementation must pass it. The repositories open no
// transactions, so the suite writes inside db.Tx as the use cases do; the
// use cases' own composite behaviour (a claim's counters, a reap's
// rollups) is tested in the usecase package, on every engine too.
//
// One file per topic: tasks.go (insert, read, save, lists and the reads
// of the reports), claim.go (NextPending and Lock: the claim's order and
// its exclusion), reap.go (expired leases), outbox.go (idea
// advancements), lease.go (the pipeline loop's lease over the agent's
// leases table), loop.go (the loop's passes), stats.go (counters and
// rollups) and prompts.go (the prompt A/B records); held.go holds the
// helpers of the cases where two transactions overlap (Postgres).
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Harness is what the suite runs against: an empty, migrated database and
// the constructors of the repositories over a querier.
type Harness struct {
	DB      *database.DB
	Tasks   func(q database.Querier) store.Tasks
	Stats   func(q database.Querier) store.Stats
	Prompts func(q database.Querier) store.Prompts
	Outbox  func(q database.Querier) store.Outbox
	Loop    func(q database.Querier) store.LoopPasses
}

// repos are the repositories over one querier.
type repos struct {
	tasks   store.Tasks
	stats   store.Stats
	prompts store.Prompts
	outbox  store.Outbox
	loop    store.LoopPasses
}

func (h Harness) over(q database.Querier) repos {
	return repos{tasks: h.Tasks(q), stats: h.Stats(q), prompts: h.Prompts(q), outbox: h.Outbox(q), loop: h.Loop(q)}
}

// read returns the repositories over the pool.
func (h Harness) read() repos { return h.over(h.DB) }

// write runs fn in one transaction, as a use case does.
func (h Harness) write(fn func(r repos) error) error {
	return h.DB.Tx(context.Background(), func(q database.Querier) error { return fn(h.over(q)) })
}

// Run runs the suite, a subtest per topic; newHarness returns a harness
// over an empty database for one case.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	for _, topic := range []struct {
		name string
		run  func(t *testing.T, newHarness func(t *testing.T) Harness)
	}{
		{"tasks", runTasks},
		{"claim", runClaim},
		{"reap", runReap},
		{"retry", runRetry},
		{"outbox", runOutbox},
		{"lease", runLease},
		{"loop", runLoop},
		{"stats", runStats},
		{"prompts", runPrompts},
	} {
		t.Run(topic.name, func(t *testing.T) {
			t.Parallel()
			topic.run(t, newHarness)
		})
	}
}

// base is the suite's clock: times are stored to the microsecond.
var base = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// at is base plus d.
func at(d time.Duration) time.Time { return base.Add(d) }

// pending is a pending API task of type typ created at created.
func pending(id string, typ task.Type, created time.Time) store.Task {
	return store.Task{
		ID: id, Direction: "direction of " + id, Type: typ, Status: task.Pending, Model: "model", Executor: "codex",
		Tier: "balanced", Command: "codex exec " + id, Context: `{}`, Source: store.SourceAPI,
		CreatedAt: created, UpdatedAt: created,
	}
}

// insert stores tasks, each in its own transaction.
func insert(t *testing.T, h Harness, tasks ...store.Task) {
	t.Helper()
	for _, tk := range tasks {
		require.NoError(t, h.write(func(r repos) error { return r.tasks.Insert(context.Background(), tk) }), tk.ID)
	}
}

// running is t claimed by worker at now with a lease of lease, as the
// claim use case saves it (usecase.claimed).
func running(t store.Task, worker string, lease time.Duration, now time.Time) store.Task {
	t.Status = task.Running
	t.WorkerID = worker
	t.ClaimedBy = "token-" + worker
	t.Attempts++
	t.StartedAt = now
	t.LeaseSeconds = int(lease / time.Second)
	t.LeaseExpiresAt = now.Add(lease)
	t.UpdatedAt = now
	return t
}

// get reads a task over the pool.
func get(t *testing.T, h Harness, id string) store.Task {
	t.Helper()
	got, err := h.read().tasks.Get(context.Background(), id)
	require.NoError(t, err, id)
	return got
}

// ids are the tasks' ids, in order.
func ids(ts []store.Task) []string {
	out := make([]string, len(ts))
	for i, tk := range ts {
		out[i] = tk.ID
	}
	return out
}

// isNotFound reports whether err is the repositories' ErrNotFound.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

func ptr[T any](v T) *T { return &v }

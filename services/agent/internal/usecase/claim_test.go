package usecase_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestClaimOldestOfTypes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		spec1 := e.create(t, "spec", nil)
		e.clock.Advance(time.Second)
		impl1 := e.create(t, "impl", nil)
		e.clock.Advance(time.Second)
		e.create(t, "spec", nil)

		got, ok, err := e.app.Claim(ctx, task.Reporter{}, "w1", []string{"impl", "test"}, ptr(60), nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, impl1.ID, got.ID)
		require.Equal(t, task.Running, got.Status)
		require.Equal(t, "w1", got.WorkerID)
		require.Equal(t, 1, got.Attempts)
		require.Equal(t, 60, got.LeaseSeconds)
		require.Equal(t, start.Add(2*time.Second+time.Minute), got.LeaseExpiresAt)

		_, ok, err = e.app.Claim(ctx, task.Reporter{}, "w2", []string{"impl"}, nil, nil)
		require.NoError(t, err)
		require.False(t, ok, "no pending impl task is left")

		got, ok, err = e.app.Claim(ctx, task.Reporter{}, "w2", nil, nil, nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, spec1.ID, got.ID, "any type: the oldest pending task")
		require.Equal(t, start.Add(2*time.Second+usecase.DefaultLease), got.LeaseExpiresAt, "the configured lease")

		for _, bad := range []struct {
			worker string
			types  []string
			lease  *int
		}{{"", nil, nil}, {"w", []string{"dance"}, nil}, {"w", nil, ptr(0)}, {"w", nil, ptr(86401)}} {
			_, _, err := e.app.Claim(ctx, task.Reporter{}, bad.worker, bad.types, bad.lease, nil)
			requireKind(t, fault.Invalid, err)
		}
	})
}

// TestConcurrentClaimsNeverShareATask has 16 workers claim from 200 tasks
// at once: every task is handed out exactly once.
func TestConcurrentClaimsNeverShareATask(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		const tasks, workers = 200, 16
		for i := range tasks {
			e.create(t, []string{"spec", "impl", "test", "review"}[i%4], nil)
		}
		var (
			mu     sync.Mutex
			byTask = map[string][]string{}
			errs   []error
			wg     sync.WaitGroup
		)
		for w := range workers {
			worker := fmt.Sprintf("worker-%02d", w)
			wg.Go(func() {
				for {
					tk, ok, err := e.app.Claim(ctx, task.Reporter{}, worker, nil, ptr(300), nil)
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else if ok {
						byTask[tk.ID] = append(byTask[tk.ID], worker)
					}
					mu.Unlock()
					if err != nil || !ok {
						return
					}
				}
			})
		}
		wg.Wait()
		require.Empty(t, errs)
		require.Len(t, byTask, tasks, "every task was claimed")
		for id, ws := range byTask {
			require.Len(t, ws, 1, "task %s was handed to %v", id, ws)
		}
		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, tasks, counts.ByStatus[task.Running])
		require.Equal(t, 0, counts.ByStatus[task.Pending])
		running, err := e.app.List(ctx, usecase.ListQuery{Status: "running", Limit: ptr(500)})
		require.NoError(t, err)
		require.Len(t, running.Tasks, tasks)
		for _, tk := range running.Tasks {
			require.Equal(t, byTask[tk.ID][0], tk.WorkerID)
		}
	})
}

// TestLeaseExpiry runs a claim's lease out on the fake clock: the reaper
// returns the task to the queue twice and times it out on the third expiry.
func TestLeaseExpiry(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, func(c *usecase.Config) { c.Lease = time.Minute })
		ctx := context.Background()
		tk := e.create(t, "impl", map[string]any{"prompt_variant": "v1"})
		reap := func() (int, int) {
			t.Helper()
			r, err := e.app.Reap(ctx)
			require.NoError(t, err)
			return r.Requeued, r.TimedOut
		}

		claimed, ok, err := e.app.Claim(ctx, task.Reporter{}, "w1", nil, nil, nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, start.Add(time.Minute), claimed.LeaseExpiresAt)
		e.clock.Advance(59 * time.Second)
		r, to := reap()
		require.Equal(t, [2]int{0, 0}, [2]int{r, to}, "the lease holds until it expires")
		beat := e.patch(t, tk.ID, usecase.Patch{ProgressPct: ptr(50.0), WorkerID: ptr("w1")})
		require.Equal(t, start.Add(119*time.Second), beat.LeaseExpiresAt, "the heartbeat renewed the lease")
		e.clock.Advance(61 * time.Second)
		r, to = reap()
		require.Equal(t, [2]int{1, 0}, [2]int{r, to})
		back, err := e.app.Get(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, task.Pending, back.Status)
		require.Empty(t, back.WorkerID)
		require.True(t, back.LeaseExpiresAt.IsZero())
		require.Equal(t, 1, back.Attempts)
		r, to = reap()
		require.Equal(t, [2]int{0, 0}, [2]int{r, to}, "reaping again changes nothing")

		for attempt := 2; attempt <= 3; attempt++ {
			got, ok, err := e.app.Claim(ctx, task.Reporter{}, fmt.Sprintf("w%d", attempt), nil, nil, nil)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, attempt, got.Attempts)
			e.clock.Advance(2 * time.Minute)
			r, to = reap()
			if attempt < 3 {
				require.Equal(t, [2]int{1, 0}, [2]int{r, to})
			} else {
				require.Equal(t, [2]int{0, 1}, [2]int{r, to})
			}
		}
		out, err := e.app.Get(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, task.TimedOut, out.Status)
		require.Equal(t, task.CategoryTimeout, out.ErrorCategory)
		require.Equal(t, "the worker's lease expired on its last attempt", out.ErrorSummary)
		require.Equal(t, "w3", out.WorkerID)
		finished := start.Add(59*time.Second + 61*time.Second + 4*time.Minute)
		require.Equal(t, finished, out.CompletedAt)
		require.InDelta(t, 120.0, *out.Duration, 1e-9, "from the last claim")

		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts.ByStatus[task.TimedOut])
		require.Equal(t, 0, counts.ByStatus[task.Running])
		require.Equal(t, 0, counts.ByStatus[task.Pending])
		stats, err := e.app.PromptABStats(ctx)
		require.NoError(t, err)
		require.Len(t, stats, 1)
		require.Equal(t, 1, stats[0].Arm.Samples, "a timeout is an outcome of the variant")
		require.InDelta(t, 0.0, stats[0].Arm.SumValue, 0)
		_, err = e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("completed"), WorkerID: ptr("w3")})
		requireKind(t, fault.Conflict, err)
	})
}

// TestConcurrentReapers has several replicas reap the same expired leases
// at once: each task is reaped exactly once and the counters stay exact.
func TestConcurrentReapers(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		const tasks = 40
		for range tasks {
			e.create(t, "test", nil)
			_, ok, err := e.app.Claim(ctx, task.Reporter{}, "w", nil, ptr(10), nil)
			require.NoError(t, err)
			require.True(t, ok)
		}
		e.clock.Advance(time.Minute)
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			total int
			errs  []error
		)
		for range 4 {
			wg.Go(func() {
				r, err := e.app.Reap(ctx)
				mu.Lock()
				defer mu.Unlock()
				total += r.Requeued
				if err != nil {
					errs = append(errs, err)
				}
			})
		}
		wg.Wait()
		require.Empty(t, errs)
		require.Equal(t, tasks, total)
		counts, err := e.app.Count(ctx)
		require.NoError(t, err)
		require.Equal(t, tasks, counts.ByStatus[task.Pending])
		require.Equal(t, 0, counts.ByStatus[task.Running])
	})
}

// TestOnlyTheClaimerReports: a task claimed with one credential is that
// credential's: another worker's token cannot complete or fail it, even
// naming the same worker_id or none; with the claimer's (shared) token a
// worker names itself, and only the claiming worker reports; an operator
// can; a reaped task is free again.
func TestOnlyTheClaimerReports(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, func(c *usecase.Config) { c.Lease = time.Minute })
		ctx := context.Background()
		alice, bob := task.Reporter{ID: "token-alice"}, task.Reporter{ID: "token-bob"}
		operator := task.Reporter{ID: "token-op", Operator: true}
		tk := e.create(t, "impl", nil)

		_, err := e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("completed"), By: bob})
		require.Equal(t, fault.Forbidden, fault.KindOf(err), "an unclaimed task is claimed first: %v", err)

		got, ok, err := e.app.Claim(ctx, alice, "w1", nil, nil, nil)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, "token-alice", got.ClaimedBy)

		for _, p := range []usecase.Patch{
			{Status: ptr("completed"), By: bob},
			{Status: ptr("completed"), WorkerID: ptr("w1"), By: bob},
			{Status: ptr("failed"), ErrorSummary: ptr("x"), By: bob},
			{ProgressPct: ptr(10.0), By: bob},
		} {
			_, err := e.app.Update(ctx, tk.ID, p)
			require.Equal(t, fault.Forbidden, fault.KindOf(err), "%v", err)
		}
		still, err := e.app.Get(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, task.Running, still.Status, "the refused patches wrote nothing")
		require.Zero(t, still.ProgressPct)

		beat, err := e.app.Update(ctx, tk.ID, usecase.Patch{ProgressPct: ptr(50.0), WorkerID: ptr("w1"), By: alice})
		require.NoError(t, err)
		require.Equal(t, 50.0, beat.ProgressPct)

		// A fleet sharing alice's token: the credential is the claimer's,
		// so only worker_id says which worker holds the task. A PATCH
		// naming none completed another worker's task before; now it is a
		// 422 naming the field, and another worker's id is a conflict.
		_, err = e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("completed"), By: alice})
		requireKind(t, fault.Invalid, err)
		require.ErrorContains(t, err, "worker_id: is required of a worker reporting on a running task: name the worker that claimed it (w1)")
		_, err = e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("completed"), WorkerID: ptr("w9"), By: alice})
		requireKind(t, fault.Conflict, err)
		still, err = e.app.Get(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, task.Running, still.Status, "neither finished it")

		// The lease runs out: the task is pending and anyone's to claim.
		e.clock.Advance(2 * time.Minute)
		_, err = e.app.Reap(ctx)
		require.NoError(t, err)
		back, err := e.app.Get(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, task.Pending, back.Status)
		require.Empty(t, back.ClaimedBy)
		got, err = e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w2"), By: bob})
		require.NoError(t, err)
		require.Equal(t, "token-bob", got.ClaimedBy)
		_, err = e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("completed"), WorkerID: ptr("w2"), By: alice})
		require.Equal(t, fault.Forbidden, fault.KindOf(err))

		done, err := e.app.Update(ctx, tk.ID, usecase.Patch{Status: ptr("completed"), By: operator})
		require.NoError(t, err, "an operator reports on any task")
		require.Equal(t, task.Completed, done.Status)
	})
}

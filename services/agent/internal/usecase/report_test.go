package usecase_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/attention"
	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestCompletionAdvancesTheIdeaOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		tk := e.create(t, "spec", map[string]any{"idea_id": "idea-7"})
		plain := e.create(t, "spec", nil)
		failing := e.create(t, "impl", map[string]any{"idea_id": "idea-7"})
		e.run(t, plain.ID, "completed", time.Second)
		e.run(t, failing.ID, "failed", time.Second)
		e.run(t, tk.ID, "completed", time.Second)
		e.patch(t, tk.ID, usecase.Patch{Status: ptr("completed")})

		select {
		case <-e.app.Wake():
		default:
			t.Fatal("a queued advancement wakes the deliverer")
		}
		n, err := e.app.DeliverOutbox(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Equal(t, []advanceCall{{"idea-7", "spec", tk.ID}}, e.ideas.Calls(), "only the completed task of an idea advances it")
		it, err := e.app.OutboxItem(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, e.clock.Now(), it.DeliveredAt)
		require.Equal(t, 1, it.Attempts)
		require.Empty(t, it.LastError)

		n, err = e.app.DeliverOutbox(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 0, n)
		require.NoError(t, e.app.DeliverTask(ctx, tk.ID), "delivering a delivered item again does nothing")
		require.Len(t, e.ideas.Calls(), 1, "delivered exactly once")
	})
}

func TestOutboxRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		tk := e.create(t, "impl", map[string]any{"idea_id": "idea-1"})
		e.ideas.fail(fault.New(fault.Unavailable, "portfolio down"))
		e.run(t, tk.ID, "completed", time.Second)
		for attempt, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
			n, err := e.app.DeliverOutbox(ctx, 10)
			require.NoError(t, err)
			require.Equal(t, 0, n)
			it, err := e.app.OutboxItem(ctx, tk.ID)
			require.NoError(t, err)
			require.Equal(t, attempt+1, it.Attempts)
			require.Contains(t, it.LastError, "portfolio down")
			require.True(t, it.DeliveredAt.IsZero())
			require.Equal(t, e.clock.Now().Add(wait), it.NextAttemptAt)
			n, err = e.app.DeliverOutbox(ctx, 10)
			require.NoError(t, err)
			require.Equal(t, 0, n)
			require.Len(t, e.ideas.Calls(), attempt+1, "not retried before its backoff")
			e.clock.Advance(wait)
		}
		require.Equal(t, 5*time.Minute, usecase.Backoff(20))

		e.ideas.fail(nil)
		n, err := e.app.DeliverOutbox(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		it, err := e.app.OutboxItem(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, 4, it.Attempts)
		require.False(t, it.DeliveredAt.IsZero())
		require.Empty(t, it.LastError)

		gone := e.create(t, "spec", map[string]any{"idea_id": "no-such-idea"})
		e.ideas.fail(fault.New(fault.NotFound, "idea no-such-idea not found"))
		e.run(t, gone.ID, "completed", time.Second)
		require.NoError(t, e.app.DeliverTask(ctx, gone.ID))
		it, err = e.app.OutboxItem(ctx, gone.ID)
		require.NoError(t, err)
		require.False(t, it.DeliveredAt.IsZero(), "an unknown idea is settled: nothing to retry")
		require.Contains(t, it.LastError, "not found")

		other := e.create(t, "spec", map[string]any{"idea_id": "idea-2"})
		e.ideas.fail(errors.New("connection reset"))
		e.run(t, other.ID, "completed", time.Second)
		requireKind(t, fault.Unavailable, e.app.DeliverTask(ctx, other.ID))
	})
}

func TestPipelineStatusFlags(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		s, err := e.app.PipelineStatus(ctx)
		require.NoError(t, err)
		require.Nil(t, s.LongestPending)
		require.Nil(t, s.SuccessRate)
		require.Equal(t, []string{}, s.Flags.Names)

		first := e.create(t, "spec", nil)
		e.clock.Advance(10*time.Minute + time.Second)
		s, err = e.app.PipelineStatus(ctx)
		require.NoError(t, err)
		require.Equal(t, 601*time.Second, *s.LongestPending)
		require.True(t, s.Flags.Stuck)
		require.Equal(t, []string{attention.Stuck}, s.Flags.Names)

		_, _, err = e.app.Claim(ctx, task.Reporter{}, "w", nil, nil, nil)
		require.NoError(t, err)
		second := e.create(t, "impl", nil)
		s, err = e.app.PipelineStatus(ctx)
		require.NoError(t, err)
		require.False(t, s.Flags.Stuck, "something is running")
		require.Equal(t, time.Duration(0), *s.LongestPending)

		e.patch(t, first.ID, usecase.Patch{Status: ptr("failed"), Output: ptr("boom")})
		e.patch(t, second.ID, usecase.Patch{Status: ptr("failed"), Output: ptr("boom")})
		s, err = e.app.PipelineStatus(ctx)
		require.NoError(t, err)
		require.False(t, s.Flags.RepeatedFailures, "two failures are not a streak of three")
		third := e.create(t, "impl", nil)
		e.patch(t, third.ID, usecase.Patch{Status: ptr("failed"), Output: ptr("boom")})
		s, err = e.app.PipelineStatus(ctx)
		require.NoError(t, err)
		require.True(t, s.Flags.RepeatedFailures)
		require.Equal(t, []string{attention.RepeatedFailures}, s.Flags.Names)
		require.InDelta(t, 0.0, *s.SuccessRate, 0)
		require.False(t, s.Flags.LowSuccessRate, "fewer than 10 finished tasks")

		for range 7 {
			tk := e.create(t, "test", nil)
			e.patch(t, tk.ID, usecase.Patch{Status: ptr("completed")})
		}
		s, err = e.app.PipelineStatus(ctx)
		require.NoError(t, err)
		require.False(t, s.Flags.RepeatedFailures)
		require.InDelta(t, 0.7, *s.SuccessRate, 1e-9)
		require.True(t, s.Flags.LowSuccessRate)
		require.Equal(t, []string{attention.LowSuccessRate}, s.Flags.Names)
		require.Equal(t, 7, s.Counts.ByStatus["completed"])
		require.Equal(t, 10, s.Counts.Total)

		e.clock.Advance(8 * 24 * time.Hour)
		s, err = e.app.PipelineStatus(ctx)
		require.NoError(t, err)
		require.Nil(t, s.SuccessRate, "the window moved past every finished task")
		require.False(t, s.Flags.LowSuccessRate)
	})
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		old := e.create(t, "spec", nil)
		e.run(t, old.ID, "completed", 1000*time.Second)
		e.clock.Advance(8 * 24 * time.Hour)

		for i, d := range []time.Duration{10, 20, 30, 40} {
			typ := "impl"
			if i == 3 {
				typ = "spec"
			}
			tk := e.create(t, typ, nil)
			status := "completed"
			if i == 1 {
				status = "failed"
			}
			e.run(t, tk.ID, status, d*time.Second)
		}
		costly := e.create(t, "review", nil)
		e.patch(t, costly.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w")})
		e.clock.Advance(50 * time.Second)
		e.patch(t, costly.ID, usecase.Patch{Status: ptr("completed"), ValueScore: ptr(3.0), ResourceCost: ptr(1.5)})
		e.create(t, "impl", nil)

		m, err := e.app.Metrics(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, 7, m.WindowDays)
		require.Equal(t, 5, m.Samples, "the task of 8 days ago is outside the window")
		require.True(t, m.Exact)
		require.Equal(t, time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC), m.Since, "whole UTC days: the 7 before today and today")
		require.InDelta(t, 30.0, *m.P50, 1e-9)
		require.InDelta(t, 48.0, *m.P95, 1e-9, "40 + 0.8 × (50 − 40)")
		require.Equal(t, 4, m.Overall.Completed)
		require.Equal(t, 1, m.Overall.Failed)
		require.InDelta(t, 0.8, m.Overall.Value(), 1e-9)
		require.Equal(t, 2, m.ByType["impl"].Completed)
		require.Equal(t, 1, m.ByType["impl"].Failed)
		require.Equal(t, 1, m.ByType["spec"].Completed)
		require.Equal(t, 2, m.ByExecutor["codex"].Completed)
		require.Equal(t, 1, m.ByExecutor["codex"].Failed)
		require.Equal(t, 1, m.ByModel["claude-sonnet-4-5"].Completed)
		require.Equal(t, 6, m.Usage.TasksCreated)
		require.Equal(t, 5, m.Usage.TasksFinished)
		require.InDelta(t, 150.0, m.Usage.DurationSeconds, 1e-9)
		require.InDelta(t, 3.0, m.Usage.ValueScore, 1e-9)
		require.InDelta(t, 1.5, m.Usage.ResourceCost, 1e-9)
		require.Equal(t, map[string]int{"codex": 4, "claude": 2}, m.Usage.ByExecutor)

		wide, err := e.app.Metrics(ctx, ptr(30))
		require.NoError(t, err)
		require.Equal(t, 6, wide.Samples)
		require.Equal(t, 7, wide.Usage.TasksCreated)
		require.InDelta(t, 762.5, *wide.P95, 1e-9, "50 + 0.75 × (1000 − 50)")

		for _, bad := range []int{0, 366, -1} {
			_, err := e.app.Metrics(ctx, ptr(bad))
			requireKind(t, fault.Invalid, err)
		}
		empty := setup(t, engine)
		none, err := empty.app.Metrics(ctx, ptr(1))
		require.NoError(t, err)
		require.Nil(t, none.P50)
		require.Nil(t, none.P95)
		require.Equal(t, 0, none.Samples)
	})
}

// TestMetricsFromTheHistogram makes the exact sample smaller than the
// window, so the percentiles come from the duration histogram: within its
// 2 % of the exact answer, and the window's day boundary holds.
func TestMetricsFromTheHistogram(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, func(c *usecase.Config) { c.ExactSample = 3 })
		ctx := context.Background()
		// Finishes at 23:59:59 the day before the 1-day window: outside.
		e.at(time.Date(2026, 3, 3, 23, 59, 59, 0, time.UTC).Add(-1000 * time.Second))
		early := e.create(t, "spec", nil)
		e.run(t, early.ID, "completed", 1000*time.Second)
		// Finishes on the window's first instant: inside.
		e.at(time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC).Add(-10 * time.Second))
		first := e.create(t, "spec", nil)
		e.run(t, first.ID, "completed", 10*time.Second)
		e.at(time.Date(2026, 3, 5, 12, 0, 0, 0, time.UTC))
		for _, d := range []time.Duration{20, 30, 40, 50} {
			tk := e.create(t, "impl", nil)
			e.run(t, tk.ID, "completed", d*time.Second)
		}

		m, err := e.app.Metrics(ctx, ptr(1))
		require.NoError(t, err)
		require.Equal(t, time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC), m.Since)
		require.False(t, m.Exact, "5 durations are more than the exact sample of 3")
		require.Equal(t, 5, m.Samples)
		require.InEpsilon(t, 30.0, *m.P50, 0.02, "exact: 30")
		require.InEpsilon(t, 48.0, *m.P95, 0.02, "exact: 40 + 0.8 × (50 − 40)")
		require.Equal(t, 5, m.Overall.Completed, "the rates' window is the histogram's")

		wide, err := e.app.Metrics(ctx, ptr(2))
		require.NoError(t, err)
		require.Equal(t, 6, wide.Samples)
		require.InEpsilon(t, 762.5, *wide.P95, 0.02, "exact: 50 + 0.75 × (1000 − 50)")
	})
}

// TestMetricsCacheClosedDays shows the closed-days cache at work: rows a
// day gains within ClosingGrace after its end are seen; rows it gains
// later are not (the day was summed once when it closed) until the next
// day closes and every window is summed again. The rows are written
// straight into the histogram, as nothing in the service writes a closed
// day.
func TestMetricsCacheClosedDays(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, func(c *usecase.Config) { c.ExactSample = 1 })
		ctx := context.Background()
		day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
		lateRow := func(seconds float64) {
			t.Helper()
			_, err := e.db.Exec(ctx, `INSERT INTO task_durations (day, bucket, n) VALUES ($1, $2, 1)
				ON CONFLICT (day, bucket) DO UPDATE SET n = task_durations.n + 1`,
				database.Micros(day), metrics.BucketOf(seconds))
			require.NoError(t, err)
		}
		samples := func() (int, int) {
			t.Helper()
			m, err := e.app.Metrics(ctx, ptr(2))
			require.NoError(t, err)
			return m.Samples, m.Overall.Completed
		}
		first := e.create(t, "spec", nil)
		e.run(t, first.ID, "completed", 10*time.Second) // on day, at 09:30

		e.at(day.Add(24*time.Hour + usecase.ClosingGrace - time.Minute))
		lateRow(20)
		n, done := samples()
		require.Equal(t, 2, n, "within the grace the day is still read")
		require.Equal(t, 1, done)

		e.at(day.Add(24*time.Hour + usecase.ClosingGrace + time.Minute))
		n, _ = samples()
		require.Equal(t, 2, n)
		lateRow(30)
		n, _ = samples()
		require.Equal(t, 2, n, "a closed day was summed once")

		next := e.create(t, "impl", nil)
		e.run(t, next.ID, "completed", 40*time.Second)
		n, done = samples()
		require.Equal(t, 3, n, "the open day is read live")
		require.Equal(t, 2, done)

		e.at(day.Add(48*time.Hour + usecase.ClosingGrace + time.Minute))
		n, done = samples()
		require.Equal(t, 4, n, "the next closing sums the window again")
		require.Equal(t, 2, done)
	})
}

func TestPromptAB(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		// One attempt each: a failure is the task's outcome at once.
		e := setup(t, engine, func(c *usecase.Config) { c.Variants, c.MaxAttempts = []string{"alpha", "beta"}, 1 })
		ctx := context.Background()

		first := e.create(t, "spec", nil)
		require.Equal(t, "alpha", first.PromptVariant, "exploration: fewest samples, then by name")
		e.run(t, first.ID, "failed", time.Second)
		second := e.create(t, "spec", nil)
		require.Equal(t, "beta", second.PromptVariant)
		e.patch(t, second.ID, usecase.Patch{Status: ptr("completed"), ValueScore: ptr(2.0), ResourceCost: ptr(4.0)})
		for range 2 {
			tk := e.create(t, "spec", map[string]any{"prompt_variant": "alpha"})
			e.run(t, tk.ID, "failed", time.Second)
		}
		given := e.create(t, "spec", map[string]any{"prompt_variant": "gamma"})
		require.Equal(t, "gamma", given.PromptVariant)
		e.patch(t, given.ID, usecase.Patch{Status: ptr("completed"), ResourceCost: ptr(1.0)})
		e.patch(t, given.ID, usecase.Patch{Status: ptr("completed")})

		stats, err := e.app.PromptABStats(ctx)
		require.NoError(t, err)
		var names []string
		for _, v := range stats {
			names = append(names, v.Arm.Variant)
		}
		require.Equal(t, []string{"gamma", "beta", "alpha"}, names, "best ROI first: 1.0, 0.5, then no ROI")
		gamma, beta, alpha := stats[0], stats[1], stats[2]
		require.Equal(t, 1, gamma.Arm.Samples, "a repeated completion records no second outcome")
		require.InDelta(t, 1.0, gamma.Arm.SumValue, 0, "a completion without a score is worth 1")
		require.InDelta(t, 1.0, gamma.ROI, 1e-9)
		require.InDelta(t, 0.5, beta.ROI, 1e-9)
		require.Zero(t, alpha.ROI, "nothing spent: an ROI of 0")
		require.False(t, alpha.Spent)
		require.Equal(t, 3, alpha.Arm.Samples)
		require.True(t, alpha.Blocked, "its first three outcomes were zero")
		require.False(t, alpha.Exploring)
		require.InDelta(t, 0.0, alpha.Probability, 0)
		require.True(t, beta.Exploring)
		require.False(t, beta.Blocked)
		require.InDelta(t, 1.0, beta.Probability+gamma.Probability, 1e-9)
		require.InDelta(t, 1.0, beta.Probability, 0, "exploration goes to the fewest samples first (beta and gamma tie at 1: by name)")

		again, err := e.app.PromptABStats(ctx)
		require.NoError(t, err)
		require.Equal(t, stats, again, "a seeded source gives the same answer")

		next := e.create(t, "spec", nil)
		require.Equal(t, "beta", next.PromptVariant, "never the blocked variant")
	})
}

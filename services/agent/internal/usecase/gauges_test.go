package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// TestGaugesReadTheQueue: the queue's gauges follow the status counters,
// the oldest pending task and the undelivered idea advancements.
func TestGaugesReadTheQueue(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		gauges := func() usecase.QueueGauges {
			t.Helper()
			g, err := e.app.Gauges(ctx)
			require.NoError(t, err)
			return g
		}
		g := gauges()
		require.Len(t, g.Counts.ByStatus, len(task.Statuses), "every status, zeros included")
		require.Zero(t, g.Counts.Total)
		require.True(t, g.OldestPending.IsZero())
		require.Zero(t, g.Outbox.Items)

		first := e.create(t, "impl", map[string]any{"idea_id": "idea-1"})
		e.clock.Advance(time.Minute)
		e.create(t, "test", nil)
		e.clock.Advance(time.Minute)
		g = gauges()
		require.Equal(t, 2, g.Counts.ByStatus[task.Pending])
		require.Equal(t, first.CreatedAt, g.OldestPending)
		require.Equal(t, 2*time.Minute, g.At.Sub(g.OldestPending))

		e.ideas.fail(context.DeadlineExceeded) // the portfolio does not answer
		e.run(t, first.ID, "completed", time.Second)
		_, err := e.app.DeliverOutbox(ctx, 10)
		require.NoError(t, err)
		e.clock.Advance(time.Minute)
		g = gauges()
		require.Equal(t, 1, g.Counts.ByStatus[task.Pending])
		require.Equal(t, 1, g.Counts.ByStatus[task.Completed])
		require.Equal(t, start.Add(time.Minute), g.OldestPending, "the second task waits now")
		require.Equal(t, int64(1), g.Outbox.Items, "the advancement waits for a retry")
		require.Equal(t, time.Minute, g.At.Sub(g.Outbox.Oldest), "aged from the task's completion")

		e.ideas.fail(nil)
		e.clock.Advance(time.Hour)
		_, err = e.app.DeliverOutbox(ctx, 10)
		require.NoError(t, err)
		g = gauges()
		require.Zero(t, g.Outbox.Items)
		require.True(t, g.Outbox.Oldest.IsZero())
	})
}

// TestClaimsAndReapsAreCounted: every claim this process commits counts
// once (a claim, a PATCH to running, a task created claimed; not an answer
// replayed for an Idempotency-Key), and every reaped lease counts under
// the status its task went to.
func TestClaimsAndReapsAreCounted(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		reg := prometheus.NewRegistry()
		e := setup(t, engine, func(c *usecase.Config) { c.Lease, c.MaxAttempts, c.Metrics = time.Minute, 2, reg })
		ctx := context.Background()
		counted := func() (claims, requeued, timedOut float64) {
			t.Helper()
			families, err := reg.Gather()
			require.NoError(t, err)
			for _, f := range families {
				for _, m := range f.GetMetric() {
					switch {
					case f.GetName() == "foundry_agent_task_claims_total":
						claims = m.GetCounter().GetValue()
					case f.GetName() == "foundry_agent_lease_reaps_total" && m.GetLabel()[0].GetValue() == "pending":
						requeued = m.GetCounter().GetValue()
					case f.GetName() == "foundry_agent_lease_reaps_total" && m.GetLabel()[0].GetValue() == "timed_out":
						timedOut = m.GetCounter().GetValue()
					}
				}
			}
			return claims, requeued, timedOut
		}
		requireCounted := func(claims, requeued, timedOut float64, msg string) {
			t.Helper()
			c, r, to := counted()
			require.Equal(t, [3]float64{claims, requeued, timedOut}, [3]float64{c, r, to}, msg)
		}
		requireCounted(0, 0, 0, "every series from the start")

		a := e.create(t, "impl", nil)
		key := &idempotency.Request{Scope: "claim:any", Key: "k1", Hash: "h1"}
		_, ok, err := e.app.Claim(ctx, task.Reporter{}, "w1", nil, nil, key)
		require.NoError(t, err)
		require.True(t, ok)
		requireCounted(1, 0, 0, "a claim")
		_, _, err = e.app.Claim(ctx, task.Reporter{}, "w1", nil, nil, key)
		require.NoError(t, err)
		requireCounted(1, 0, 0, "a replayed answer claims nothing")
		_, ok, err = e.app.Claim(ctx, task.Reporter{}, "w2", nil, nil, nil)
		require.NoError(t, err)
		require.False(t, ok)
		requireCounted(1, 0, 0, "nothing pending: nothing claimed")

		e.clock.Advance(2 * time.Minute)
		_, err = e.app.Reap(ctx)
		require.NoError(t, err)
		requireCounted(1, 1, 0, "back to pending")

		e.patch(t, a.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w3")})
		requireCounted(2, 1, 0, "a PATCH to running claims")
		e.patch(t, a.ID, usecase.Patch{ProgressPct: ptr(10.0), WorkerID: ptr("w3")})
		requireCounted(2, 1, 0, "a heartbeat does not")
		e.clock.Advance(2 * time.Minute)
		_, err = e.app.Reap(ctx)
		require.NoError(t, err)
		requireCounted(2, 1, 1, "out of attempts: timed out")

		_, err = e.app.Create(ctx, usecase.NewTask{Direction: "run it here", Type: "impl", ClaimedBy: "pipeline-loop", Lease: time.Hour})
		require.NoError(t, err)
		requireCounted(3, 1, 1, "created claimed")
	})
}

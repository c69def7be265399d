package storetest

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// runStats checks the counters and rollups every status change maintains:
// their sums, their keys (the UTC day, the hour) and their windows.
func runStats(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("status counters add their deltas; only the non-zero ones are listed, in order", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		add := func(deltas ...store.Count) {
			t.Helper()
			require.NoError(t, h.write(func(r repos) error { return r.stats.AddCounts(ctx, deltas) }))
		}
		counts := func() []store.Count {
			t.Helper()
			got, err := h.read().stats.Counts(ctx)
			require.NoError(t, err)
			var queued []store.Count
			b := &database.Batch{}
			h.read().stats.QueueCounts(b, &queued)
			require.NoError(t, h.DB.SendBatch(ctx, b))
			require.Equal(t, got, queued, "Counts and its queued read agree")
			return got
		}
		require.Empty(t, counts())
		require.NotNil(t, counts(), "none: empty, not nil")

		add(store.Count{Status: task.Running, Type: task.Spec, N: 1}, store.Count{Status: task.Pending, Type: task.Impl, N: 2},
			store.Count{Status: task.Pending, Type: task.Spec, N: 0})
		add(store.Count{Status: task.Pending, Type: task.Impl, N: 3})
		require.Equal(t, []store.Count{
			{Status: task.Pending, Type: task.Impl, N: 5},
			{Status: task.Running, Type: task.Spec, N: 1},
		}, counts(), "summed per status and type, by status then type; a zero delta writes nothing")

		add(store.Count{Status: task.Pending, Type: task.Impl, N: -5}, store.Count{Status: task.Completed, Type: task.Impl, N: 5})
		require.Equal(t, []store.Count{
			{Status: task.Completed, Type: task.Impl, N: 5},
			{Status: task.Running, Type: task.Spec, N: 1},
		}, counts(), "a counter back at zero is not listed")
	})

	t.Run("the daily rollup adds into the UTC day of each change and sums a window of days by route", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
		add := func(d store.Daily) {
			t.Helper()
			require.NoError(t, h.write(func(r repos) error { return r.stats.AddDaily(ctx, d) }))
		}
		route := func(at time.Time, typ task.Type, model string) store.Daily {
			return store.Daily{Day: at, Type: typ, Model: model, Executor: "codex"}
		}
		created := route(day.Add(9*time.Hour), task.Impl, "m1")
		created.Created = 2
		add(created)
		done := route(day.Add(23*time.Hour+59*time.Minute), task.Impl, "m1")
		done.Completed, done.DurationSum, done.ValueSum, done.CostSum = 1, 60.5, 0.75, 0.25
		done.TokensIn, done.TokensOut, done.CostUSD, done.UsageTasks = 12000, 3000, 0.081, 1
		add(done)
		// 01:00 on March 3 in UTC+14 is 11:00 on March 2 in UTC.
		east := route(time.Date(2026, 3, 3, 1, 0, 0, 0, time.FixedZone("UTC+14", 14*3600)), task.Impl, "m1")
		east.Failed, east.TimedOut = 1, 1
		add(east)
		other := route(day.Add(12*time.Hour), task.Spec, "m2")
		other.Created, other.Completed = 1, 1
		add(other)
		next := route(day.Add(24*time.Hour), task.Impl, "m1") // the next day
		next.Created, next.Completed = 4, 3
		add(next)

		between := func(from, to time.Time) []store.Daily {
			t.Helper()
			got, err := h.read().stats.DailyBetween(ctx, from, to)
			require.NoError(t, err)
			return got
		}
		require.Equal(t, []store.Daily{
			{Type: task.Impl, Model: "m1", Executor: "codex", Created: 2, Completed: 1, Failed: 1, TimedOut: 1,
				DurationSum: 60.5, ValueSum: 0.75, CostSum: 0.25, TokensIn: 12000, TokensOut: 3000, CostUSD: 0.081, UsageTasks: 1},
			{Type: task.Spec, Model: "m2", Executor: "codex", Created: 1, Completed: 1},
		}, between(day, day.Add(24*time.Hour)), "one day: its changes summed by type, model and executor; the next day is outside")
		require.Equal(t, []store.Daily{
			{Type: task.Impl, Model: "m1", Executor: "codex", Created: 6, Completed: 4, Failed: 1, TimedOut: 1,
				DurationSum: 60.5, ValueSum: 0.75, CostSum: 0.25, TokensIn: 12000, TokensOut: 3000, CostUSD: 0.081, UsageTasks: 1},
			{Type: task.Spec, Model: "m2", Executor: "codex", Created: 1, Completed: 1},
		}, between(day, day.Add(48*time.Hour)), "two days: one row per route, Day zero")
		require.Equal(t, []store.Daily{{Type: task.Impl, Model: "m1", Executor: "codex", Created: 4, Completed: 3}},
			between(day.Add(time.Hour), day.Add(48*time.Hour)), "a day counts in a window when its midnight does")
		empty := between(day.Add(72*time.Hour), day.Add(96*time.Hour))
		require.NotNil(t, empty)
		require.Empty(t, empty)

		byDay, err := h.read().stats.DailyByDay(ctx, day, day.Add(72*time.Hour))
		require.NoError(t, err)
		require.Equal(t, []store.Daily{
			{Day: day, Created: 3, Completed: 2, Failed: 1, TimedOut: 1, DurationSum: 60.5, ValueSum: 0.75, CostSum: 0.25,
				TokensIn: 12000, TokensOut: 3000, CostUSD: 0.081, UsageTasks: 1},
			{Day: day.Add(24 * time.Hour), Created: 4, Completed: 3},
		}, byDay, "per day, every route together, only the days with rows")
	})

	t.Run("finished counts add into their hour and sum the hours since a time", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		hour := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
		add := func(at time.Time, f store.Finished) {
			t.Helper()
			require.NoError(t, h.write(func(r repos) error { return r.stats.AddFinished(ctx, at, f) }))
		}
		add(hour.Add(30*time.Minute), store.Finished{Completed: 1})
		add(hour.Add(59*time.Minute+59*time.Second), store.Finished{Failed: 1})
		add(hour.Add(time.Hour), store.Finished{Completed: 2})
		add(hour.Add(3*time.Hour+time.Minute), store.Finished{Completed: 1, Failed: 4})
		since := func(from time.Time) store.Finished {
			t.Helper()
			var got store.Finished
			b := &database.Batch{}
			h.read().stats.QueueFinishedSince(b, from, &got)
			require.NoError(t, h.DB.SendBatch(ctx, b))
			return got
		}
		require.Equal(t, store.Finished{Completed: 4, Failed: 5}, since(hour))
		require.Equal(t, store.Finished{Completed: 3, Failed: 4}, since(hour.Add(time.Minute)),
			"an hour counts when it starts at or after since")
		require.Equal(t, store.Finished{Completed: 3, Failed: 4}, since(hour.Add(time.Hour)))
		require.Equal(t, store.Finished{Completed: 1, Failed: 4}, since(hour.Add(2*time.Hour)))
		require.Equal(t, store.Finished{}, since(hour.Add(4*time.Hour)), "none: zero")
	})

	t.Run("the duration histogram counts by UTC day and bucket and sums a window by bucket", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
		add := func(at time.Time, seconds float64) {
			t.Helper()
			require.NoError(t, h.write(func(r repos) error { return r.stats.AddDuration(ctx, at, metrics.BucketOf(seconds)) }))
		}
		add(day.Add(time.Hour), 60)
		add(day.Add(23*time.Hour), 60)
		add(day.Add(2*time.Hour), 0.0005)
		add(day.Add(3*time.Hour), 3600)
		add(day.Add(25*time.Hour), 60)
		between := func(from, to time.Time) []metrics.Bucket {
			t.Helper()
			got, err := h.read().stats.DurationsBetween(ctx, from, to)
			require.NoError(t, err)
			return got
		}
		minute, hourLong := metrics.BucketOf(60), metrics.BucketOf(3600)
		require.Equal(t, []metrics.Bucket{{Index: 0, N: 1}, {Index: minute, N: 2}, {Index: hourLong, N: 1}},
			between(day, day.Add(24*time.Hour)), "ascending buckets")
		require.Equal(t, []metrics.Bucket{{Index: 0, N: 1}, {Index: minute, N: 3}, {Index: hourLong, N: 1}},
			between(day, day.Add(48*time.Hour)))
		require.Equal(t, []metrics.Bucket{{Index: minute, N: 1}}, between(day.Add(time.Second), day.Add(48*time.Hour)))
		byDay, err := h.read().stats.DurationsByDay(ctx, day, day.Add(48*time.Hour))
		require.NoError(t, err)
		require.Equal(t, []store.DayBucket{
			{Day: day, Bucket: metrics.Bucket{Index: 0, N: 1}}, {Day: day, Bucket: metrics.Bucket{Index: minute, N: 2}},
			{Day: day, Bucket: metrics.Bucket{Index: hourLong, N: 1}},
			{Day: day.Add(24 * time.Hour), Bucket: metrics.Bucket{Index: minute, N: 1}},
		}, byDay, "by day, then ascending bucket")
		empty := between(day.Add(48*time.Hour), day.Add(72*time.Hour))
		require.NotNil(t, empty)
		require.Empty(t, empty)
	})

	t.Run("failures are counted by category with how many were diagnosed", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		got, err := h.read().stats.Failures(ctx)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
		for _, f := range []struct {
			category  string
			diagnosed bool
		}{{task.CategoryTimeout, true}, {task.CategoryUnknown, false}, {task.CategoryTimeout, false}, {task.CategoryTimeout, true}} {
			require.NoError(t, h.write(func(r repos) error { return r.stats.AddFailure(ctx, f.category, f.diagnosed) }))
		}
		got, err = h.read().stats.Failures(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.FailureCount{
			{Category: task.CategoryTimeout, Failed: 3, Diagnosed: 2},
			{Category: task.CategoryUnknown, Failed: 1, Diagnosed: 0},
		}, got, "by category")
	})

	t.Run("an idea's failures count up until a success ends them", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		send := func(queue func(r repos, b *database.Batch)) {
			t.Helper()
			b := &database.Batch{}
			queue(h.read(), b)
			require.NoError(t, h.DB.SendBatch(ctx, b))
		}
		send(func(r repos, b *database.Batch) {
			r.stats.QueueIdeaFailed(b, "idea-1", at(time.Second), "429 rate limited")
		})
		send(func(r repos, b *database.Batch) { r.stats.QueueIdeaFailed(b, "idea-1", at(time.Minute), "429 again") })
		send(func(r repos, b *database.Batch) { r.stats.QueueIdeaFailed(b, "idea-2", at(time.Hour), "timeout") })
		got, err := h.read().stats.IdeaFailures(ctx, []string{"idea-1", "idea-2", "idea-3"})
		require.NoError(t, err)
		require.Equal(t, map[string]store.IdeaFailures{
			"idea-1": {Failures: 2, LastAt: at(time.Minute), LastError: "429 again"},
			"idea-2": {Failures: 1, LastAt: at(time.Hour), LastError: "timeout"},
		}, got, "in a row, the last one's time and summary; an idea not failing is absent")

		send(func(r repos, b *database.Batch) { r.stats.QueueIdeaSucceeded(b, "idea-1") })
		got, err = h.read().stats.IdeaFailures(ctx, []string{"idea-1", "idea-2"})
		require.NoError(t, err)
		require.Equal(t, []string{"idea-2"}, slices.Collect(maps.Keys(got)), "a success ends the run")
		none, err := h.read().stats.IdeaFailures(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, none)
	})
}

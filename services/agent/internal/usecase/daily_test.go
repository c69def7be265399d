package usecase_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// TestDailyMetrics: the series has every day of the window, oldest first,
// with the tasks created and finished each day, the day's success rate
// (none on a day nothing finished) and its P50/P95 within the duration
// buckets of the tasks that finished that day.
func TestDailyMetrics(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		a, b := e.create(t, "impl", nil), e.create(t, "test", nil)
		e.run(t, a.ID, "completed", 10*time.Second)
		e.run(t, b.ID, "failed", 20*time.Second)
		e.at(start.Add(48 * time.Hour)) // two days on
		c := e.create(t, "impl", nil)
		e.run(t, c.ID, "completed", 30*time.Second)

		days, err := e.app.DailyMetrics(ctx, ptr(int32(4)))
		require.NoError(t, err)
		require.Len(t, days, 4)
		day0 := start.Truncate(24 * time.Hour)
		for i, d := range days {
			require.Equal(t, day0.AddDate(0, 0, i-1), d.Day, "day %d", i)
		}
		require.Zero(t, days[0].Created, "the day before: nothing")
		require.False(t, days[0].HasRate)

		first := days[1]
		require.Equal(t, [4]int64{2, 1, 1, 0}, [4]int64{first.Created, first.Completed, first.Failed, first.TimedOut})
		require.True(t, first.HasRate)
		require.InDelta(t, 0.5, first.SuccessRate, 1e-9)
		require.True(t, first.HasTimes)
		lo, _ := metrics.BucketBounds(metrics.BucketOf(10))
		_, hi := metrics.BucketBounds(metrics.BucketOf(20))
		require.GreaterOrEqual(t, first.P50, lo)
		require.LessOrEqual(t, first.P95, hi)
		require.LessOrEqual(t, first.P50, first.P95)

		require.Zero(t, days[2].Created+days[2].Completed, "an idle day is there, with zeros")
		require.False(t, days[2].HasRate)
		require.False(t, days[2].HasTimes)

		last := days[3]
		require.Equal(t, [4]int64{1, 1, 0, 0}, [4]int64{last.Created, last.Completed, last.Failed, last.TimedOut})
		require.InDelta(t, 1.0, last.SuccessRate, 1e-9)

		all, err := e.app.DailyMetrics(ctx, nil)
		require.NoError(t, err)
		require.Len(t, all, 30, "the default window")
		for _, bad := range []int32{0, 367} {
			_, err := e.app.DailyMetrics(ctx, &bad)
			fe, ok := fault.As(err)
			require.True(t, ok)
			require.Equal(t, "days", fe.Fields[0].Field)
		}
	})
}

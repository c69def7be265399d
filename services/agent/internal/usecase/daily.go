package usecase

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// The daily series' window, in days.
const (
	DefaultDailyDays = 30
	MaxDailyDays     = 366
)

// Day is one UTC day of the pipeline's trend: the tasks created and
// finished that day, the success rate of those finished (Completed over
// Completed, Failed and TimedOut; HasRate false when none finished), and
// the P50 and P95 of their execution times from the day's duration
// histogram (HasTimes false when none was timed).
type Day struct {
	Day                                  time.Time
	Created, Completed, Failed, TimedOut int64
	SuccessRate                          float64
	HasRate                              bool
	P50, P95                             float64
	HasTimes                             bool
}

// DailyMetrics returns the last days UTC days, today included and oldest
// first, every day present (an idle day with zeros). It reads the rollups
// the tasks' transactions keep (task_daily, task_durations): at most one
// row per day and one per day and duration bucket, so its cost follows
// the window, never the number of tasks.
func (a *App) DailyMetrics(ctx context.Context, days *int32) ([]Day, error) {
	n := int32(DefaultDailyDays)
	if days != nil {
		if *days < 1 || *days > MaxDailyDays {
			return nil, fault.Validation(fault.Field("days", "must be between 1 and %d", MaxDailyDays))
		}
		n = *days
	}
	today := a.now().UTC().Truncate(24 * time.Hour)
	from, to := today.AddDate(0, 0, -int(n-1)), today.AddDate(0, 0, 1)
	r := a.read()
	rolled, err := r.Stats.DailyByDay(ctx, from, to)
	if err != nil {
		return nil, wrap("read the daily metrics", err)
	}
	hists, err := r.Stats.DurationsByDay(ctx, from, to)
	if err != nil {
		return nil, wrap("read the daily metrics", err)
	}
	out := make([]Day, n)
	index := func(t time.Time) int { return int(t.Sub(from) / (24 * time.Hour)) }
	for i := range out {
		out[i].Day = from.AddDate(0, 0, i)
	}
	for _, d := range rolled {
		if i := index(d.Day); i >= 0 && i < len(out) {
			o := &out[i]
			o.Created, o.Completed, o.Failed, o.TimedOut = d.Created, d.Completed, d.Failed, d.TimedOut
			if finished := d.Completed + d.Failed + d.TimedOut; finished > 0 {
				o.SuccessRate, o.HasRate = float64(d.Completed)/float64(finished), true
			}
		}
	}
	byDay := map[int][]metrics.Bucket{}
	for _, b := range hists {
		if i := index(b.Day); i >= 0 && i < len(out) {
			byDay[i] = append(byDay[i], b.Bucket)
		}
	}
	for i, buckets := range byDay {
		p50, ok := metrics.HistogramPercentile(buckets, 50)
		p95, _ := metrics.HistogramPercentile(buckets, 95)
		out[i].P50, out[i].P95, out[i].HasTimes = p50, p95, ok
	}
	return out, nil
}

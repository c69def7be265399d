package usecase

import (
	"context"
	"sync"
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
	// Spent is the usage the day's finished tasks reported.
	Spent Spent
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
	// A day's rows stop changing once it has closed (closedUntil): closed
	// days come from the cache, read from the rollups once per day, and
	// each call reads only the open day (or two, within the grace), so its
	// cost stays flat however many tasks the rollups have counted.
	closed := closedUntil(a.now())
	if closed.Before(from) {
		closed = from
	}
	if closed.After(to) {
		closed = to
	}
	out := make([]Day, 0, n)
	cached, missing := a.closedDaily.get(from, closed)
	if missing.Before(closed) {
		read, err := a.readDays(ctx, missing, closed)
		if err != nil {
			return nil, err
		}
		a.closedDaily.put(read)
		cached, _ = a.closedDaily.get(from, closed)
	}
	out = append(out, cached...)
	open, err := a.readDays(ctx, closed, to)
	if err != nil {
		return nil, err
	}
	return append(out, open...), nil
}

// readDays computes the days [from, to) from the rollups: at most one row
// per day, and one per day and duration bucket.
func (a *App) readDays(ctx context.Context, from, to time.Time) ([]Day, error) {
	if !from.Before(to) {
		return nil, nil
	}
	r := a.read()
	rolled, err := r.Stats.DailyByDay(ctx, from, to)
	if err != nil {
		return nil, wrap("read the daily metrics", err)
	}
	hists, err := r.Stats.DurationsByDay(ctx, from, to)
	if err != nil {
		return nil, wrap("read the daily metrics", err)
	}
	out := make([]Day, int(to.Sub(from)/(24*time.Hour)))
	index := func(t time.Time) int { return int(t.Sub(from) / (24 * time.Hour)) }
	for i := range out {
		out[i].Day = from.AddDate(0, 0, i)
	}
	for _, d := range rolled {
		if i := index(d.Day); i >= 0 && i < len(out) {
			o := &out[i]
			o.Created, o.Completed, o.Failed, o.TimedOut = d.Created, d.Completed, d.Failed, d.TimedOut
			o.Spent.add(d)
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

// dailyCache holds the closed days of the daily series by their midnight.
// It is derived data: a restart or another replica reads them again.
// MaxDailyDays bounds it, older days being dropped as they leave every
// window.
type dailyCache struct {
	mu   sync.Mutex
	days map[time.Time]Day
}

// get returns the cached days of [from, until) in order, and the first
// day from there on that is missing (until when none is).
func (c *dailyCache) get(from, until time.Time) ([]Day, time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Day
	for d := from; d.Before(until); d = d.AddDate(0, 0, 1) {
		day, ok := c.days[d]
		if !ok {
			return out, d
		}
		out = append(out, day)
	}
	return out, until
}

// put caches closed days, forgetting those older than any window reaches.
func (c *dailyCache) put(days []Day) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.days == nil {
		c.days = map[time.Time]Day{}
	}
	for _, d := range days {
		c.days[d.Day] = d
	}
	if len(days) > 0 {
		oldest := days[len(days)-1].Day.AddDate(0, 0, -MaxDailyDays)
		for d := range c.days {
			if d.Before(oldest) {
				delete(c.days, d)
			}
		}
	}
}

package usecase

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// ClosingGrace is how long after a UTC midnight the day before still
// counts as open: a task finishing just before midnight is written by a
// transaction that may commit just after, and replicas' clocks differ a
// little. Past it, a day's rows no longer change.
const ClosingGrace = 10 * time.Minute

// windowSums is what a metrics window reads from the daily rows: the
// duration histogram and the rollup by route.
type windowSums struct {
	hist  []metrics.Bucket
	daily []store.Daily
}

// closedDays caches the sums of metrics windows over closed days. A
// finishing task writes the rows of the day it finishes in, so a day's
// rows stop changing once it has closed (ClosingGrace after its end): a
// window's closed days are summed once per day and window start, and each
// report reads only the open days' rows (one day, or two within the
// grace), however long the window and however many tasks it holds. The
// cache is derived data: a restart or another replica recomputes it.
type closedDays struct {
	mu    sync.Mutex
	until time.Time                // the closed days end here (exclusive)
	sums  map[time.Time]windowSums // by window start
	group singleflight.Group       // one computation per window at a time
}

// closedUntil is where the closed days end at now: today's midnight, or
// yesterday's within ClosingGrace of today's.
func closedUntil(now time.Time) time.Time {
	return now.UTC().Add(-ClosingGrace).Truncate(24 * time.Hour)
}

// windowSums returns the sums of the window starting at since (a UTC
// midnight) up to now: the closed days' from the cache (computed on a
// miss), the open days' read now. With durations not nil it also reads the
// durations of the window's finished tasks into it when the window counts
// at most a.cfg.ExactSample of them (none otherwise), in the same trip as
// the open days' rows: the read's own condition counts them, since it
// cannot wait for the histogram it is sent with.
func (a *App) windowSums(ctx context.Context, r Repos, since time.Time, durations *[]float64) (windowSums, error) {
	until := closedUntil(a.now())
	if until.Before(since) {
		until = since
	}
	closed, err := a.closedSums(ctx, r, since, until)
	if err != nil {
		return windowSums{}, err
	}
	far := until.AddDate(1, 0, 0) // past any open day
	var (
		b     database.Batch
		hist  []metrics.Bucket
		daily []store.Daily
	)
	r.Stats.QueueDurationsBetween(&b, until, far, &hist)
	r.Stats.QueueDailyBetween(&b, until, far, &daily)
	if durations != nil {
		var counted int64
		for _, k := range closed.hist {
			counted += k.N
		}
		r.Tasks.QueueDurations(&b, since, a.cfg.ExactSample, &store.FewDurations{Counted: counted, From: until, To: far}, durations)
	}
	if err := r.Send(ctx, &b); err != nil {
		return windowSums{}, err
	}
	return windowSums{hist: mergeBuckets(closed.hist, hist), daily: mergeDaily(closed.daily, daily)}, nil
}

// closedSums returns the sums of the closed days [since, until).
func (a *App) closedSums(ctx context.Context, r Repos, since, until time.Time) (windowSums, error) {
	if !since.Before(until) {
		return windowSums{}, nil
	}
	c := &a.closed
	c.mu.Lock()
	if !c.until.Equal(until) { // a day closed: every window moved
		c.until, c.sums = until, map[time.Time]windowSums{}
	}
	sums, ok := c.sums[since]
	c.mu.Unlock()
	if ok {
		return sums, nil
	}
	key := since.Format(time.RFC3339) + "/" + until.Format(time.RFC3339)
	v, err, _ := c.group.Do(key, func() (any, error) {
		// Shared by every caller waiting on it: one caller giving up
		// must not fail the others.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		hist, err := r.Stats.DurationsBetween(ctx, since, until)
		if err != nil {
			return nil, err
		}
		daily, err := r.Stats.DailyBetween(ctx, since, until)
		if err != nil {
			return nil, err
		}
		sums := windowSums{hist: hist, daily: daily}
		c.mu.Lock()
		if c.until.Equal(until) {
			c.sums[since] = sums
		}
		c.mu.Unlock()
		return sums, nil
	})
	if err != nil {
		return windowSums{}, err
	}
	return v.(windowSums), nil
}

// mergeBuckets sums two histograms, in ascending bucket order.
func mergeBuckets(x, y []metrics.Bucket) []metrics.Bucket {
	n := map[int]int64{}
	for _, b := range slices.Concat(x, y) {
		n[b.Index] += b.N
	}
	out := make([]metrics.Bucket, 0, len(n))
	for _, i := range slices.Sorted(maps.Keys(n)) {
		out = append(out, metrics.Bucket{Index: i, N: n[i]})
	}
	return out
}

// mergeDaily sums two rollups by type, model and executor.
func mergeDaily(x, y []store.Daily) []store.Daily {
	type route struct{ typ, model, executor string }
	sum := map[route]store.Daily{}
	for _, d := range slices.Concat(x, y) {
		k := route{string(d.Type), d.Model, d.Executor}
		s, ok := sum[k]
		if !ok {
			s = store.Daily{Type: d.Type, Model: d.Model, Executor: d.Executor}
		}
		s.Created += d.Created
		s.Completed += d.Completed
		s.Failed += d.Failed
		s.TimedOut += d.TimedOut
		s.DurationSum += d.DurationSum
		s.ValueSum += d.ValueSum
		s.CostSum += d.CostSum
		s.TokensIn += d.TokensIn
		s.TokensOut += d.TokensOut
		s.CostUSD += d.CostUSD
		s.UsageTasks += d.UsageTasks
		sum[k] = s
	}
	out := slices.Collect(maps.Values(sum))
	slices.SortFunc(out, func(p, q store.Daily) int {
		return cmp.Or(cmp.Compare(p.Type, q.Type), cmp.Compare(p.Model, q.Model), cmp.Compare(p.Executor, q.Executor))
	})
	return out
}

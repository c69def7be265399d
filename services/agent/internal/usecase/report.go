package usecase

import (
	"cmp"
	"context"
	"math"
	"slices"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/attention"
	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// windowStart is where a window of length d ending at now starts: rounded
// down to the hour, the rollup's granularity, so a window covers between
// d and d plus one hour.
func windowStart(now time.Time, d time.Duration) time.Time { return now.Add(-d).Truncate(time.Hour) }

// failedish reports whether a finished status counts as a failure in
// success rates and failure streaks (failed and timed_out).
func failedish(s task.Status) bool { return s == task.Failed || s == task.TimedOut }

// PipelineStatus is the queue by status and its attention flags.
type PipelineStatus struct {
	Counts Counts
	// LongestPending is the oldest pending task's wait; nil when none.
	LongestPending *time.Duration
	// Window is the success rate's rolling window; SuccessRate is nil when
	// nothing finished in it.
	Window      attention.Config
	Completed   int
	Failed      int
	SuccessRate *float64
	Flags       attention.Flags
	GeneratedAt time.Time
}

// PipelineStatus reports the queue. Every read is bounded whatever the
// number of tasks: the counters, the oldest pending task (an index), the
// last FailureStreak finished tasks (an index) and the window's hours of
// finished counts (one row per hour), sent as one batch.
func (a *App) PipelineStatus(ctx context.Context) (PipelineStatus, error) {
	r := a.read()
	now := a.now()
	cfg := a.cfg.Attention
	// The reads are independent: one batch, one round trip on Postgres.
	var (
		counts []store.Count
		oldest time.Time
		ok     bool
		last   []task.Status
		fin    store.Finished
		batch  database.Batch
	)
	r.Stats.QueueCounts(&batch, &counts)
	r.Tasks.QueueOldestPending(&batch, &oldest, &ok)
	if cfg.FailureStreak > 0 {
		r.Tasks.QueueLastFinished(&batch, cfg.FailureStreak, &last)
	}
	r.Stats.QueueFinishedSince(&batch, windowStart(now, cfg.Window), &fin)
	if err := r.Send(ctx, &batch); err != nil {
		return PipelineStatus{}, wrap("pipeline status", err)
	}
	c := countsOf(counts)
	q := attention.Queue{Pending: c.ByStatus[task.Pending], Running: c.ByStatus[task.Running]}
	if ok {
		q.OldestPending = oldest
	}
	for _, s := range last {
		q.LastFinished = append(q.LastFinished, failedish(s))
	}
	q.WindowCompleted, q.WindowFailed = int(fin.Completed), int(fin.Failed)
	out := PipelineStatus{Counts: c, Window: cfg, Completed: q.WindowCompleted, Failed: q.WindowFailed, GeneratedAt: now}
	out.Flags = attention.Judge(cfg, q, now)
	if ok {
		wait := out.Flags.LongestWait
		out.LongestPending = &wait
	}
	if n := q.WindowCompleted + q.WindowFailed; n > 0 {
		rate := float64(q.WindowCompleted) / float64(n)
		out.SuccessRate = &rate
	}
	return out, nil
}

// Metrics window bounds, in days.
const (
	DefaultWindowDays = 7
	MaxWindowDays     = 365
)

// Metrics are the execution metrics of a window.
type Metrics struct {
	WindowDays int
	// Since is where the window starts: the UTC midnight WindowDays days
	// before the report's day.
	Since time.Time
	// P50 and P95 are nil when no finished task in the window has a
	// duration; Samples is how many durations they describe, and Exact
	// whether they were computed from the durations themselves (up to
	// ExactSample of them) or from the duration histogram.
	P50, P95 *float64
	Samples  int
	Exact    bool
	Overall  metrics.Rate
	// ByType, ByModel and ByExecutor are keyed by the slice's value.
	ByType, ByModel, ByExecutor map[string]metrics.Rate
	Usage                       Usage
}

// Usage is what the pipeline used in the window.
type Usage struct {
	TasksCreated    int
	TasksFinished   int
	DurationSeconds float64
	ResourceCost    float64
	ValueScore      float64
	// ByModel and ByExecutor count the tasks created in the window.
	ByModel, ByExecutor map[string]int
	// Spent is the usage the window's finished tasks reported, in all and
	// by model.
	Spent        Spent
	SpentByModel map[string]Spent
}

// Spent is the tokens and money tasks spent, and how many tasks reported
// them.
type Spent struct {
	Tasks     int64
	TokensIn  int64
	TokensOut int64
	CostUSD   float64
}

func (s *Spent) add(d store.Daily) {
	s.Tasks += d.UsageTasks
	s.TokensIn += d.TokensIn
	s.TokensOut += d.TokensOut
	s.CostUSD = round6(s.CostUSD + d.CostUSD)
}

// round6 is a dollar sum to the micro-dollar, without its addition's
// noise.
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// metricsSince is where a metrics window of days starts: whole UTC days,
// the rollup's and the histogram's granularity, so a window covers the
// days before today in full plus today so far.
func metricsSince(now time.Time, days int) time.Time {
	return now.UTC().Truncate(24*time.Hour).AddDate(0, 0, -days)
}

// Metrics reports the window of windowDays (DefaultWindowDays when nil;
// 1..MaxWindowDays). Every read is bounded whatever the number of tasks:
// the window's duration histogram and daily rollup (buckets and routes
// rows of the open days, the closed days' sums cached: see closedDays);
// when the histogram counts at most ExactSample durations, those
// durations themselves (an index-only range), so the percentiles are
// exact. Success rates and usage are exact for any number of tasks. A
// timed-out task counts as a failure.
func (a *App) Metrics(ctx context.Context, windowDays *int) (Metrics, error) {
	days := DefaultWindowDays
	if windowDays != nil {
		days = *windowDays
		if days < 1 || days > MaxWindowDays {
			return Metrics{}, fault.Validation(fault.Field("window_days", "must be between 1 and %d", MaxWindowDays))
		}
	}
	r := a.read()
	since := metricsSince(a.now(), days)
	out := Metrics{WindowDays: days, Since: since, Overall: metrics.Rate{Key: "overall"},
		ByType: map[string]metrics.Rate{}, ByModel: map[string]metrics.Rate{}, ByExecutor: map[string]metrics.Rate{},
		Usage: Usage{ByModel: map[string]int{}, ByExecutor: map[string]int{}, SpentByModel: map[string]Spent{}}}
	var durations []float64
	sums, err := a.windowSums(ctx, r, since, &durations)
	if err != nil {
		return Metrics{}, wrap("metrics", err)
	}
	percentiles(sums.hist, durations, a.cfg.ExactSample, &out)
	add := func(m map[string]metrics.Rate, key string, h store.Daily) {
		rt := m[key]
		rt.Key = key
		rt.Completed += int(h.Completed)
		rt.Failed += int(h.Failed + h.TimedOut)
		m[key] = rt
	}
	for _, h := range sums.daily {
		out.Overall.Completed += int(h.Completed)
		out.Overall.Failed += int(h.Failed + h.TimedOut)
		if h.Completed+h.Failed+h.TimedOut > 0 {
			add(out.ByType, string(h.Type), h)
			add(out.ByModel, h.Model, h)
			add(out.ByExecutor, h.Executor, h)
		}
		u := &out.Usage
		u.TasksCreated += int(h.Created)
		u.TasksFinished += int(h.Completed + h.Failed + h.TimedOut)
		u.DurationSeconds += h.DurationSum
		u.ResourceCost += h.CostSum
		u.ValueScore += h.ValueSum
		if h.Created > 0 {
			u.ByModel[h.Model] += int(h.Created)
			u.ByExecutor[h.Executor] += int(h.Created)
		}
		if h.UsageTasks > 0 {
			u.Spent.add(h)
			m := u.SpentByModel[h.Model]
			m.add(h)
			u.SpentByModel[h.Model] = m
		}
	}
	return out, nil
}

// percentiles fills the P50, P95, Samples and Exact of m from the
// window's duration histogram hist and, when the histogram counts at most
// exact, from durations, the window's tasks' (windowSums): the exact rule.
// A task finishing between the two reads may add one duration, or leave
// the durations read empty (the histogram's rule then): the limit keeps
// the read bounded all the same. Fewer durations than the histogram
// counts means the window reaches past the finished tasks' retention
// (PruneFinishedTasks): the histogram, which keeps them all, answers.
func percentiles(hist []metrics.Bucket, durations []float64, exact int, m *Metrics) {
	var n int64
	for _, b := range hist {
		n += b.N
	}
	if n == 0 {
		return
	}
	if n <= int64(exact) && int64(len(durations)) >= n {
		slices.Sort(durations)
		p50, p95 := metrics.PercentileSorted(durations, 50), metrics.PercentileSorted(durations, 95)
		m.P50, m.P95, m.Samples, m.Exact = &p50, &p95, len(durations), true
		return
	}
	p50, _ := metrics.HistogramPercentile(hist, 50)
	p95, _ := metrics.HistogramPercentile(hist, 95)
	m.P50, m.P95, m.Samples = &p50, &p95, int(n)
}

// VariantStats is one prompt variant's report.
type VariantStats struct {
	Arm abtest.Arm
	// ROI is Σvalue / Σcost; 0 when nothing was spent (Spent false), so
	// every variant has one, as the contract promises.
	ROI         float64
	Spent       bool
	Probability float64
	Blocked     bool
	Exploring   bool
	// TaskType and Version are the stored prompt's of the variant's name,
	// its newest version ("" and 0 for a label-only variant); its
	// Probability is among its task type's prompts.
	TaskType task.Type
	Version  int
}

// PromptABStats reports every known variant, best ROI first (variants
// that spent nothing last, then by name). Selection probabilities are
// estimated with abtest.Probabilities from a source seeded by the
// configured seed, so the same records give the same answer, each among
// the variants a task could be given with it (probabilities).
func (a *App) PromptABStats(ctx context.Context) ([]VariantStats, error) {
	arms, err := a.arms(ctx)
	if err != nil {
		return nil, wrap("prompt A/B statistics", err)
	}
	stored, err := a.read().Prompts.LatestPrompts(ctx, "")
	if err != nil {
		return nil, wrap("prompt A/B statistics", err)
	}
	byName := map[string]store.Prompt{}
	for _, p := range stored { // a stored prompt no task used yet is a variant with no samples
		byName[p.Name] = p
		if !slices.ContainsFunc(arms, func(x abtest.Arm) bool { return x.Variant == p.Name }) {
			arms = append(arms, abtest.Arm{Variant: p.Name})
		}
	}
	probs := a.probabilities(arms, byName)
	out := make([]VariantStats, 0, len(arms))
	for _, arm := range arms {
		v := VariantStats{Arm: arm, Probability: probs[arm.Variant], Blocked: arm.Blocked(),
			Exploring: !arm.Blocked() && arm.Samples < abtest.ExploreBelow,
			TaskType:  byName[arm.Variant].Type, Version: byName[arm.Variant].Version}
		v.ROI, v.Spent = arm.ROI()
		out = append(out, v)
	}
	slices.SortStableFunc(out, func(x, y VariantStats) int {
		switch {
		case x.Spent && !y.Spent:
			return -1
		case !x.Spent && y.Spent:
			return 1
		case x.ROI != y.ROI:
			return cmp.Compare(y.ROI, x.ROI)
		}
		return cmp.Compare(x.Arm.Variant, y.Arm.Variant)
	})
	return out, nil
}

// Diagnostics measures diagnostics over every failed task.
type Diagnostics struct {
	TotalFailed     int
	WithDiagnostics int
	// MissingPct is 0..100; 0 when nothing failed.
	MissingPct float64
	// ByCategory has the five categories, zeros included, and any other
	// category recorded.
	ByCategory map[string]int
}

// Diagnostics reads the failure counters.
func (a *App) Diagnostics(ctx context.Context) (Diagnostics, error) {
	fs, err := a.read().Stats.Failures(ctx)
	if err != nil {
		return Diagnostics{}, wrap("diagnostics completeness", err)
	}
	out := Diagnostics{ByCategory: map[string]int{}}
	for _, c := range []string{task.CategoryTimeout, task.CategoryExecutorCrash, task.CategoryProviderError,
		task.CategoryValidationFailure, task.CategoryUnknown} {
		out.ByCategory[c] = 0
	}
	for _, f := range fs {
		cat := f.Category
		if cat == "" {
			cat = task.CategoryUnknown
		}
		out.ByCategory[cat] += int(f.Failed)
		out.TotalFailed += int(f.Failed)
		out.WithDiagnostics += int(f.Diagnosed)
	}
	if out.TotalFailed > 0 {
		out.MissingPct = float64(out.TotalFailed-out.WithDiagnostics) / float64(out.TotalFailed) * 100
	}
	return out, nil
}

package sqlcore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// ---------------------------------------------------------------------------
// 6. GET /api/agent/pipeline-status
//
// Mirrors agent handler.GetPipelineStatus → usecase.App.PipelineStatus
// (usecase/report.go): sqlstore.Stats.Counts, sqlstore.Tasks.OldestPending,
// sqlstore.Tasks.LastFinished(3) and sqlstore.Stats.FinishedSince(the 7-day
// window rounded down to the hour), judged by attention.Judge with
// attention.Defaults. One round trip: the four reads in one batch (Foundry
// sends them one after the other on the pool).

const (
	sqlCounts        = `SELECT status, task_type, n FROM agent.task_counts WHERE n <> 0 ORDER BY status, task_type`
	sqlOldestPending = `SELECT created_at FROM agent.tasks WHERE status = 'pending' ORDER BY created_at, id LIMIT 1`
	sqlLastFinished  = `SELECT status FROM agent.tasks WHERE completed_at IS NOT NULL
		ORDER BY completed_at DESC, id DESC LIMIT $1`
	sqlFinishedSince = `SELECT CAST(COALESCE(SUM(completed), 0) AS BIGINT), CAST(COALESCE(SUM(failed), 0) AS BIGINT)
		FROM agent.task_finished_hourly WHERE hour >= $1`

	// attention.Defaults
	stuckAfter     = 10 * time.Minute
	failureStreak  = 3
	successWindow  = 7 * 24 * time.Hour
	minTasks       = 10
	minSuccessRate = 0.8
)

// Attention is what the pipeline status flags.
type Attention struct {
	Stuck            bool     `json:"stuck"`
	RepeatedFailures bool     `json:"repeated_failures"`
	LowSuccessRate   bool     `json:"low_success_rate"`
	Flags            []string `json:"flags"`
}

// PipelineStatus is GET /api/agent/pipeline-status' answer.
type PipelineStatus struct {
	Pending               int64     `json:"pending"`
	Running               int64     `json:"running"`
	Completed             int64     `json:"completed"`
	Failed                int64     `json:"failed"`
	NeedsDecision         int64     `json:"needs_decision"`
	TimedOut              int64     `json:"timed_out"`
	Total                 int64     `json:"total"`
	LongestPendingSeconds *float64  `json:"longest_pending_seconds"`
	SuccessRate           *float64  `json:"success_rate"`
	Attention             Attention `json:"attention"`
	GeneratedAt           string    `json:"generated_at"`
}

// PipelineStatus is GET /api/agent/pipeline-status.
func (core *Core) PipelineStatus(ctx context.Context) (PipelineStatus, error) {
	at := now()
	b := &pgx.Batch{}
	b.Queue(sqlCounts)
	b.Queue(sqlOldestPending)
	b.Queue(sqlLastFinished, failureStreak)
	b.Queue(sqlFinishedSince, micros(at.Add(-successWindow).Truncate(time.Hour)))

	byStatus := map[string]int64{}
	var (
		total                    int64
		oldest                   *int64
		lastFailed               []bool
		windowDone, windowFailed int64
	)
	err := core.run(ctx, b, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("read task counts: %w", err)
		}
		for rows.Next() {
			var (
				status, typ string
				n           int64
			)
			if err := rows.Scan(&status, &typ, &n); err != nil {
				rows.Close()
				return fmt.Errorf("read task counts: %w", err)
			}
			byStatus[status] += n
			total += n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read task counts: %w", err)
		}
		var us int64
		switch err := br.QueryRow().Scan(&us); {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("oldest pending task: %w", err)
		default:
			oldest = &us
		}
		if rows, err = br.Query(); err != nil {
			return fmt.Errorf("last finished tasks: %w", err)
		}
		for rows.Next() {
			var st string
			if err := rows.Scan(&st); err != nil {
				rows.Close()
				return fmt.Errorf("last finished tasks: %w", err)
			}
			lastFailed = append(lastFailed, st == "failed" || st == "timed_out")
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("last finished tasks: %w", err)
		}
		if err := br.QueryRow().Scan(&windowDone, &windowFailed); err != nil {
			return fmt.Errorf("read finished counts: %w", err)
		}
		return nil
	})
	if err != nil {
		return PipelineStatus{}, err
	}

	// attention.Judge
	out := PipelineStatus{
		Pending: byStatus["pending"], Running: byStatus["running"], Completed: byStatus["completed"],
		Failed: byStatus["failed"], NeedsDecision: byStatus["needs_decision"], TimedOut: byStatus["timed_out"],
		Total: total, Attention: Attention{Flags: []string{}}, GeneratedAt: rfc3339(at),
	}
	var wait time.Duration
	if out.Pending > 0 && oldest != nil {
		wait = max(at.Sub(fromMicros(*oldest)), 0)
	}
	if out.Pending > 0 && out.Running == 0 && wait > stuckAfter {
		out.Attention.Stuck = true
		out.Attention.Flags = append(out.Attention.Flags, "stuck")
	}
	if len(lastFailed) >= failureStreak && !slices.Contains(lastFailed[:failureStreak], false) {
		out.Attention.RepeatedFailures = true
		out.Attention.Flags = append(out.Attention.Flags, "repeated_failures")
	}
	if n := windowDone + windowFailed; n >= minTasks && n > 0 && float64(windowDone)/float64(n) < minSuccessRate {
		out.Attention.LowSuccessRate = true
		out.Attention.Flags = append(out.Attention.Flags, "low_success_rate")
	}
	if oldest != nil {
		sec := wait.Seconds()
		out.LongestPendingSeconds = &sec
	}
	if n := windowDone + windowFailed; n > 0 {
		rate := float64(windowDone) / float64(n)
		out.SuccessRate = &rate
	}
	return out, nil
}

// ---------------------------------------------------------------------------
// 7. GET /api/agent/metrics
//
// Mirrors agent handler.GetMetrics → usecase.App.Metrics (usecase/report.go)
// with usecase.App.windowSums (usecase/window.go): sqlstore.Stats.
// DurationsBetween (the duration histogram) and sqlstore.Stats.DailyBetween
// (the rollup by route) over the window, and, when the histogram counts at
// most usecase.DefaultExactSample (1000) durations, sqlstore.Tasks.Durations
// for exact percentiles. One round trip: three statements in one batch; the
// durations read is conditional in SQL (its WHERE compares the histogram's
// sum with 1000, an uncorrelated subquery the planner evaluates once) since
// the batch cannot wait for the histogram.
//
// Deliberately MORE work than Foundry: Foundry caches the closed days' sums
// (closedDays) and reads only the open day(s) on each report; the bare
// server has no cache and reads the whole window, [since, far), every time,
// with the same two statements Foundry uses for each part.

const (
	defaultWindowDays = 7
	maxWindowDays     = 365
	exactSample       = 1000
	closingGrace      = 10 * time.Minute

	sqlDurationsBetween = `SELECT bucket, CAST(SUM(n) AS BIGINT) FROM agent.task_durations WHERE day >= $1 AND day < $2
		GROUP BY bucket ORDER BY bucket`
	sqlDailyBetween = `SELECT task_type, model, executor, CAST(SUM(created) AS BIGINT), CAST(SUM(completed) AS BIGINT),
		CAST(SUM(failed) AS BIGINT), CAST(SUM(timed_out) AS BIGINT), SUM(duration_sum), SUM(value_sum), SUM(cost_sum)
		FROM agent.task_daily WHERE day >= $1 AND day < $2 GROUP BY task_type, model, executor ORDER BY task_type, model, executor`
	sqlExactDurations = `SELECT duration_seconds FROM agent.tasks
		WHERE completed_at IS NOT NULL AND completed_at >= $1
			AND (SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM agent.task_durations WHERE day >= $1 AND day < $3) <= $2
		ORDER BY completed_at DESC, id DESC LIMIT $2`
)

type bucket struct {
	index int
	n     int64
}

// The histogram's scheme (metrics.HistogramFloor, HistogramGrowth).
const (
	histFloor  = 0.001
	histGrowth = 1.02
)

// bucketBounds is metrics.BucketBounds.
func bucketBounds(b int) (lo, hi float64) {
	if b <= 0 {
		return 0, histFloor
	}
	lo = histFloor * math.Pow(histGrowth, float64(b-1))
	return lo, lo * histGrowth
}

// rankValue is metrics.rankValue: the k-th smallest duration's estimate.
func rankValue(buckets []bucket, k int64) float64 {
	var seen int64
	for _, b := range buckets {
		if b.n <= 0 {
			continue
		}
		if k < seen+b.n {
			lo, hi := bucketBounds(b.index)
			return lo + (hi-lo)*(float64(k-seen)+0.5)/float64(b.n)
		}
		seen += b.n
	}
	_, hi := bucketBounds(buckets[len(buckets)-1].index)
	return hi
}

// histogramPercentile is metrics.HistogramPercentile.
func histogramPercentile(buckets []bucket, p float64) float64 {
	var n int64
	for _, b := range buckets {
		n += max(b.n, 0)
	}
	r := p / 100 * float64(n-1)
	lo, hi := int64(math.Floor(r)), int64(math.Ceil(r))
	vlo := rankValue(buckets, lo)
	if lo == hi {
		return vlo
	}
	return vlo + (rankValue(buckets, hi)-vlo)*(r-float64(lo))
}

// percentileSorted is metrics.PercentileSorted.
func percentileSorted(s []float64, p float64) float64 {
	r := p / 100 * float64(len(s)-1)
	lo, hi := int(math.Floor(r)), int(math.Ceil(r))
	if lo == hi {
		return s[lo]
	}
	return s[lo] + (s[hi]-s[lo])*(r-float64(lo))
}

// Rate is a success rate with its counts.
type Rate struct {
	Completed int64   `json:"completed"`
	Failed    int64   `json:"failed"`
	Rate      float64 `json:"rate"`
}

func (r *Rate) add(completed, failed int64) {
	r.Completed += completed
	r.Failed += failed
	r.Rate = 0
	if t := r.Completed + r.Failed; t > 0 {
		r.Rate = float64(r.Completed) / float64(t)
	}
}

// Metrics is GET /api/agent/metrics' answer.
type Metrics struct {
	ExecutionTime struct {
		P50Seconds  *float64 `json:"p50_seconds"`
		P95Seconds  *float64 `json:"p95_seconds"`
		SampleCount int      `json:"sample_count"`
		Exact       bool     `json:"exact"`
	} `json:"execution_time"`
	SuccessRate struct {
		Overall    Rate             `json:"overall"`
		ByTaskType map[string]*Rate `json:"by_task_type"`
		ByModel    map[string]*Rate `json:"by_model"`
		ByExecutor map[string]*Rate `json:"by_executor"`
	} `json:"success_rate"`
	Usage struct {
		TasksCreated         int64            `json:"tasks_created"`
		TasksFinished        int64            `json:"tasks_finished"`
		TotalDurationSeconds float64          `json:"total_duration_seconds"`
		TotalResourceCost    float64          `json:"total_resource_cost"`
		TotalValueScore      float64          `json:"total_value_score"`
		TasksByModel         map[string]int64 `json:"tasks_by_model"`
		TasksByExecutor      map[string]int64 `json:"tasks_by_executor"`
	} `json:"usage"`
	WindowDays  int    `json:"window_days"`
	WindowStart string `json:"window_start"`
}

// WindowDays is the metrics' window: the default when the request gives
// none.
func WindowDays(wp *int) (int, error) {
	if wp == nil {
		return defaultWindowDays, nil
	}
	if *wp < 1 || *wp > maxWindowDays {
		return 0, invalid(field("window_days", "must be between 1 and %d", maxWindowDays))
	}
	return *wp, nil
}

// Metrics is GET /api/agent/metrics over a window of days (WindowDays).
func (core *Core) Metrics(ctx context.Context, days int) (Metrics, error) {
	at := now()
	since := at.UTC().Truncate(24*time.Hour).AddDate(0, 0, -days) // metricsSince
	until := at.UTC().Add(-closingGrace).Truncate(24 * time.Hour) // closedUntil
	if until.Before(since) {
		until = since
	}
	far := until.AddDate(1, 0, 0) // past any open day, as windowSums reads
	b := &pgx.Batch{}
	b.Queue(sqlDurationsBetween, micros(since), micros(far))
	b.Queue(sqlDailyBetween, micros(since), micros(far))
	b.Queue(sqlExactDurations, micros(since), exactSample, micros(far))

	var out Metrics
	out.WindowDays, out.WindowStart = days, rfc3339(since)
	sr, u := &out.SuccessRate, &out.Usage
	sr.ByTaskType, sr.ByModel, sr.ByExecutor = map[string]*Rate{}, map[string]*Rate{}, map[string]*Rate{}
	u.TasksByModel, u.TasksByExecutor = map[string]int64{}, map[string]int64{}
	var (
		hist      []bucket
		durations []float64
	)
	err := core.run(ctx, b, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("read the duration histogram: %w", err)
		}
		for rows.Next() {
			var bk bucket
			if err := rows.Scan(&bk.index, &bk.n); err != nil {
				rows.Close()
				return fmt.Errorf("read the duration histogram: %w", err)
			}
			hist = append(hist, bk)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read the duration histogram: %w", err)
		}
		if rows, err = br.Query(); err != nil {
			return fmt.Errorf("read task rollup: %w", err)
		}
		rate := func(m map[string]*Rate, key string, completed, failed int64) {
			if m[key] == nil {
				m[key] = &Rate{}
			}
			m[key].add(completed, failed)
		}
		for rows.Next() {
			var (
				typ, model, executor                 string
				created, completed, failed, timedOut int64
				durationSum, valueSum, costSum       float64
			)
			if err := rows.Scan(&typ, &model, &executor, &created, &completed, &failed, &timedOut,
				&durationSum, &valueSum, &costSum); err != nil {
				rows.Close()
				return fmt.Errorf("read task rollup: %w", err)
			}
			sr.Overall.add(completed, failed+timedOut)
			if completed+failed+timedOut > 0 {
				rate(sr.ByTaskType, typ, completed, failed+timedOut)
				rate(sr.ByModel, model, completed, failed+timedOut)
				rate(sr.ByExecutor, executor, completed, failed+timedOut)
			}
			u.TasksCreated += created
			u.TasksFinished += completed + failed + timedOut
			u.TotalDurationSeconds += durationSum
			u.TotalResourceCost += costSum
			u.TotalValueScore += valueSum
			if created > 0 {
				u.TasksByModel[model] += created
				u.TasksByExecutor[executor] += created
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read task rollup: %w", err)
		}
		if rows, err = br.Query(); err != nil {
			return fmt.Errorf("durations of finished tasks: %w", err)
		}
		for rows.Next() {
			var d *float64
			if err := rows.Scan(&d); err != nil {
				rows.Close()
				return fmt.Errorf("durations of finished tasks: %w", err)
			}
			if d != nil {
				durations = append(durations, *d)
			}
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		return Metrics{}, err
	}
	// usecase.App.percentiles
	var n int64
	for _, bk := range hist {
		n += bk.n
	}
	et := &out.ExecutionTime
	switch {
	case n == 0:
	case n <= exactSample && len(durations) > 0:
		slices.Sort(durations)
		p50, p95 := percentileSorted(durations, 50), percentileSorted(durations, 95)
		et.P50Seconds, et.P95Seconds, et.SampleCount, et.Exact = &p50, &p95, len(durations), true
	default:
		p50, p95 := histogramPercentile(hist, 50), histogramPercentile(hist, 95)
		et.P50Seconds, et.P95Seconds, et.SampleCount = &p50, &p95, int(n)
	}
	return out, nil
}

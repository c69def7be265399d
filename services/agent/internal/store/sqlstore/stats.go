package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Stats implements store.Stats over a querier.
type Stats struct {
	q database.Querier
}

var _ store.Stats = Stats{}

// NewStats returns the counters repository over q.
func NewStats(q database.Querier) Stats { return Stats{q: q} }

// AddCounts implements store.Stats.
func (s Stats) AddCounts(ctx context.Context, deltas []store.Count) error {
	var b database.Batch
	s.QueueAddCounts(&b, deltas)
	if err := s.q.SendBatch(ctx, &b); err != nil {
		return fmt.Errorf("count tasks: %w", err)
	}
	return nil
}

// QueueAddCounts implements store.Stats: the counters in (status, type)
// order, so two transactions never take the counter rows' locks in
// opposite orders (a deadlock); zero deltas are skipped.
func (s Stats) QueueAddCounts(b *database.Batch, deltas []store.Count) {
	ds := slices.Clone(deltas)
	slices.SortFunc(ds, func(a, b store.Count) int {
		if c := strings.Compare(string(a.Status), string(b.Status)); c != 0 {
			return c
		}
		return strings.Compare(string(a.Type), string(b.Type))
	})
	for _, d := range ds {
		if d.N == 0 {
			continue
		}
		status, typ := d.Status, d.Type
		b.Exec(func(int64) error { return nil }, `INSERT INTO task_counts (status, task_type, n) VALUES ($1, $2, $3)
			ON CONFLICT (status, task_type) DO UPDATE SET n = task_counts.n + excluded.n`,
			string(status), string(typ), d.N)
	}
}

// Counts implements store.Stats.
func (s Stats) Counts(ctx context.Context) ([]store.Count, error) {
	var out []store.Count
	b := &database.Batch{}
	s.QueueCounts(b, &out)
	return out, s.q.SendBatch(ctx, b)
}

// IdeaCount implements store.Stats: a range of idea_task_counts' key,
// kept by migration 0016's triggers.
func (s Stats) IdeaCount(ctx context.Context, ideaID string, status task.Status, typ task.Type) (int, error) {
	var n int
	err := s.q.QueryRow(ctx, `SELECT COALESCE(SUM(n), 0) FROM idea_task_counts WHERE idea_id = $1
		AND ($2 = '' OR status = $2) AND ($3 = '' OR task_type = $3)`, ideaID, string(status), string(typ)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count the tasks of idea %s: %w", ideaID, err)
	}
	return n, nil
}

// QueueCounts implements store.Stats.
func (s Stats) QueueCounts(b *database.Batch, out *[]store.Count) {
	b.Query(func(rows database.Rows) error {
		*out = []store.Count{}
		for rows.Next() {
			var (
				c           store.Count
				status, typ string
			)
			if err := rows.Scan(&status, &typ, &c.N); err != nil {
				return fmt.Errorf("read task counts: %w", err)
			}
			c.Status, c.Type = task.Status(status), task.Type(typ)
			*out = append(*out, c)
		}
		return nil
	}, `SELECT status, task_type, n FROM task_counts WHERE n <> 0 ORDER BY status, task_type`)
}

// day is the UTC midnight of t's day, the daily rows' key.
func day(t time.Time) int64 { return database.Micros(t.UTC().Truncate(24 * time.Hour)) }

// AddDaily implements store.Stats.
func (s Stats) AddDaily(ctx context.Context, d store.Daily) error {
	var b database.Batch
	s.QueueAddDaily(&b, d)
	if err := s.q.SendBatch(ctx, &b); err != nil {
		return fmt.Errorf("roll up tasks: %w", err)
	}
	return nil
}

// QueueAddDaily implements store.Stats.
func (s Stats) QueueAddDaily(b *database.Batch, d store.Daily) {
	b.Exec(nil, `INSERT INTO task_daily (day, task_type, model, executor, created, completed, failed, timed_out,
		duration_sum, value_sum, cost_sum, tokens_in, tokens_out, cost_usd, usage_tasks)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT (day, task_type, model, executor) DO UPDATE SET
		created = task_daily.created + excluded.created, completed = task_daily.completed + excluded.completed,
		failed = task_daily.failed + excluded.failed, timed_out = task_daily.timed_out + excluded.timed_out,
		duration_sum = task_daily.duration_sum + excluded.duration_sum,
		value_sum = task_daily.value_sum + excluded.value_sum, cost_sum = task_daily.cost_sum + excluded.cost_sum,
		tokens_in = task_daily.tokens_in + excluded.tokens_in, tokens_out = task_daily.tokens_out + excluded.tokens_out,
		cost_usd = task_daily.cost_usd + excluded.cost_usd, usage_tasks = task_daily.usage_tasks + excluded.usage_tasks`,
		day(d.Day), string(d.Type), d.Model, d.Executor, d.Created, d.Completed, d.Failed, d.TimedOut,
		d.DurationSum, d.ValueSum, d.CostSum, d.TokensIn, d.TokensOut, d.CostUSD, d.UsageTasks)
}

// DailyBetween implements store.Stats: a range of the primary key, summed
// in the database, so the answer is one row per type, model and executor
// whatever the window.
func (s Stats) DailyBetween(ctx context.Context, from, to time.Time) ([]store.Daily, error) {
	var (
		b   database.Batch
		out []store.Daily
	)
	s.QueueDailyBetween(&b, from, to, &out)
	if err := s.q.SendBatch(ctx, &b); err != nil {
		return nil, fmt.Errorf("read task rollup: %w", err)
	}
	return out, nil
}

// QueueDailyBetween implements store.Stats.
func (s Stats) QueueDailyBetween(b *database.Batch, from, to time.Time, out *[]store.Daily) {
	b.Query(func(rows database.Rows) error {
		*out = []store.Daily{}
		for rows.Next() {
			var (
				d   store.Daily
				typ string
			)
			if err := rows.Scan(&typ, &d.Model, &d.Executor, &d.Created, &d.Completed, &d.Failed, &d.TimedOut,
				&d.DurationSum, &d.ValueSum, &d.CostSum, &d.TokensIn, &d.TokensOut, &d.CostUSD, &d.UsageTasks); err != nil {
				return err
			}
			d.Type = task.Type(typ)
			*out = append(*out, d)
		}
		return rows.Err()
	}, `SELECT task_type, model, executor, CAST(SUM(created) AS BIGINT), CAST(SUM(completed) AS BIGINT),
		CAST(SUM(failed) AS BIGINT), CAST(SUM(timed_out) AS BIGINT), SUM(duration_sum), SUM(value_sum), SUM(cost_sum),
		CAST(SUM(tokens_in) AS BIGINT), CAST(SUM(tokens_out) AS BIGINT), SUM(cost_usd), CAST(SUM(usage_tasks) AS BIGINT)
		FROM task_daily WHERE day >= $1 AND day < $2 GROUP BY task_type, model, executor ORDER BY task_type, model, executor`,
		database.Micros(from), database.Micros(to))
}

// AddFinished implements store.Stats.
func (s Stats) AddFinished(ctx context.Context, at time.Time, f store.Finished) error {
	var b database.Batch
	s.QueueAddFinished(&b, at, f)
	if err := s.q.SendBatch(ctx, &b); err != nil {
		return fmt.Errorf("count finished tasks: %w", err)
	}
	return nil
}

// QueueAddFinished implements store.Stats.
func (s Stats) QueueAddFinished(b *database.Batch, at time.Time, f store.Finished) {
	b.Exec(nil, `INSERT INTO task_finished_hourly (hour, completed, failed) VALUES ($1, $2, $3)
		ON CONFLICT (hour) DO UPDATE SET completed = task_finished_hourly.completed + excluded.completed,
		failed = task_finished_hourly.failed + excluded.failed`,
		database.Micros(at.Truncate(time.Hour)), f.Completed, f.Failed)
}

// QueueFinishedSince implements store.Stats: at most one row per hour of
// the window, whatever the number of tasks.
func (s Stats) QueueFinishedSince(b *database.Batch, since time.Time, out *store.Finished) {
	b.QueryRow(func(row database.Row) error {
		if err := row.Scan(&out.Completed, &out.Failed); err != nil {
			return fmt.Errorf("read finished counts: %w", err)
		}
		return nil
	}, `SELECT CAST(COALESCE(SUM(completed), 0) AS BIGINT), CAST(COALESCE(SUM(failed), 0) AS BIGINT)
		FROM task_finished_hourly WHERE hour >= $1`, database.Micros(since))
}

// AddDuration implements store.Stats.
func (s Stats) AddDuration(ctx context.Context, at time.Time, bucket int) error {
	var b database.Batch
	s.QueueAddDuration(&b, at, bucket)
	if err := s.q.SendBatch(ctx, &b); err != nil {
		return fmt.Errorf("count a duration: %w", err)
	}
	return nil
}

// QueueAddDuration implements store.Stats.
func (s Stats) QueueAddDuration(b *database.Batch, at time.Time, bucket int) {
	b.Exec(nil, `INSERT INTO task_durations (day, bucket, n) VALUES ($1, $2, 1)
		ON CONFLICT (day, bucket) DO UPDATE SET n = task_durations.n + 1`, day(at), bucket)
}

// DurationsBetween implements store.Stats: at most one row per day and
// bucket of the window, summed in the database.
func (s Stats) DurationsBetween(ctx context.Context, from, to time.Time) ([]metrics.Bucket, error) {
	var (
		b   database.Batch
		out []metrics.Bucket
	)
	s.QueueDurationsBetween(&b, from, to, &out)
	if err := s.q.SendBatch(ctx, &b); err != nil {
		return nil, fmt.Errorf("read the duration histogram: %w", err)
	}
	return out, nil
}

// QueueDurationsBetween implements store.Stats.
func (s Stats) QueueDurationsBetween(b *database.Batch, from, to time.Time, out *[]metrics.Bucket) {
	b.Query(func(rows database.Rows) error {
		*out = []metrics.Bucket{}
		for rows.Next() {
			var k metrics.Bucket
			if err := rows.Scan(&k.Index, &k.N); err != nil {
				return err
			}
			*out = append(*out, k)
		}
		return rows.Err()
	}, `SELECT bucket, CAST(SUM(n) AS BIGINT) FROM task_durations WHERE day >= $1 AND day < $2
		GROUP BY bucket ORDER BY bucket`, database.Micros(from), database.Micros(to))
}

// AddFailure implements store.Stats.
func (s Stats) AddFailure(ctx context.Context, category string, diagnosed bool) error {
	var b database.Batch
	s.QueueAddFailure(&b, category, diagnosed)
	if err := s.q.SendBatch(ctx, &b); err != nil {
		return fmt.Errorf("count a failure: %w", err)
	}
	return nil
}

// QueueAddFailure implements store.Stats.
func (s Stats) QueueAddFailure(b *database.Batch, category string, diagnosed bool) {
	d := 0
	if diagnosed {
		d = 1
	}
	b.Exec(nil, `INSERT INTO failure_counts (category, failed, diagnosed) VALUES ($1, 1, $2)
		ON CONFLICT (category) DO UPDATE SET failed = failure_counts.failed + 1,
		diagnosed = failure_counts.diagnosed + excluded.diagnosed`, category, d)
}

// Failures implements store.Stats.
func (s Stats) Failures(ctx context.Context) ([]store.FailureCount, error) {
	rows, err := s.q.Query(ctx, `SELECT category, failed, diagnosed FROM failure_counts ORDER BY category`)
	if err != nil {
		return nil, fmt.Errorf("read failure counts: %w", err)
	}
	defer rows.Close()
	out := []store.FailureCount{}
	for rows.Next() {
		var f store.FailureCount
		if err := rows.Scan(&f.Category, &f.Failed, &f.Diagnosed); err != nil {
			return nil, fmt.Errorf("read failure counts: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// DailyByDay implements store.Stats: the rollup's rows of the window,
// summed per day in the database; at most one row per day, however many
// tasks the days hold.
func (s Stats) DailyByDay(ctx context.Context, from, to time.Time) ([]store.Daily, error) {
	rows, err := s.q.Query(ctx, `SELECT day, CAST(SUM(created) AS BIGINT), CAST(SUM(completed) AS BIGINT),
		CAST(SUM(failed) AS BIGINT), CAST(SUM(timed_out) AS BIGINT), SUM(duration_sum), SUM(value_sum), SUM(cost_sum),
		CAST(SUM(tokens_in) AS BIGINT), CAST(SUM(tokens_out) AS BIGINT), SUM(cost_usd), CAST(SUM(usage_tasks) AS BIGINT)
		FROM task_daily WHERE day >= $1 AND day < $2 GROUP BY day ORDER BY day`,
		database.Micros(from), database.Micros(to))
	if err != nil {
		return nil, fmt.Errorf("read the daily rollup: %w", err)
	}
	defer rows.Close()
	out := []store.Daily{}
	for rows.Next() {
		var (
			d  store.Daily
			at int64
		)
		if err := rows.Scan(&at, &d.Created, &d.Completed, &d.Failed, &d.TimedOut, &d.DurationSum, &d.ValueSum, &d.CostSum,
			&d.TokensIn, &d.TokensOut, &d.CostUSD, &d.UsageTasks); err != nil {
			return nil, fmt.Errorf("read the daily rollup: %w", err)
		}
		d.Day = database.Time(at)
		out = append(out, d)
	}
	return out, rows.Err()
}

// DurationsByDay implements store.Stats: at most one row per day and
// bucket of the window.
func (s Stats) DurationsByDay(ctx context.Context, from, to time.Time) ([]store.DayBucket, error) {
	rows, err := s.q.Query(ctx, `SELECT day, bucket, n FROM task_durations WHERE day >= $1 AND day < $2 ORDER BY day, bucket`,
		database.Micros(from), database.Micros(to))
	if err != nil {
		return nil, fmt.Errorf("read the daily duration histograms: %w", err)
	}
	defer rows.Close()
	out := []store.DayBucket{}
	for rows.Next() {
		var (
			b  store.DayBucket
			at int64
		)
		if err := rows.Scan(&at, &b.Index, &b.N); err != nil {
			return nil, fmt.Errorf("read the daily duration histograms: %w", err)
		}
		b.Day = database.Time(at)
		out = append(out, b)
	}
	return out, rows.Err()
}

// QueueIdeaFailed implements store.Stats.
func (s Stats) QueueIdeaFailed(b *database.Batch, ideaID string, at time.Time, summary string) {
	b.Exec(nil, `INSERT INTO idea_failures (idea_id, failures, last_failed_at, last_error) VALUES ($1, 1, $2, $3)
		ON CONFLICT (idea_id) DO UPDATE SET failures = idea_failures.failures + 1, last_failed_at = excluded.last_failed_at,
		last_error = excluded.last_error`, ideaID, database.Micros(at), summary)
}

// QueueIdeaSucceeded implements store.Stats.
func (s Stats) QueueIdeaSucceeded(b *database.Batch, ideaID string) {
	b.Exec(nil, `DELETE FROM idea_failures WHERE idea_id = $1`, ideaID)
}

// IdeaFailures implements store.Stats.
func (s Stats) IdeaFailures(ctx context.Context, ideaIDs []string) (map[string]store.IdeaFailures, error) {
	out := map[string]store.IdeaFailures{}
	if len(ideaIDs) == 0 {
		return out, nil
	}
	rows, err := s.q.Query(ctx, `SELECT idea_id, failures, last_failed_at, last_error FROM idea_failures
		WHERE idea_id IN (`+database.Placeholders(1, len(ideaIDs))+`)`, idArgs(ideaIDs)...)
	if err != nil {
		return nil, fmt.Errorf("read the ideas' failures: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id string
			f  store.IdeaFailures
			at int64
		)
		if err := rows.Scan(&id, &f.Failures, &at, &f.LastError); err != nil {
			return nil, fmt.Errorf("read the ideas' failures: %w", err)
		}
		f.LastAt = database.Time(at)
		out[id] = f
	}
	return out, rows.Err()
}

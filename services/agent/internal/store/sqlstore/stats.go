package sqlstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

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

// AddCounts implements store.Stats. Deltas are applied in (status, type)
// order, so two transactions never take the counter rows' locks in
// opposite orders (a deadlock); zero deltas are skipped.
func (s Stats) AddCounts(ctx context.Context, deltas []store.Count) error {
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
		if _, err := s.q.Exec(ctx, `INSERT INTO task_counts (status, task_type, n) VALUES ($1, $2, $3)
			ON CONFLICT (status, task_type) DO UPDATE SET n = task_counts.n + excluded.n`,
			string(d.Status), string(d.Type), d.N); err != nil {
			return fmt.Errorf("count %s %s tasks: %w", d.Status, d.Type, err)
		}
	}
	return nil
}

// Counts implements store.Stats.
func (s Stats) Counts(ctx context.Context) ([]store.Count, error) {
	rows, err := s.q.Query(ctx, `SELECT status, task_type, n FROM task_counts WHERE n <> 0 ORDER BY status, task_type`)
	if err != nil {
		return nil, fmt.Errorf("read task counts: %w", err)
	}
	defer rows.Close()
	out := []store.Count{}
	for rows.Next() {
		var (
			c           store.Count
			status, typ string
		)
		if err := rows.Scan(&status, &typ, &c.N); err != nil {
			return nil, fmt.Errorf("read task counts: %w", err)
		}
		c.Status, c.Type = task.Status(status), task.Type(typ)
		out = append(out, c)
	}
	return out, rows.Err()
}

// AddHourly implements store.Stats.
func (s Stats) AddHourly(ctx context.Context, h store.Hourly) error {
	_, err := s.q.Exec(ctx, `INSERT INTO task_hourly (hour, task_type, model, executor, created, completed, failed, timed_out,
		duration_sum, value_sum, cost_sum) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (hour, task_type, model, executor) DO UPDATE SET
		created = task_hourly.created + excluded.created, completed = task_hourly.completed + excluded.completed,
		failed = task_hourly.failed + excluded.failed, timed_out = task_hourly.timed_out + excluded.timed_out,
		duration_sum = task_hourly.duration_sum + excluded.duration_sum,
		value_sum = task_hourly.value_sum + excluded.value_sum, cost_sum = task_hourly.cost_sum + excluded.cost_sum`,
		database.Micros(h.Hour.Truncate(time.Hour)), string(h.Type), h.Model, h.Executor, h.Created, h.Completed, h.Failed, h.TimedOut,
		h.DurationSum, h.ValueSum, h.CostSum)
	if err != nil {
		return fmt.Errorf("roll up tasks: %w", err)
	}
	return nil
}

// Rollup implements store.Stats: a range of the primary key, summed in
// the database, so the answer is one row per type, model and executor
// whatever the window.
func (s Stats) Rollup(ctx context.Context, since time.Time) ([]store.Hourly, error) {
	rows, err := s.q.Query(ctx, `SELECT task_type, model, executor, CAST(SUM(created) AS BIGINT), CAST(SUM(completed) AS BIGINT),
		CAST(SUM(failed) AS BIGINT), CAST(SUM(timed_out) AS BIGINT), SUM(duration_sum), SUM(value_sum), SUM(cost_sum)
		FROM task_hourly WHERE hour >= $1 GROUP BY task_type, model, executor ORDER BY task_type, model, executor`,
		database.Micros(since))
	if err != nil {
		return nil, fmt.Errorf("read task rollup: %w", err)
	}
	defer rows.Close()
	out := []store.Hourly{}
	for rows.Next() {
		var (
			h   store.Hourly
			typ string
		)
		if err := rows.Scan(&typ, &h.Model, &h.Executor, &h.Created, &h.Completed, &h.Failed, &h.TimedOut,
			&h.DurationSum, &h.ValueSum, &h.CostSum); err != nil {
			return nil, fmt.Errorf("read task rollup: %w", err)
		}
		h.Type = task.Type(typ)
		out = append(out, h)
	}
	return out, rows.Err()
}

// AddFailure implements store.Stats.
func (s Stats) AddFailure(ctx context.Context, category string, diagnosed bool) error {
	d := 0
	if diagnosed {
		d = 1
	}
	if _, err := s.q.Exec(ctx, `INSERT INTO failure_counts (category, failed, diagnosed) VALUES ($1, 1, $2)
		ON CONFLICT (category) DO UPDATE SET failed = failure_counts.failed + 1,
		diagnosed = failure_counts.diagnosed + excluded.diagnosed`, category, d); err != nil {
		return fmt.Errorf("count a failure: %w", err)
	}
	return nil
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

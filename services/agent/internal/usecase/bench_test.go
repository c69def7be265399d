package usecase_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/routing"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// BenchmarkPipelineReports measures the pipeline status and the 7-day
// metrics through the use cases with 1 000 and with 1 000 000 tasks
// spread over 30 days (seeded with multi-row INSERTs, counters and rollup
// included), and reports the p50 and p95 of the calls.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./services/agent/internal/usecase -run '^$' -bench PipelineReports -benchtime 200x
func BenchmarkPipelineReports(b *testing.B) {
	for _, engine := range []database.Engine{database.Postgres, database.SQLite} {
		for _, n := range []int{1000, 1_000_000} {
			b.Run(fmt.Sprintf("%s/tasks=%d", engine, n), func(b *testing.B) {
				if engine == database.Postgres && dbtest.PostgresURL() == "" {
					b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
				}
				e := setup(b, engine)
				seedTasks(b, e, n)
				ctx := context.Background()
				b.Run("pipeline-status", func(b *testing.B) {
					timed(b, func() error { _, err := e.app.PipelineStatus(ctx); return err })
				})
				b.Run("metrics", func(b *testing.B) {
					timed(b, func() error { _, err := e.app.Metrics(ctx, nil); return err })
				})
			})
		}
	}
}

// timed runs fn b.N times and reports the p50 and p95 of the calls.
func timed(b *testing.B, fn func() error) {
	b.Helper()
	took := make([]float64, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := fn(); err != nil {
			b.Fatal(err)
		}
		took = append(took, float64(time.Since(t0).Microseconds()))
	}
	b.StopTimer()
	slices.Sort(took)
	b.ReportMetric(metrics.PercentileSorted(took, 50), "p50-µs")
	b.ReportMetric(metrics.PercentileSorted(took, 95), "p95-µs")
}

// seedTasks writes n tasks created over the 30 days before the clock's
// now — 5 % pending, 2 % running, 75 % completed, 15 % failed, 3 % timed
// out — with the counters and the hourly rollup they imply, in multi-row
// INSERTs.
func seedTasks(b *testing.B, e env, n int) {
	b.Helper()
	ctx := context.Background()
	now := e.clock.Now()
	span := 30 * 24 * time.Hour
	routes := routing.Default()
	type hourKey struct {
		hour                 int64
		typ, model, executor string
	}
	type hourVal struct {
		created, completed, failed, timedOut int64
		duration                             float64
	}
	counts := map[[2]string]int64{}
	hourly := map[hourKey]*hourVal{}
	hourOf := func(t time.Time) int64 { return database.Micros(t.Truncate(time.Hour)) }
	const cols = `id, direction, task_type, status, model, executor, tier, command, context, error_summary, error_category,
		worker_id, lease_seconds, lease_expires_at, attempts, duration_seconds, created_at, updated_at, started_at, completed_at`
	const ncols = 20
	const batch = 1000
	for from := 0; from < n; from += batch {
		rows := min(batch, n-from)
		var (
			sb   strings.Builder
			args = make([]any, 0, rows*ncols)
		)
		sb.WriteString(`INSERT INTO tasks (` + cols + `) VALUES `)
		for i := from; i < from+rows; i++ {
			if i > from {
				sb.WriteString(", ")
			}
			sb.WriteString("(" + database.Placeholders(len(args)+1, ncols) + ")")
			typ := task.Types[i%len(task.Types)]
			d, _ := routes.Decide(string(typ))
			created := now.Add(-span + time.Duration(int64(span)/int64(n)*int64(i)))
			var (
				status                      task.Status
				summary, category, worker   *string
				leaseExp, started, finished *int64
				duration                    *float64
				attempts                    int
			)
			switch p := i % 100; {
			case p < 5:
				status = task.Pending
			case p < 7:
				status, worker, attempts = task.Running, ptr("w"), 1
				started, leaseExp = ptr(database.Micros(created)), ptr(database.Micros(created.Add(5*time.Minute)))
			case p < 82:
				status, worker, attempts = task.Completed, ptr("w"), 1
			case p < 97:
				status, worker, attempts = task.Failed, ptr("w"), 1
				summary, category = ptr("provider returned 503"), ptr(task.CategoryProviderError)
			default:
				status, worker, attempts = task.TimedOut, ptr("w"), 3
				summary, category = ptr("lease expired"), ptr(task.CategoryTimeout)
			}
			counts[[2]string{string(status), string(typ)}]++
			hk := hourKey{hourOf(created), string(typ), d.Model, d.Executor}
			if hourly[hk] == nil {
				hourly[hk] = &hourVal{}
			}
			hourly[hk].created++
			if status.Finished() {
				secs := float64(30 + i%600)
				done := created.Add(time.Duration(secs) * time.Second)
				started, finished, duration = ptr(database.Micros(created)), ptr(database.Micros(done)), &secs
				fk := hourKey{hourOf(done), string(typ), d.Model, d.Executor}
				if hourly[fk] == nil {
					hourly[fk] = &hourVal{}
				}
				v := hourly[fk]
				v.duration += secs
				switch status {
				case task.Completed:
					v.completed++
				case task.Failed:
					v.failed++
				default:
					v.timedOut++
				}
			}
			args = append(args, fmt.Sprintf("seed-%08d", i), "seeded task", string(typ), string(status), d.Model, d.Executor, d.Tier,
				"true", "{}", summary, category, worker, 300, leaseExp, attempts, duration,
				database.Micros(created), database.Micros(created), started, finished)
		}
		if _, err := e.db.Exec(ctx, sb.String(), args...); err != nil {
			b.Fatalf("seed tasks: %v", err)
		}
	}
	for k, v := range counts {
		if _, err := e.db.Exec(ctx, `INSERT INTO task_counts (status, task_type, n) VALUES ($1, $2, $3)`, k[0], k[1], v); err != nil {
			b.Fatalf("seed counts: %v", err)
		}
	}
	keys := make([]hourKey, 0, len(hourly))
	for k := range hourly {
		keys = append(keys, k)
	}
	for from := 0; from < len(keys); from += batch {
		part := keys[from:min(from+batch, len(keys))]
		var (
			sb   strings.Builder
			args []any
		)
		sb.WriteString(`INSERT INTO task_hourly (hour, task_type, model, executor, created, completed, failed, timed_out, duration_sum) VALUES `)
		for i, k := range part {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(" + database.Placeholders(len(args)+1, 9) + ")")
			v := hourly[k]
			args = append(args, k.hour, k.typ, k.model, k.executor, v.created, v.completed, v.failed, v.timedOut, v.duration)
		}
		if _, err := e.db.Exec(ctx, sb.String(), args...); err != nil {
			b.Fatalf("seed rollup: %v", err)
		}
	}
	for _, t := range []string{"tasks", "task_hourly", "task_counts"} {
		if _, err := e.db.Exec(ctx, `ANALYZE `+t); err != nil {
			b.Fatalf("analyze %s: %v", t, err)
		}
	}
}

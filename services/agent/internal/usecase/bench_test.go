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
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/cursor"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// BenchmarkPipelineReports measures the pipeline status, the 7-day
// metrics and the 30-day daily series through the use cases with 1 000 and with 1 000 000 tasks
// spread over 30 days (seeded with multi-row INSERTs, counters and rollup
// included), and reports the p50 and p95 of the calls.
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./services/agent/internal/usecase -run '^$' -bench PipelineReports -benchtime 200x
func BenchmarkPipelineReports(b *testing.B) {
	for _, engine := range []database.Engine{database.Postgres, database.SQLite} {
		for _, n := range []int{1000, 100_000, 1_000_000} {
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
				b.Run("daily-30", func(b *testing.B) {
					days := int32(30)
					timed(b, func() error { _, err := e.app.DailyMetrics(ctx, &days); return err })
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
// out — with the counters, rollups and duration histogram they imply, in
// multi-row INSERTs within one transaction.
func seedTasks(b *testing.B, e env, n int) {
	b.Helper()
	ctx := context.Background()
	now := e.clock.Now()
	span := 30 * 24 * time.Hour
	routes := routing.Default()
	type dayKey struct {
		day                  int64
		typ, model, executor string
	}
	type dayVal struct {
		created, completed, failed, timedOut int64
		duration                             float64
	}
	counts := map[[2]string]int64{}
	daily := map[dayKey]*dayVal{}
	finished := map[int64]*[2]int64{}
	durations := map[[2]int64]int64{}
	dayOf := func(t time.Time) int64 { return database.Micros(t.Truncate(24 * time.Hour)) }
	const cols = `id, direction, task_type, status, model, executor, tier, command, context, error_summary, error_category,
		worker_id, lease_seconds, lease_expires_at, attempts, duration_seconds, created_at, updated_at, started_at, completed_at`
	const ncols = 20
	const batch = 10000
	err := e.db.Tx(ctx, func(tx database.Querier) error {
		for from := 0; from < n; from += batch {
			rows := min(batch, n-from)
			args := make([]any, 0, rows*ncols)
			for i := from; i < from+rows; i++ {
				typ := task.Types[i%len(task.Types)]
				d, _ := routes.Decide(string(typ))
				created := now.Add(-span + time.Duration(int64(span)/int64(n)*int64(i)))
				var (
					status                        task.Status
					summary, category, worker     *string
					leaseExp, started, finishedAt *int64
					duration                      *float64
					attempts                      int
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
				ck := dayKey{dayOf(created), string(typ), d.Model, d.Executor}
				if daily[ck] == nil {
					daily[ck] = &dayVal{}
				}
				daily[ck].created++
				if status.Finished() {
					secs := float64(30 + i%600)
					done := created.Add(time.Duration(secs) * time.Second)
					started, finishedAt, duration = ptr(database.Micros(created)), ptr(database.Micros(done)), &secs
					fk := dayKey{dayOf(done), string(typ), d.Model, d.Executor}
					if daily[fk] == nil {
						daily[fk] = &dayVal{}
					}
					v := daily[fk]
					v.duration += secs
					hour := database.Micros(done.Truncate(time.Hour))
					if finished[hour] == nil {
						finished[hour] = &[2]int64{}
					}
					switch status {
					case task.Completed:
						v.completed++
						finished[hour][0]++
					case task.Failed:
						v.failed++
						finished[hour][1]++
					default:
						v.timedOut++
						finished[hour][1]++
					}
					durations[[2]int64{fk.day, int64(metrics.BucketOf(secs))}]++
				}
				args = append(args, fmt.Sprintf("seed-%08d", i), "seeded task", string(typ), string(status), d.Model, d.Executor, d.Tier,
					"true", "{}", summary, category, worker, 300, leaseExp, attempts, duration,
					database.Micros(created), database.Micros(created), started, finishedAt)
			}
			if err := insertRows(ctx, tx, "tasks ("+cols+")", ncols, args); err != nil {
				return err
			}
		}
		var args []any
		for k, v := range counts {
			args = append(args, k[0], k[1], v)
		}
		if err := insertRows(ctx, tx, "task_counts (status, task_type, n)", 3, args); err != nil {
			return err
		}
		args = nil
		for k, v := range daily {
			args = append(args, k.day, k.typ, k.model, k.executor, v.created, v.completed, v.failed, v.timedOut, v.duration)
		}
		if err := insertRows(ctx, tx, "task_daily (day, task_type, model, executor, created, completed, failed, timed_out, duration_sum)", 9, args); err != nil {
			return err
		}
		args = nil
		for hour, v := range finished {
			args = append(args, hour, v[0], v[1])
		}
		if err := insertRows(ctx, tx, "task_finished_hourly (hour, completed, failed)", 3, args); err != nil {
			return err
		}
		args = nil
		for k, v := range durations {
			args = append(args, k[0], k[1], v)
		}
		return insertRows(ctx, tx, "task_durations (day, bucket, n)", 3, args)
	})
	if err != nil {
		b.Fatalf("seed tasks: %v", err)
	}
	for _, t := range []string{"tasks", "task_counts", "task_daily", "task_finished_hourly", "task_durations"} {
		if _, err := e.db.Exec(ctx, `ANALYZE `+t); err != nil {
			b.Fatalf("analyze %s: %v", t, err)
		}
	}
}

// insertRows inserts args, ncols per row, into table (with its column
// list) in statements of at most 1 000 parameters: the SQLite driver looks
// each parameter's name up in a list, so a statement's binding time grows
// with the square of its parameters (20 000 made seeding take 20 minutes).
func insertRows(ctx context.Context, q database.Querier, table string, ncols int, args []any) error {
	batch := max(1, 1000/ncols)
	for from := 0; from < len(args); from += batch * ncols {
		part := args[from:min(from+batch*ncols, len(args))]
		var sb strings.Builder
		sb.WriteString("INSERT INTO " + table + " VALUES ")
		for i := 0; i < len(part); i += ncols {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("(" + database.Placeholders(i+1, ncols) + ")")
		}
		if _, err := q.Exec(ctx, sb.String(), part...); err != nil {
			return fmt.Errorf("insert into %s: %w", table, err)
		}
	}
	return nil
}

// BenchmarkListWithoutCounting measures, on Postgres with 200 000 tasks
// of one idea, what a page of the task list costs now and what the counts
// it no longer sends cost, in one run: the idea's list (its total from the
// kept idea_task_counts, migration 0016, against a count of the idea's
// tasks) and a page 190 000 deep read by cursor (its offset carried by the
// cursor, against a count of the tasks before it).
//
//	FOUNDRY_TEST_DATABASE_URL=postgres://... go test ./services/agent/internal/usecase -run '^$' -bench ListWithoutCounting -benchtime 100x
func BenchmarkListWithoutCounting(b *testing.B) {
	if dbtest.PostgresURL() == "" {
		b.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
	}
	const n, depth = 200_000, 190_000
	e := setup(b, database.Postgres)
	ctx := context.Background()
	start := e.clock.Now().Add(-time.Duration(n) * time.Second)
	// The counting triggers off for the load (one statement updating one
	// counter row 200 000 times walks an ever longer chain of its
	// versions), the counts written once after it.
	err := e.db.Tx(ctx, func(tx database.Querier) error {
		for _, q := range []string{`SET LOCAL session_replication_role = replica`,
			`INSERT INTO tasks (id, direction, task_type, status, model, executor, tier, command, context, idea_id, created_at, updated_at)
			SELECT 'task-' || lpad(g::text, 7, '0'), 'd', 'impl', 'pending', 'm', 'codex', 'balanced', 'c', '{}', 'idea-1',
				CAST($1 AS BIGINT) + CAST(g AS BIGINT) * 1000000, CAST($1 AS BIGINT) + CAST(g AS BIGINT) * 1000000
			FROM generate_series(1, $2) g`,
			`INSERT INTO task_counts (status, task_type, n) VALUES ('pending', 'impl', $2)`,
			`INSERT INTO idea_task_counts (idea_id, status, task_type, n) VALUES ('idea-1', 'pending', 'impl', $2)`,
		} {
			args := []any{database.Micros(start), n}
			if !strings.Contains(q, "$1") {
				args = args[1:]
				q = strings.ReplaceAll(q, "$2", "$1")
			}
			if strings.HasPrefix(q, "SET") {
				args = nil
			}
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.db.Exec(ctx, `ANALYZE tasks`); err != nil {
		b.Fatal(err)
	}
	// The task at depth in the newest-first order, and the cursor after it.
	at := start.Add(time.Duration(n-depth) * time.Second)
	id := fmt.Sprintf("task-%07d", n-depth)
	after := cursor.EncodeAt("tasks", at, id, depth)
	count := func(query string, args ...any) func() error {
		return func() error {
			var k int
			return e.db.QueryRow(ctx, query, args...).Scan(&k)
		}
	}
	b.Run("idea-page/kept-total", func(b *testing.B) {
		timed(b, func() error { _, err := e.app.List(ctx, usecase.ListQuery{IdeaID: "idea-1"}); return err })
	})
	b.Run("idea-page/the-count-it-sent", func(b *testing.B) {
		timed(b, count(`SELECT count(*) FROM tasks WHERE idea_id = $1`, "idea-1"))
	})
	b.Run("deep-cursor-page/carried-offset", func(b *testing.B) {
		timed(b, func() error {
			p, err := e.app.List(ctx, usecase.ListQuery{Cursor: after})
			if err == nil && (p.Offset != depth || len(p.Tasks) == 0) {
				err = fmt.Errorf("offset %d, %d tasks", p.Offset, len(p.Tasks))
			}
			return err
		})
	})
	b.Run("deep-cursor-page/the-count-it-sent", func(b *testing.B) {
		timed(b, count(`SELECT count(*) FROM tasks WHERE `+database.Keyset(">", ">=", 1, 2), database.Micros(at), id))
	})
}

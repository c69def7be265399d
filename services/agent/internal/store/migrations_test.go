package store_test

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// migrationsUpTo is the agent's migrations up to version v ("common/000v_...").
func migrationsUpTo(t *testing.T, v string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	all := store.Migrations()
	err := fs.WalkDir(all, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if name := d.Name(); name[:4] <= v {
			b, err := fs.ReadFile(all, path)
			if err != nil {
				return err
			}
			out[path] = &fstest.MapFile{Data: b}
		}
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestVersion4KeepsTheRollups migrates a schema holding version 2's hourly
// rollup and finished tasks to version 4: the daily rollup, the hourly
// finished counts and the duration histogram carry what it held.
func TestVersion4KeepsTheRollups(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "agent", nil)
		_, err := migrate.Up(ctx, db, migrationsUpTo(t, "0003"))
		require.NoError(t, err)

		day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
		h := func(hours int) int64 { return database.Micros(day.Add(time.Duration(hours) * time.Hour)) }
		for _, r := range []struct {
			hour                                 int64
			typ                                  string
			created, completed, failed, timedOut int64
			duration                             float64
		}{
			{h(9), "impl", 3, 1, 1, 0, 70},
			{h(15), "impl", 0, 2, 0, 1, 50},
			{h(15), "spec", 1, 0, 0, 0, 0},
			{h(24 + 1), "impl", 0, 1, 0, 0, 60},
		} {
			_, err := db.Exec(ctx, `INSERT INTO task_hourly (hour, task_type, model, executor, created, completed, failed, timed_out,
				duration_sum, value_sum, cost_sum) VALUES ($1, $2, 'm', 'x', $3, $4, $5, $6, $7, 0.5, 0.25)`,
				r.hour, r.typ, r.created, r.completed, r.failed, r.timedOut, r.duration)
			require.NoError(t, err)
		}
		for i, d := range []*float64{ptr(60.0), ptr(0.0005), nil} {
			var completed *int64
			if d != nil {
				completed = ptr(h(10 + i))
			}
			_, err := db.Exec(ctx, `INSERT INTO tasks (id, direction, task_type, status, model, executor, tier, command, context,
				duration_seconds, created_at, updated_at, completed_at) VALUES ($1, 'd', 'impl', 'completed', 'm', 'x', 't', 'c', '{}',
				$2, $3, $3, $4)`, string(rune('a'+i)), d, h(9), completed)
			require.NoError(t, err)
		}

		applied, err := migrate.Up(ctx, db, migrationsUpTo(t, "0004"))
		require.NoError(t, err)
		require.Equal(t, 1, applied, "version 4 only")

		type daily struct {
			day                                  int64
			typ                                  string
			created, completed, failed, timedOut int64
			duration, value                      float64
		}
		var days []daily
		rows, err := db.Query(ctx, `SELECT day, task_type, created, completed, failed, timed_out, duration_sum, value_sum
			FROM task_daily ORDER BY day, task_type`)
		require.NoError(t, err)
		for rows.Next() {
			var d daily
			require.NoError(t, rows.Scan(&d.day, &d.typ, &d.created, &d.completed, &d.failed, &d.timedOut, &d.duration, &d.value))
			days = append(days, d)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		require.Equal(t, []daily{
			{h(0), "impl", 3, 3, 1, 1, 120, 1},
			{h(0), "spec", 1, 0, 0, 0, 0, 0.5},
			{h(24), "impl", 0, 1, 0, 0, 60, 0.5},
		}, days)

		var finished [][3]int64
		rows, err = db.Query(ctx, `SELECT hour, completed, failed FROM task_finished_hourly ORDER BY hour`)
		require.NoError(t, err)
		for rows.Next() {
			var f [3]int64
			require.NoError(t, rows.Scan(&f[0], &f[1], &f[2]))
			finished = append(finished, f)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		require.Equal(t, [][3]int64{{h(9), 1, 1}, {h(15), 2, 1}, {h(25), 1, 0}}, finished,
			"timed out counts as failed; the hour with nothing finished has no row")

		var buckets [][3]int64
		rows, err = db.Query(ctx, `SELECT day, bucket, n FROM task_durations ORDER BY day, bucket`)
		require.NoError(t, err)
		for rows.Next() {
			var b [3]int64
			require.NoError(t, rows.Scan(&b[0], &b[1], &b[2]))
			buckets = append(buckets, b)
		}
		require.NoError(t, rows.Err())
		rows.Close()
		require.Equal(t, [][3]int64{{h(0), 0, 1}, {h(0), int64(metrics.BucketOf(60)), 1}}, buckets,
			"the SQL bucket formula agrees with metrics.BucketOf")
	})
}

func ptr[T any](v T) *T { return &v }

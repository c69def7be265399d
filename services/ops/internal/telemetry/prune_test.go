package telemetry_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/retention"
)

// dbSinkOn returns a database sink on engine (a SQLite file, or a unique
// Postgres schema dropped after the test) and a direct connection to its
// database, to look at the rows.
func dbSinkOn(t *testing.T, engine database.Engine) (telemetry.Sink, *database.DB) {
	t.Helper()
	dir := t.TempDir()
	cfg := telemetry.Config{DatabaseURL: "sqlite:" + filepath.Join(dir, "telemetry.db")}
	dbCfg := database.Config{DataDir: dir, Schema: "telemetry"}
	if engine == database.Postgres {
		cfg.DatabaseURL, cfg.Schema = dbtest.PostgresURL(), dbtest.UniqueSchema("telemetry")
		dbCfg = database.Config{URL: cfg.DatabaseURL, Schema: cfg.Schema}
	}
	s, err := telemetry.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	// The sink creates its table on first use.
	require.NoError(t, s.Check(context.Background()))
	db, err := database.Open(context.Background(), dbCfg)
	require.NoError(t, err)
	t.Cleanup(func() {
		if engine == database.Postgres {
			_, _ = db.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+cfg.Schema+` CASCADE`)
		}
		db.Close()
	})
	return s, db
}

// occurrences lists the stored events' times, oldest first.
func occurrences(t *testing.T, db *database.DB) []time.Time {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT occurred_at FROM runtime_events ORDER BY occurred_at`)
	require.NoError(t, err)
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var us int64
		require.NoError(t, rows.Scan(&us))
		out = append(out, time.UnixMicro(us).UTC())
	}
	require.NoError(t, rows.Err())
	return out
}

// TestDatabaseSinkPrune: events older than the cut go, in batches (12 000
// rows is three DELETEs), and newer ones stay.
func TestDatabaseSinkPrune(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		s, db := dbSinkOn(t, engine)
		old := events(12_000) // t0 .. t0+12 s
		recent := events(10)
		for i := range recent {
			recent[i].OccurredAt = t0.Add(time.Hour)
		}
		require.NoError(t, s.Write(ctx, append(old, recent...)))

		n, err := s.Prune(ctx, t0.Add(30*time.Minute))
		require.NoError(t, err)
		require.Equal(t, int64(12_000), n)
		require.Len(t, occurrences(t, db), 10, "the recent events stay")
		n, err = s.Prune(ctx, t0.Add(30*time.Minute))
		require.NoError(t, err)
		require.Zero(t, n, "nothing left to prune")
		n, err = s.Prune(ctx, t0.Add(2*time.Hour))
		require.NoError(t, err)
		require.Equal(t, int64(10), n, "the recent ones go once they are old enough")
		require.Empty(t, occurrences(t, db))
	})
}

// TestRetainerKeepsTheRetentionWindow: the retainer prunes at once and then
// on every tick, against its clock: an event goes once it is older than
// the retention, and not before.
func TestRetainerKeepsTheRetentionWindow(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		s, db := dbSinkOn(t, engine)
		now := t0.Add(100 * 24 * time.Hour)
		at := func(ago time.Duration) telemetry.Event {
			return telemetry.Event{OccurredAt: now.Add(-ago), Method: "GET", Route: "/api/ready", Status: 200, DurationMS: 1}
		}
		require.NoError(t, s.Write(ctx, []telemetry.Event{at(60 * 24 * time.Hour), at(25 * time.Hour), at(2 * time.Hour), at(time.Minute)}))

		fc := clock.NewFake(now)
		r := &retention.Retainer{What: "runtime telemetry", Retention: 24 * time.Hour, Interval: 10 * time.Millisecond, Clock: fc,
			Prune: func(ctx context.Context, before time.Time, _ int) (int64, error) { return s.Prune(ctx, before) }}
		runCtx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			r.Run(runCtx)
		}()
		t.Cleanup(func() {
			stop()
			<-done
		})
		want := []time.Time{now.Add(-2 * time.Hour), now.Add(-time.Minute)}
		require.Eventually(t, func() bool { return len(occurrences(t, db)) == 2 }, 10*time.Second, 10*time.Millisecond,
			"the events past 24 h go at once")
		require.Equal(t, want, occurrences(t, db), "the recent events stay")

		fc.Advance(23 * time.Hour) // the 2-hour-old event is now 25 hours old
		require.Eventually(t, func() bool { return len(occurrences(t, db)) == 1 }, 10*time.Second, 10*time.Millisecond,
			"a later tick prunes what has aged past the retention since")
		require.Equal(t, []time.Time{now.Add(-time.Minute)}, occurrences(t, db))

		n, err := r.Once(ctx)
		require.NoError(t, err)
		require.Zero(t, n, "a 23-hour-old event is kept")
	})
}

func TestFileAndOffSinksDoNotPrune(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "e.jsonl")
	for _, cfg := range []telemetry.Config{{}, {EventsPath: path}} {
		s, err := telemetry.Open(cfg)
		require.NoError(t, err)
		require.NoError(t, s.Write(context.Background(), events(3)))
		n, err := s.Prune(context.Background(), t0.Add(time.Hour))
		require.NoError(t, err)
		require.Zero(t, n)
	}
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, 3, bytes.Count(raw, []byte("\n")), "the file is never rewritten")
}

package telemetry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func events(n int) []telemetry.Event {
	out := make([]telemetry.Event, n)
	for i := range out {
		out[i] = telemetry.Event{
			OccurredAt: t0.Add(time.Duration(i) * time.Millisecond), Method: "GET",
			Route: "/api/graph/nodes/{node_id}", Status: 200 + i%2, DurationMS: 1.5,
		}
	}
	return out
}

func TestOpenPrecedence(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name        string
		cfg         telemetry.Config
		wantBackend string
		wantTarget  string
	}{
		{"database and path: the database wins",
			telemetry.Config{DatabaseURL: "postgres://u:secret@db:5432/foundry", EventsPath: filepath.Join(dir, "e.jsonl")},
			telemetry.Postgres, "postgres://u:xxxxx@db:5432/foundry"},
		{"a SQLite database URL wins over the path too",
			telemetry.Config{DatabaseURL: "sqlite:" + filepath.Join(dir, "telemetry.db"), EventsPath: filepath.Join(dir, "e.jsonl")},
			telemetry.SQLite, filepath.Join(dir, "telemetry.db")},
		{"path only: a file", telemetry.Config{EventsPath: filepath.Join(dir, "e.jsonl")}, telemetry.File, filepath.Join(dir, "e.jsonl")},
		{"neither: off", telemetry.Config{}, telemetry.Off, ""},
		{"blank values count as unset", telemetry.Config{DatabaseURL: " ", EventsPath: " "}, telemetry.Off, ""},
	}
	for _, tc := range tests {
		s, err := telemetry.Open(tc.cfg)
		require.NoError(t, err, tc.name)
		require.Equal(t, tc.wantBackend, s.Backend(), tc.name)
		require.Equal(t, tc.wantTarget, s.Target(), tc.name)
		s.Close()
	}
	for _, bad := range []string{"mysql://db/x", "sqlite:" + filepath.Join(dir, "Tele-metry.db"), "sqlite:" + dir, "not a url"} {
		_, err := telemetry.Open(telemetry.Config{DatabaseURL: bad})
		require.Error(t, err, "%q is refused", bad)
	}
}

func TestFileSink(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "nested", "events.jsonl")
	s, err := telemetry.Open(telemetry.Config{EventsPath: path})
	require.NoError(t, err)
	ctx := context.Background()
	require.NoError(t, s.Check(ctx))

	const writers, perBatch = 8, 50
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() { require.NoError(t, s.Write(ctx, events(perBatch))) })
	}
	wg.Wait()

	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	lines := 0
	for sc.Scan() {
		var got map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &got), "line %d is one JSON object: %s", lines, sc.Text())
		require.ElementsMatch(t, []string{"occurred_at", "method", "route", "status", "duration_ms"}, keys(got))
		require.Equal(t, "/api/graph/nodes/{node_id}", got["route"])
		lines++
	}
	require.NoError(t, sc.Err())
	require.Equal(t, writers*perBatch, lines, "concurrent batches lose and interleave nothing")
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestOffSinkDiscards(t *testing.T) {
	t.Parallel()
	s, err := telemetry.Open(telemetry.Config{})
	require.NoError(t, err)
	require.NoError(t, s.Write(context.Background(), events(3)))
	require.NoError(t, s.Check(context.Background()))
}

func TestDatabaseSink(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		dir := t.TempDir()
		cfg := telemetry.Config{DatabaseURL: "sqlite:" + filepath.Join(dir, "telemetry.db"), EventsPath: filepath.Join(dir, "events.jsonl")}
		readCfg := database.Config{DataDir: dir, Schema: "telemetry"}
		if engine == database.Postgres {
			cfg.DatabaseURL, cfg.Schema = dbtest.PostgresURL(), dbtest.UniqueSchema("telemetry")
			readCfg = database.Config{URL: cfg.DatabaseURL, Schema: cfg.Schema}
		}
		s, err := telemetry.Open(cfg)
		require.NoError(t, err)
		t.Cleanup(s.Close)
		require.Equal(t, string(engine), s.Backend())

		require.NoError(t, s.Check(ctx), "Check connects and migrates")
		require.NoError(t, s.Write(ctx, events(1201)), "batches larger than one INSERT chunk")
		require.NoError(t, s.Write(ctx, nil))

		db, err := database.Open(ctx, readCfg)
		require.NoError(t, err)
		t.Cleanup(func() {
			if engine == database.Postgres {
				_, _ = db.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+cfg.Schema+` CASCADE`)
			}
			db.Close()
		})
		var n, ok int
		require.NoError(t, db.QueryRow(ctx, `SELECT COUNT(*), SUM(CASE WHEN status = 200 THEN 1 ELSE 0 END) FROM runtime_events`).Scan(&n, &ok))
		require.Equal(t, 1201, n)
		require.Equal(t, 601, ok)
		var route string
		var at int64
		require.NoError(t, db.QueryRow(ctx, `SELECT route, occurred_at FROM runtime_events ORDER BY id LIMIT 1`).Scan(&route, &at))
		require.Equal(t, "/api/graph/nodes/{node_id}", route)
		require.Equal(t, t0.UnixMicro(), at)
		_, err = os.Stat(cfg.EventsPath)
		require.ErrorIs(t, err, os.ErrNotExist, "with a database configured, the events file is not written")
	})
}

func TestDatabaseSinkDownFailsWithoutHanging(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close()) // nothing listens there now
	s, err := telemetry.Open(telemetry.Config{DatabaseURL: fmt.Sprintf("postgres://u:pw@%s/x?sslmode=disable&connect_timeout=2", addr)})
	require.NoError(t, err, "opening does not connect")
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.Error(t, s.Write(ctx, events(1)))
	require.Error(t, s.Check(ctx))
	require.NoError(t, ctx.Err(), "failures are reported, not waited out")
}

package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// telemetryEventWait bounds how long an event takes to land: the gateway
// sends batches every second.
const telemetryEventWait = 20 * time.Second

// tracedRequest is a request whose event the tests look for: a route with a
// variable, a secret in the query string and one in a header. The header's
// token is no valid credential, so the read is a 401 (a credential that is
// sent must verify, also on a public read).
func tracedRequest(t *testing.T, sys *allinonetest.System) {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/graph/nodes/"+uuid.NewString()+"?token=query-secret"), nil,
		"Authorization: Bearer header-secret")
	requireStatus(t, http.StatusUnauthorized, r)
}

const tracedRoute = "/api/graph/nodes/{node_id}"

// telemetryDB opens the telemetry database the way ops does.
func telemetryDB(t *testing.T, storage allinonetest.Storage) *database.DB {
	t.Helper()
	cfg := database.Config{DataDir: storage.DataDir, Schema: "telemetry"}
	if storage.Engine == database.Postgres {
		cfg = database.Config{URL: storage.DatabaseURL, Schema: "telemetry"}
	}
	db, err := database.Open(context.Background(), cfg)
	require.NoError(t, err)
	t.Cleanup(db.Close)
	return db
}

// fileEvents reads the JSON-lines events file (nil when it does not exist).
func fileEvents(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), "one JSON object per line: %s", sc.Text())
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

func telemetryBackend(t *testing.T, sys *allinonetest.System) map[string]any {
	t.Helper()
	p := request(t, http.MethodGet, sys.URL("/api/health/persistence"), nil)
	requireStatus(t, http.StatusOK, p)
	return p.JSON["telemetry"].(map[string]any)
}

func TestTelemetryPrecedence(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		t.Run("database and path: the database wins", func(t *testing.T) {
			t.Parallel()
			storage := allinonetest.NewStorage(t, engine)
			path := filepath.Join(t.TempDir(), "events.jsonl")
			sys := allinonetest.Start(t, storage, "-runtime-database-url="+runtimeDatabaseURL(storage), "-runtime-events-path="+path)
			require.Equal(t, string(engine), telemetryBackend(t, sys)["backend"])

			tracedRequest(t, sys)
			db := telemetryDB(t, storage)
			ctx := context.Background()
			require.Eventually(t, func() bool {
				var n int
				err := db.QueryRow(ctx, `SELECT COUNT(*) FROM runtime_events WHERE route = $1`, tracedRoute).Scan(&n)
				return err == nil && n >= 1
			}, telemetryEventWait, 50*time.Millisecond, "the request's event reaches the database")

			var method string
			var status, secrets int
			require.NoError(t, db.QueryRow(ctx, `SELECT method, status FROM runtime_events WHERE route = $1`, tracedRoute).Scan(&method, &status))
			require.Equal(t, "GET", method)
			require.Equal(t, http.StatusUnauthorized, status)
			require.NoError(t, db.QueryRow(ctx, `SELECT COUNT(*) FROM runtime_events WHERE route LIKE '%secret%'`).Scan(&secrets))
			require.Zero(t, secrets, "no query string or header reaches telemetry")
			_, err := os.Stat(path)
			require.ErrorIs(t, err, os.ErrNotExist, "the events file is not used when a database is configured")
		})

		t.Run("path only: a JSON-lines file", func(t *testing.T) {
			t.Parallel()
			storage := allinonetest.NewStorage(t, engine)
			path := filepath.Join(t.TempDir(), "events.jsonl")
			sys := allinonetest.Start(t, storage, "-runtime-events-path="+path)
			require.Equal(t, "file", telemetryBackend(t, sys)["backend"])

			tracedRequest(t, sys)
			var traced map[string]any
			require.Eventually(t, func() bool {
				for _, e := range fileEvents(t, path) {
					if e["route"] == tracedRoute {
						traced = e
						return true
					}
				}
				return false
			}, telemetryEventWait, 50*time.Millisecond, "the request's event reaches the file")
			require.Equal(t, "GET", traced["method"])
			require.Equal(t, float64(http.StatusUnauthorized), traced["status"])
			require.ElementsMatch(t, []string{"occurred_at", "method", "route", "status", "duration_ms"}, keysOf(traced))
			raw, err := os.ReadFile(path)
			require.NoError(t, err)
			require.NotContains(t, string(raw), "secret", "no query string or header reaches telemetry")
			_, err = os.Stat(filepath.Join(storage.DataDir, "telemetry.db"))
			require.ErrorIs(t, err, os.ErrNotExist)
		})

		t.Run("neither: off", func(t *testing.T) {
			t.Parallel()
			storage := allinonetest.NewStorage(t, engine)
			sys := allinonetest.Start(t, storage)
			require.Equal(t, map[string]any{"backend": "off", "target": "", "status": "off", "detail": ""}, telemetryBackend(t, sys))
			tracedRequest(t, sys)
			r := request(t, http.MethodGet, sys.URL("/api/ready"), nil)
			requireStatus(t, http.StatusOK, r)
			entries, err := os.ReadDir(storage.DataDir)
			require.NoError(t, err)
			for _, e := range entries {
				require.False(t, strings.HasPrefix(e.Name(), "telemetry") || strings.HasSuffix(e.Name(), ".jsonl"), "nothing is written: %s", e.Name())
			}
		})
	})
}

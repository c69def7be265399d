package e2e_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// checkStatuses maps a readiness body's checks to their statuses.
func checkStatuses(t *testing.T, r response) map[string]string {
	t.Helper()
	out := map[string]string{}
	checks, ok := r.JSON["checks"].([]any)
	require.True(t, ok, "checks is a list: %s", r.Raw)
	for _, c := range checks {
		m := c.(map[string]any)
		out[m["name"].(string)] = m["status"].(string)
	}
	return out
}

// serviceRows maps a persistence body's services by name.
func serviceRows(t *testing.T, r response) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	services, ok := r.JSON["services"].([]any)
	require.True(t, ok, "services is a list: %s", r.Raw)
	for _, s := range services {
		m := s.(map[string]any)
		out[m["service"].(string)] = m
	}
	return out
}

// runtimeDatabaseURL is a telemetry database on the storage's engine: the
// test's own Postgres database (its "telemetry" schema) or a SQLite file
// next to the services' files.
func runtimeDatabaseURL(storage allinonetest.Storage) string {
	if storage.Engine == database.Postgres {
		return storage.DatabaseURL
	}
	return "sqlite:" + filepath.Join(storage.DataDir, "telemetry.db")
}

func TestReadinessFollowsAStoppedService(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		storage := allinonetest.NewStorage(t, engine)
		ledgerAddr := allinonetest.FreeAddr(t)
		ledger := allinonetest.StartModules(t, storage, "ledger", "-grpc-addr="+ledgerAddr)
		sys := allinonetest.StartModules(t, storage, "portfolio,agent,ops,gateway", "-ledger-addr="+ledgerAddr)

		r := request(t, http.MethodGet, sys.URL("/api/ready"), nil)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, map[string]string{"ops database": "ok", "portfolio": "ok", "ledger": "ok", "agent": "ok"}, checkStatuses(t, r))

		ledger.Stop()
		r = request(t, http.MethodGet, sys.URL("/api/ready"), nil)
		requireStatus(t, http.StatusServiceUnavailable, r)
		require.Equal(t, "not ready: ledger: unreachable", r.JSON["detail"], "the stopped service is named")

		p := request(t, http.MethodGet, sys.URL("/api/health/persistence"), nil)
		requireStatus(t, http.StatusOK, p)
		require.Equal(t, "degraded", p.JSON["status"])
		require.Equal(t, "fail", serviceRows(t, p)["ledger"]["status"])
		require.Equal(t, "ok", serviceRows(t, p)["portfolio"]["status"])

		ledger.Restart() // same storage, same gRPC address
		require.Eventually(t, func() bool {
			return request(t, http.MethodGet, sys.URL("/api/ready"), nil).Status == http.StatusOK
		}, 20*time.Second, 50*time.Millisecond, "readiness is back once the service returns")
		p = request(t, http.MethodGet, sys.URL("/api/health/persistence"), nil)
		require.Equal(t, "ok", p.JSON["status"])
	})
}

func TestReadinessNamesAnUnreachableOpsService(t *testing.T) {
	t.Parallel()
	storage := allinonetest.NewStorage(t, database.SQLite)
	opsAddr, mainAddr := allinonetest.FreeAddr(t), allinonetest.FreeAddr(t)
	ops := allinonetest.StartModules(t, storage, "ops", "-grpc-addr="+opsAddr,
		"-portfolio-addr="+mainAddr, "-ledger-addr="+mainAddr, "-agent-addr="+mainAddr)
	sys := allinonetest.StartModules(t, storage, "portfolio,ledger,agent,gateway", "-grpc-addr="+mainAddr, "-ops-addr="+opsAddr)
	requireStatus(t, http.StatusOK, request(t, http.MethodGet, sys.URL("/api/ready"), nil))
	ops.Stop()
	r := request(t, http.MethodGet, sys.URL("/api/ready"), nil)
	requireStatus(t, http.StatusServiceUnavailable, r)
	require.Equal(t, "not ready: ops: unreachable", r.JSON["detail"])
}

func TestReadyAndPersistenceWithTelemetry(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		t.Run("telemetry on a database keeps readiness green", func(t *testing.T) {
			t.Parallel()
			storage := allinonetest.NewStorage(t, engine)
			sys := allinonetest.Start(t, storage, "-runtime-database-url="+runtimeDatabaseURL(storage))
			r := request(t, http.MethodGet, sys.URL("/api/ready"), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, "ready", r.JSON["status"])
			require.Equal(t, "ok", checkStatuses(t, r)["telemetry"], "the telemetry database is checked and answers")

			p := request(t, http.MethodGet, sys.URL("/api/health/persistence"), nil)
			requireStatus(t, http.StatusOK, p)
			tel := p.JSON["telemetry"].(map[string]any)
			require.Equal(t, string(engine), tel["backend"])
			require.Equal(t, "ok", tel["status"])
		})

		t.Run("persistence with telemetry in a file while databases are available", func(t *testing.T) {
			t.Parallel()
			storage := allinonetest.NewStorage(t, engine)
			path := filepath.Join(t.TempDir(), "events.jsonl")
			sys := allinonetest.Start(t, storage, "-runtime-events-path="+path)
			p := request(t, http.MethodGet, sys.URL("/api/health/persistence"), nil, "X-API-Key: "+allinonetest.AdminKey)
			requireStatus(t, http.StatusOK, p)
			require.Equal(t, "ok", p.JSON["status"], "a telemetry file never fails the report: %s", p.Raw)
			require.Equal(t, map[string]any{"backend": "file", "target": path, "status": "ok", "detail": ""}, p.JSON["telemetry"])
			require.Equal(t, true, p.JSON["targets_shown"])

			// Without the administrator key: engines, schemas and versions,
			// but no connection target.
			pub := request(t, http.MethodGet, sys.URL("/api/health/persistence"), nil)
			requireStatus(t, http.StatusOK, pub)
			require.Equal(t, false, pub.JSON["targets_shown"])
			require.Equal(t, map[string]any{"backend": "file", "target": "", "status": "ok", "detail": ""}, pub.JSON["telemetry"])
			for name, row := range serviceRows(t, pub) {
				require.Equal(t, "", row["target"], name)
				require.Equal(t, name, row["schema"], name)
				require.NotContains(t, string(pub.Raw), sys.Storage.DataDir, "no file path leaks")
			}

			rows := serviceRows(t, p)
			require.ElementsMatch(t, allinonetest.ServiceNames(), keysOf(rows))
			for name, row := range rows {
				require.Equal(t, string(engine), row["backend"], name)
				require.Equal(t, "ok", row["status"], name)
				require.GreaterOrEqual(t, row["schema_version"], 1.0, name)
			}
			require.Equal(t, 6.0, rows["ops"]["schema_version"], "ops has its graph (with its edges in time order and counted, in all and by node), usage and monitor tables")
			if engine == database.Postgres {
				require.NotContains(t, string(p.Raw), "password")
			}

			r := request(t, http.MethodGet, sys.URL("/api/ready"), nil)
			requireStatus(t, http.StatusOK, r)
			require.NotContains(t, checkStatuses(t, r), "telemetry", "a file sink is not a readiness check")
		})
	})
}

func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

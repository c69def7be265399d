package handler_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/proto"

	opsinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	platforminternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/platform/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/handler"
	grpcpeer "github.com/foundryhq/foundry/services/ops/internal/peer"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func repos(q database.Querier) usecase.Repos {
	return usecase.Repos{
		Nodes: sqlstore.NewNodes(q), Edges: sqlstore.NewEdges(q),
		Usage: sqlstore.NewUsageSnapshots(q), Checks: sqlstore.NewChecks(q),
	}
}

// setup returns a handler over the use cases over a fresh SQLite ops
// database; cfg's clock is a fake one at t0 unless set.
func setup(t *testing.T, cfg usecase.Config) *handler.Handler {
	t.Helper()
	h, _ := setupApp(t, cfg)
	return h
}

// setupApp is setup that returns the use cases too.
func setupApp(t *testing.T, cfg usecase.Config) (*handler.Handler, *usecase.App) {
	t.Helper()
	db := dbtest.Open(t, database.SQLite, "ops", store.Migrations())
	if cfg.Clock == nil {
		cfg.Clock = clock.NewFake(t0)
	}
	uc := usecase.New(db, repos, cfg)
	t.Cleanup(uc.Close)
	return handler.New(uc), uc
}

// fakeHealth answers Check with a fixed status or error.
type fakeHealth struct {
	healthpb.HealthClient
	status healthpb.HealthCheckResponse_ServingStatus
	err    error
}

func (f fakeHealth) Check(context.Context, *healthpb.HealthCheckRequest, ...grpc.CallOption) (*healthpb.HealthCheckResponse, error) {
	return &healthpb.HealthCheckResponse{Status: f.status}, f.err
}

// fakeStorage answers DescribeStorage with a fixed description or error.
type fakeStorage struct {
	resp *platforminternalv1.DescribeStorageResponse
	err  error
}

func (f fakeStorage) DescribeStorage(_ context.Context, req *platforminternalv1.DescribeStorageRequest, _ ...grpc.CallOption) (*platforminternalv1.DescribeStorageResponse, error) {
	if f.err != nil {
		return nil, f.err
	}
	r := proto.Clone(f.resp).(*platforminternalv1.DescribeStorageResponse)
	r.Service = req.GetService()
	return r, nil
}

var okStorage = fakeStorage{resp: &platforminternalv1.DescribeStorageResponse{Backend: "sqlite", SchemaVersion: 2, Status: "ok", Target: "data/x.db"}}

func peer(name string, health fakeHealth, storage fakeStorage) usecase.Peer {
	return grpcpeer.Service{Name: name, Service: "foundry." + name + ".v1.Service", Health: health, Storage: storage}.Peer()
}

func healthy(name string) usecase.Peer {
	return peer(name, fakeHealth{status: healthpb.HealthCheckResponse_SERVING}, okStorage)
}

// downDatabaseURL is a Postgres URL where nothing listens.
func downDatabaseURL(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())
	return fmt.Sprintf("postgres://u:secret@%s/x?sslmode=disable&connect_timeout=1", addr)
}

func sink(t *testing.T, cfg telemetry.Config) telemetry.Sink {
	t.Helper()
	s, err := telemetry.Open(cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func checks(resp *opsv1.ReadyResponse) map[string]string {
	out := map[string]string{}
	for _, c := range resp.GetChecks() {
		out[c.GetName()] = c.GetStatus()
	}
	return out
}

func TestReady(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("every part answers", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{Peers: []usecase.Peer{healthy("ledger"), healthy("agent")}})
		resp, err := h.Ready(ctx, &opsv1.ReadyRequest{})
		require.NoError(t, err)
		require.Equal(t, "ready", resp.GetStatus())
		require.Equal(t, map[string]string{"ops database": "ok", "ledger": "ok", "agent": "ok"}, checks(resp))
	})

	tests := []struct {
		name   string
		ledger usecase.Peer
		want   string
	}{
		{"unreachable", peer("ledger", fakeHealth{err: errors.New("connection refused")}, okStorage), "not ready: ledger: unreachable"},
		{"not serving", peer("ledger", fakeHealth{status: healthpb.HealthCheckResponse_NOT_SERVING}, okStorage), "not ready: ledger: not serving"},
		{"database failing", peer("ledger", fakeHealth{status: healthpb.HealthCheckResponse_SERVING},
			fakeStorage{resp: &platforminternalv1.DescribeStorageResponse{Status: "fail", Detail: "dial tcp 10.0.0.1:5432: refused"}}),
			"not ready: ledger: database not answering"},
	}
	for _, tc := range tests {
		t.Run("one peer "+tc.name, func(t *testing.T) {
			t.Parallel()
			h := setup(t, usecase.Config{Peers: []usecase.Peer{tc.ledger, healthy("agent")}})
			_, err := h.Ready(ctx, &opsv1.ReadyRequest{})
			fe, ok := fault.As(err)
			require.True(t, ok, "%v", err)
			require.Equal(t, fault.Unavailable, fe.Kind)
			require.Equal(t, tc.want, fe.Detail, "the failing part is named, internals are not")
		})
	}

	t.Run("a telemetry database is reported but never fails readiness", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{
			Peers:     []usecase.Peer{healthy("ledger")},
			Telemetry: sink(t, telemetry.Config{DatabaseURL: downDatabaseURL(t), EventsPath: filepath.Join(t.TempDir(), "e.jsonl")}),
		})
		resp, err := h.Ready(ctx, &opsv1.ReadyRequest{})
		require.NoError(t, err)
		require.Equal(t, map[string]string{"ops database": "ok", "ledger": "ok", "telemetry": "fail"}, checks(resp))
	})

	t.Run("a working telemetry database is checked", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{Telemetry: sink(t, telemetry.Config{DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "telemetry.db")})})
		resp, err := h.Ready(ctx, &opsv1.ReadyRequest{})
		require.NoError(t, err)
		require.Equal(t, map[string]string{"ops database": "ok", "telemetry": "ok"}, checks(resp))
	})

	t.Run("a telemetry file is not a readiness check", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{Telemetry: sink(t, telemetry.Config{EventsPath: "/proc/no/such/dir/e.jsonl"})})
		resp, err := h.Ready(ctx, &opsv1.ReadyRequest{})
		require.NoError(t, err)
		require.Equal(t, map[string]string{"ops database": "ok"}, checks(resp))
	})
}

func TestGetPersistence(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("every service and a telemetry file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "events.jsonl")
		h := setup(t, usecase.Config{Peers: []usecase.Peer{healthy("ledger")}, Telemetry: sink(t, telemetry.Config{EventsPath: path})})
		admin := authz.WithPrincipal(ctx, authz.Principal{Kind: authz.AdminKey, Role: authz.Admin})
		resp, err := h.GetPersistence(admin, &opsv1.GetPersistenceRequest{})
		require.NoError(t, err)
		require.Equal(t, "ok", resp.GetStatus())
		require.True(t, resp.GetTargetsShown())
		require.Len(t, resp.GetServices(), 2)
		ledger, ops := resp.GetServices()[0], resp.GetServices()[1]
		require.Equal(t, []any{"ledger", "sqlite", int32(2), "ok"}, []any{ledger.GetService(), ledger.GetBackend(), ledger.GetSchemaVersion(), ledger.GetStatus()})
		require.Equal(t, []any{"ops", "sqlite", int32(6), "ok", "ops"}, []any{ops.GetService(), ops.GetBackend(), ops.GetSchemaVersion(), ops.GetStatus(), ops.GetSchema()})
		require.NotEmpty(t, ops.GetTarget(), "the administrator sees where the data lives")
		require.Equal(t, &opsv1.TelemetryPersistence{Backend: "file", Target: path, Status: "ok"}, resp.GetTelemetry())

		// Anyone else, an operator included: the same report, no targets.
		for _, c := range []context.Context{ctx, authz.WithPrincipal(ctx, authz.Principal{Kind: authz.Token, Role: authz.Operator})} {
			resp, err = h.GetPersistence(c, &opsv1.GetPersistenceRequest{})
			require.NoError(t, err)
			require.False(t, resp.GetTargetsShown())
			for _, s := range resp.GetServices() {
				require.Empty(t, s.GetTarget(), s.GetService())
			}
			require.Equal(t, "ops", resp.GetServices()[1].GetSchema(), "engine, schema and version stay public")
			require.Equal(t, &opsv1.TelemetryPersistence{Backend: "file", Status: "ok"}, resp.GetTelemetry())
		}
	})

	t.Run("a broken telemetry sink never degrades the report", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{Telemetry: sink(t, telemetry.Config{EventsPath: "/proc/no/such/dir/e.jsonl"})})
		resp, err := h.GetPersistence(ctx, &opsv1.GetPersistenceRequest{})
		require.NoError(t, err)
		require.Equal(t, "ok", resp.GetStatus())
		require.Equal(t, "fail", resp.GetTelemetry().GetStatus())
		require.NotEmpty(t, resp.GetTelemetry().GetDetail())
	})

	t.Run("telemetry off", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{})
		resp, err := h.GetPersistence(ctx, &opsv1.GetPersistenceRequest{})
		require.NoError(t, err)
		require.Equal(t, &opsv1.TelemetryPersistence{Backend: "off", Status: "off"}, resp.GetTelemetry())
	})

	t.Run("a telemetry database wins and its password is redacted", func(t *testing.T) {
		t.Parallel()
		url := downDatabaseURL(t)
		h := setup(t, usecase.Config{Telemetry: sink(t, telemetry.Config{DatabaseURL: url, EventsPath: filepath.Join(t.TempDir(), "e.jsonl")})})
		resp, err := h.GetPersistence(ctx, &opsv1.GetPersistenceRequest{})
		require.NoError(t, err)
		require.Equal(t, "postgres", resp.GetTelemetry().GetBackend())
		require.NotContains(t, resp.GetTelemetry().GetTarget(), "secret")
		require.Equal(t, "fail", resp.GetTelemetry().GetStatus(), "nothing listens there")
		require.Equal(t, "ok", resp.GetStatus())
	})

	t.Run("an unreachable service degrades the report", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{Peers: []usecase.Peer{peer("ledger", fakeHealth{}, fakeStorage{err: errors.New("refused")})}})
		resp, err := h.GetPersistence(ctx, &opsv1.GetPersistenceRequest{})
		require.NoError(t, err)
		require.Equal(t, "degraded", resp.GetStatus())
		require.Equal(t, &opsv1.ServicePersistence{Service: "ledger", Status: "fail", Detail: "unreachable"}, resp.GetServices()[0])
	})
}

// failingSink fails every write.
type failingSink struct{ telemetry.Sink }

func (failingSink) Backend() string                                { return telemetry.Postgres }
func (failingSink) Write(context.Context, []telemetry.Event) error { return errors.New("down") }

func TestRecordEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	batch := &opsinternalv1.RecordEventsRequest{Events: []*opsinternalv1.RuntimeEvent{
		{Route: "/api/graph/nodes/{node_id}", Method: "get", Status: 200, DurationMs: 1.25, OccurredAt: "2026-05-01T12:00:00Z"},
		{Route: "/api/ideas?token=secret", Method: "POST", Status: 201, DurationMs: -3, OccurredAt: "garbage"},
	}}

	t.Run("to a file", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "events.jsonl")
		h := setup(t, usecase.Config{Telemetry: sink(t, telemetry.Config{EventsPath: path})})
		resp, err := h.RecordEvents(ctx, batch)
		require.NoError(t, err)
		require.Equal(t, int32(2), resp.GetAccepted())
		lines := readLines(t, path)
		require.Equal(t, []map[string]any{
			{"occurred_at": "2026-05-01T12:00:00Z", "method": "GET", "route": "/api/graph/nodes/{node_id}", "status": 200.0, "duration_ms": 1.25},
			{"occurred_at": "2026-05-01T12:00:00Z", "method": "POST", "route": "/api/ideas", "status": 201.0, "duration_ms": 0.0},
		}, lines, "query strings are cut, bad values made sane, the time of receipt fills in")
	})

	t.Run("off accepts and discards, and says it is off", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{})
		resp, err := h.RecordEvents(ctx, batch)
		require.NoError(t, err)
		require.Equal(t, int32(0), resp.GetAccepted())
		require.True(t, resp.GetOff())
		resp, err = h.RecordEvents(ctx, &opsinternalv1.RecordEventsRequest{})
		require.NoError(t, err)
		require.True(t, resp.GetOff(), "an empty batch asks whether telemetry is on")
	})

	t.Run("on answers off false, also to an empty batch", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{Telemetry: sink(t, telemetry.Config{EventsPath: filepath.Join(t.TempDir(), "events.jsonl")})})
		resp, err := h.RecordEvents(ctx, &opsinternalv1.RecordEventsRequest{})
		require.NoError(t, err)
		require.False(t, resp.GetOff())
		require.Equal(t, int32(0), resp.GetAccepted())
	})

	t.Run("a failing sink is counted and reported to the sender only", func(t *testing.T) {
		t.Parallel()
		reg := prometheus.NewRegistry()
		h := setup(t, usecase.Config{Telemetry: failingSink{}, Metrics: reg})
		_, err := h.RecordEvents(ctx, batch)
		require.Equal(t, fault.Unavailable, fault.KindOf(err))
		require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP foundry_telemetry_events_failed_total Runtime telemetry events lost because the telemetry sink failed.
# TYPE foundry_telemetry_events_failed_total counter
foundry_telemetry_events_failed_total 2
`), "foundry_telemetry_events_failed_total"))
	})

	t.Run("oversized batches are refused", func(t *testing.T) {
		t.Parallel()
		h := setup(t, usecase.Config{})
		big := &opsinternalv1.RecordEventsRequest{Events: make([]*opsinternalv1.RuntimeEvent, 5001)}
		_, err := h.RecordEvents(ctx, big)
		require.Equal(t, fault.Invalid, fault.KindOf(err))
	})
}

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		out = append(out, m)
	}
	require.NoError(t, sc.Err())
	return out
}

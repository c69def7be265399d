package e2e_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

func TestGatewaySurface(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))

	t.Run("ready", func(t *testing.T) {
		r := request(t, http.MethodGet, sys.URL("/api/ready"), nil)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, "ready", r.JSON["status"])
		checks, _ := r.JSON["checks"].([]any)
		var names []string
		for _, c := range checks {
			names = append(names, c.(map[string]any)["name"].(string))
		}
		require.ElementsMatch(t, []string{"ops database", "portfolio", "ledger", "agent"}, names)
	})

	t.Run("openapi document", func(t *testing.T) {
		r := request(t, http.MethodGet, sys.URL("/api/openapi.json"), nil)
		requireStatus(t, http.StatusOK, r)
		paths, _ := r.JSON["paths"].(map[string]any)
		for _, p := range []string{"/api/onboarding/register", "/api/ideas", "/api/agent/tasks", "/api/graph/edges"} {
			require.Contains(t, paths, p)
		}
	})

	t.Run("docs page is served from the binary", func(t *testing.T) {
		r := request(t, http.MethodGet, sys.URL("/api/docs/"), nil)
		require.Equal(t, http.StatusOK, r.Status)
		require.Contains(t, r.Header.Get("Content-Type"), "text/html")
		require.Contains(t, string(r.Raw), "Foundry")
		require.NotContains(t, string(r.Raw), "://cdn", "no external assets")
	})

	t.Run("unknown routes are JSON 404s", func(t *testing.T) {
		for _, p := range []string{"/api/nope", "/api/onboarding/nope", "/elsewhere"} {
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL(p), nil))
		}
	})

	t.Run("a wrong method is 405, not 501", func(t *testing.T) {
		requireStatus(t, http.StatusMethodNotAllowed, request(t, http.MethodDelete, sys.URL("/api/onboarding/register"), nil))
	})

	t.Run("gRPC metadata does not leak into HTTP headers", func(t *testing.T) {
		r := register(t, sys, "header_check")
		requireStatus(t, http.StatusCreated, r)
		for name := range r.Header {
			require.NotContains(t, []string{"Grpc-Metadata-X-Http-Code", "Grpc-Metadata-Content-Type"}, name)
		}
	})
}

func TestGRPCListsEveryService(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	conn, err := grpc.NewClient(sys.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx := context.Background()

	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	require.NoError(t, err)
	require.NoError(t, stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{ListServices: ""},
	}))
	resp, err := stream.Recv()
	require.NoError(t, err)
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{
		"foundry.portfolio.v1.PortfolioService", "foundry.ledger.v1.LedgerService",
		"foundry.agent.v1.AgentService", "foundry.ops.v1.OpsService", "grpc.health.v1.Health",
	} {
		require.True(t, slices.Contains(names, want), "%s missing from %v", want, names)
	}

	health := healthpb.NewHealthClient(conn)
	for _, svc := range []string{"", "foundry.ledger.v1.LedgerService", "foundry.ops.v1.OpsService"} {
		hr, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		require.NoError(t, err)
		require.Equal(t, healthpb.HealthCheckResponse_SERVING, hr.GetStatus(), "service %q", svc)
	}
}

package e2e_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
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
		require.ElementsMatch(t, allinonetest.ReadinessChecks(), names)
	})

	t.Run("openapi document", func(t *testing.T) {
		r := request(t, http.MethodGet, sys.URL("/api/openapi.json"), nil)
		requireStatus(t, http.StatusOK, r)
		paths, _ := r.JSON["paths"].(map[string]any)
		for _, p := range []string{"/api/onboarding/register", "/api/ideas", "/api/agent/tasks", "/api/graph/edges"} {
			require.Contains(t, paths, p)
		}
		info, _ := r.JSON["info"].(map[string]any)
		require.Equal(t, "Foundry API", info["title"])
		require.Equal(t, "1.0.0", info["version"])
		require.Equal(t, "3.1.1", r.JSON["openapi"])
		components, _ := r.JSON["components"].(map[string]any)
		defs, _ := components["securitySchemes"].(map[string]any)
		require.Equal(t, map[string]any{"type": "apiKey", "in": "header", "name": "Authorization"},
			pick(defs["BearerAuth"], "type", "in", "name"))
		require.Equal(t, map[string]any{"type": "apiKey", "in": "header", "name": "X-API-Key"},
			pick(defs["ApiKeyAuth"], "type", "in", "name"))
		// Each operation's credentials come from its RPC's policy: either
		// credential where a role is needed (x-foundry-roles says which), an
		// optional one for reads, none for public routes.
		operation := func(path, method string) map[string]any {
			op, _ := paths[path].(map[string]any)[method].(map[string]any)
			require.NotNil(t, op, "%s %s", method, path)
			return op
		}
		either := []any{map[string]any{"BearerAuth": []any{}}, map[string]any{"ApiKeyAuth": []any{}}}
		optional := append([]any{map[string]any{}}, either...)
		for _, path := range []string{"/api/cc/stake", "/api/ideas/{idea_id}/stake"} {
			stake := operation(path, "post")
			require.Equal(t, either, stake["security"], path)
			require.Equal(t, []any{"contributor"}, stake["x-foundry-roles"], "%s: the owner's session", path)
			require.Equal(t, "contributor_id", stake["x-foundry-self"], path)
		}
		require.Equal(t, []any{}, operation("/api/onboarding/session", "get")["security"], "the session check reads the token itself")
		deposit := operation("/api/cc/deposit", "post")
		require.Equal(t, either, deposit["security"])
		require.Equal(t, []any{"admin"}, deposit["x-foundry-roles"])
		stage := operation("/api/ideas/{idea_id}/stage", "post")
		require.Equal(t, either, stage["security"])
		require.Equal(t, []any{"operator"}, stage["x-foundry-roles"])
		require.Equal(t, optional, operation("/api/health/persistence", "get")["security"], "a read: the key only shows more")
		require.Equal(t, optional, operation("/api/ideas", "get")["security"], "a read's credential is optional")
		require.Equal(t, []any{}, operation("/api/onboarding/register", "post")["security"], "public routes need none")
	})

	t.Run("docs page is served from the binary", func(t *testing.T) {
		r := request(t, http.MethodGet, sys.URL("/api/docs/"), nil)
		require.Equal(t, http.StatusOK, r.Status)
		require.Contains(t, r.Header.Get("Content-Type"), "text/html")
		require.Contains(t, string(r.Raw), "Foundry")
		require.NotContains(t, string(r.Raw), "://", "no external assets")
		require.Contains(t, string(r.Raw), `src="swagger-ui/swagger-ui-bundle.js"`)
		js := request(t, http.MethodGet, sys.URL("/api/docs/swagger-ui/swagger-ui-bundle.js"), nil)
		require.Equal(t, http.StatusOK, js.Status)
		require.Contains(t, js.Header.Get("Content-Type"), "javascript")
		require.Greater(t, len(js.Raw), 1<<20, "the vendored renderer, whole")
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
	conn := sys.Dial(t)
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

// pick returns the keys of the JSON object v (nil when v is not one).
func pick(v any, keys ...string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	out := map[string]any{}
	for _, k := range keys {
		out[k] = m[k]
	}
	return out
}

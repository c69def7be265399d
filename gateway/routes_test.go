package gateway

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/stretchr/testify/require"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// publicMuxes are a mux per public service with its routes (their clients
// are never called here), by short service name.
func publicMuxes(t *testing.T) map[string]*runtime.ServeMux {
	t.Helper()
	ctx := context.Background()
	register := map[string]func(context.Context, *runtime.ServeMux) error{
		serviceName(portfoliov1.PortfolioService_ServiceDesc.ServiceName): func(ctx context.Context, m *runtime.ServeMux) error {
			return portfoliov1.RegisterPortfolioServiceHandlerClient(ctx, m, portfoliov1.NewPortfolioServiceClient(nil))
		},
		serviceName(ledgerv1.LedgerService_ServiceDesc.ServiceName): func(ctx context.Context, m *runtime.ServeMux) error {
			return ledgerv1.RegisterLedgerServiceHandlerClient(ctx, m, ledgerv1.NewLedgerServiceClient(nil))
		},
		serviceName(agentv1.AgentService_ServiceDesc.ServiceName): func(ctx context.Context, m *runtime.ServeMux) error {
			return agentv1.RegisterAgentServiceHandlerClient(ctx, m, agentv1.NewAgentServiceClient(nil))
		},
		serviceName(opsv1.OpsService_ServiceDesc.ServiceName): func(ctx context.Context, m *runtime.ServeMux) error {
			return opsv1.RegisterOpsServiceHandlerClient(ctx, m, opsv1.NewOpsServiceClient(nil))
		},
	}
	out := map[string]*runtime.ServeMux{}
	for name, reg := range register {
		m := newAPIMux()
		require.NoError(t, reg(ctx, m), name)
		out[name] = m
	}
	return out
}

// TestEveryOperationIsRoutedToItsService: each operation of the generated
// document has a pattern of its own on the root mux, leading to its
// service's mux; a request no operation names (another method, a trailing
// slash, an unknown path) reaches the mux of every route under /api/, as
// before, whose answers did not change.
func TestEveryOperationIsRoutedToItsService(t *testing.T) {
	ops, err := operations(openAPI)
	require.NoError(t, err)
	require.Greater(t, len(ops), 70, "every operation of the document")
	byService := publicMuxes(t)
	all := newAPIMux()
	root := http.NewServeMux()
	root.Handle("/api/", all)
	ready := http.NotFoundHandler()
	root.Handle("GET /api/ready", ready) // served by hand, and an operation of the document
	require.NoError(t, routeOperations(root, ops, byService))
	h, pattern := root.Handler(httptest.NewRequest(http.MethodGet, "/api/ready", nil))
	require.Equal(t, "GET /api/ready", pattern)
	require.Equal(t, fmt.Sprintf("%p", ready), fmt.Sprintf("%p", h), "a route served by hand keeps its handler")

	wildcard := regexp.MustCompile(`\{[^}]+\}`)
	for _, op := range ops {
		if op.pattern() == "GET /api/ready" {
			continue
		}
		own := byService[op.service]
		require.NotNil(t, own, "%s: a public service's operation", op.pattern())
		req := httptest.NewRequest(op.method, wildcard.ReplaceAllString(op.path, "0193a3c0-aaaa-7bbb-8ccc-123456789abc"), nil)
		h, pattern := root.Handler(req)
		require.Equal(t, op.pattern(), pattern, "the operation's own pattern")
		require.Same(t, own, h, "%s: its service's mux", op.pattern())
	}
	for _, target := range []string{"DELETE /api/ideas/x", "GET /api/ideas/", "GET /api/no-such-thing", "PUT /api/agent/tasks"} {
		method, path, _ := strings.Cut(target, " ")
		h, pattern := root.Handler(httptest.NewRequest(method, path, nil))
		require.Equal(t, "/api/", pattern, target)
		require.Same(t, all, h, target)
	}

	// A service the gateway is not given: its operations fall to /api/.
	partial := http.NewServeMux()
	partial.Handle("/api/", all)
	require.NoError(t, routeOperations(partial, ops, map[string]*runtime.ServeMux{"PortfolioService": byService["PortfolioService"]}))
	_, pattern = partial.Handler(httptest.NewRequest(http.MethodGet, "/api/assets/a", nil))
	require.Equal(t, "/api/", pattern)
}

// TestConflictingOperationsAreAnError: two operations net/http cannot tell
// apart stop the gateway from starting instead of panicking.
func TestConflictingOperationsAreAnError(t *testing.T) {
	byService := map[string]*runtime.ServeMux{"A": newAPIMux()}
	err := routeOperations(http.NewServeMux(), []operation{
		{method: http.MethodGet, path: "/api/a/{x}/b", service: "A"},
		{method: http.MethodGet, path: "/api/a/c/{y}", service: "A"},
	}, byService)
	require.ErrorContains(t, err, "the API's routes")
	require.ErrorContains(t, err, "conflicts")
}

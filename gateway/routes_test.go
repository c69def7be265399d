package gateway

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/stretchr/testify/require"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// publicRoutes register each public service's routes on a mux (their
// clients are never called here), by short service name.
var publicRoutes = map[string]func(*runtime.ServeMux) error{
	serviceName(portfoliov1.PortfolioService_ServiceDesc.ServiceName): func(m *runtime.ServeMux) error {
		return portfoliov1.RegisterPortfolioServiceHandlerClient(context.Background(), m, portfoliov1.NewPortfolioServiceClient(nil))
	},
	serviceName(ledgerv1.LedgerService_ServiceDesc.ServiceName): func(m *runtime.ServeMux) error {
		return ledgerv1.RegisterLedgerServiceHandlerClient(context.Background(), m, ledgerv1.NewLedgerServiceClient(nil))
	},
	serviceName(agentv1.AgentService_ServiceDesc.ServiceName): func(m *runtime.ServeMux) error {
		return agentv1.RegisterAgentServiceHandlerClient(context.Background(), m, agentv1.NewAgentServiceClient(nil))
	},
	serviceName(opsv1.OpsService_ServiceDesc.ServiceName): func(m *runtime.ServeMux) error {
		return opsv1.RegisterOpsServiceHandlerClient(context.Background(), m, opsv1.NewOpsServiceClient(nil))
	},
}

// operationMuxesOf are operationMuxes of the named public services, by
// operation pattern.
func operationMuxesOf(t *testing.T, ops []operation, services ...string) map[string]*runtime.ServeMux {
	t.Helper()
	out := map[string]*runtime.ServeMux{}
	for _, name := range services {
		own, err := operationMuxes(ops, name, testForwarder(t), publicRoutes[name])
		require.NoError(t, err, name)
		maps.Copy(out, own)
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
	byOperation := operationMuxesOf(t, ops, slices.Collect(maps.Keys(publicRoutes))...)
	all := newAPIMux(testForwarder(t))
	root := http.NewServeMux()
	root.Handle("/api/", all)
	ready := http.NotFoundHandler()
	root.Handle("GET /api/ready", ready) // served by hand, and an operation of the document
	require.NoError(t, routeOperations(root, ops, byOperation))
	h, pattern := root.Handler(httptest.NewRequest(http.MethodGet, "/api/ready", nil))
	require.Equal(t, "GET /api/ready", pattern)
	require.Equal(t, fmt.Sprintf("%p", ready), fmt.Sprintf("%p", h), "a route served by hand keeps its handler")

	for _, op := range ops {
		if op.pattern() == "GET /api/ready" {
			continue
		}
		own := byOperation[op.pattern()]
		require.NotNil(t, own, "%s: a public service's operation", op.pattern())
		h, pattern := root.Handler(httptest.NewRequest(op.method, samplePath(op.path), nil))
		require.Equal(t, op.pattern(), pattern, "the operation's own pattern")
		require.Same(t, own, h, "%s: its own mux", op.pattern())
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
	require.NoError(t, routeOperations(partial, ops, operationMuxesOf(t, ops, "PortfolioService")))
	_, pattern = partial.Handler(httptest.NewRequest(http.MethodGet, "/api/assets/a", nil))
	require.Equal(t, "/api/", pattern)
}

// TestConflictingOperationsAreAnError: two operations net/http cannot tell
// apart stop the gateway from starting instead of panicking.
func TestConflictingOperationsAreAnError(t *testing.T) {
	err := routeOperations(http.NewServeMux(), []operation{
		{method: http.MethodGet, path: "/api/a/{x}/b", service: "A"},
		{method: http.MethodGet, path: "/api/a/c/{y}", service: "A"},
	}, map[string]*runtime.ServeMux{"GET /api/a/{x}/b": newAPIMux(testForwarder(t)), "GET /api/a/c/{y}": newAPIMux(testForwarder(t))})
	require.ErrorContains(t, err, "the API's routes")
	require.ErrorContains(t, err, "conflicts")
}

// TestRouteLabelOfEveryOperation: the route label of every operation (its
// method and grpc-gateway's form of its pattern, "GET /api/ideas/{idea_id=*}")
// is the same when built and when kept, also for a request that reaches
// its service's routes under /api/. The label names the
// pattern that took the request, so this also holds each operation's own mux
// to the operation's pattern.
func TestRouteLabelOfEveryOperation(t *testing.T) {
	ops, err := operations(openAPI)
	require.NoError(t, err)
	root := http.NewServeMux()
	require.NoError(t, routeOperations(root, ops, operationMuxesOf(t, ops, slices.Collect(maps.Keys(publicRoutes))...)))
	label := func(h http.Handler, method, path string) string {
		ex := &exchange{}
		req := httptest.NewRequest(method, path, strings.NewReader("{}"))
		req.Header.Set("Content-Type", "application/json")
		req = req.WithContext(context.WithValue(req.Context(), exchangeKey{}, ex))
		func() {
			defer func() { _ = recover() }() // the services' clients have no connection
			h.ServeHTTP(httptest.NewRecorder(), req)
		}()
		return ex.route
	}
	for _, op := range ops {
		path := samplePath(op.path)
		want := op.method + " " + wildcard.ReplaceAllStringFunc(op.path, func(w string) string { return strings.TrimSuffix(w, "}") + "=*}" })
		require.Equal(t, want, label(root, op.method, path), "built")
		require.Equal(t, want, label(root, op.method, path), "kept")
		under := newAPIMux(testForwarder(t))
		require.NoError(t, publicRoutes[op.service](under))
		require.Equal(t, want, label(under, op.method, path), "reached under /api/")
	}
}

// TestOperationMuxesRefuseAnOperationNoRouteTakes: an operation of the
// document that the service's generated routes do not serve stops the
// gateway at start.
func TestOperationMuxesRefuseAnOperationNoRouteTakes(t *testing.T) {
	_, err := operationMuxes([]operation{{method: http.MethodGet, path: "/api/no-such/{x}", service: "PortfolioService"}},
		"PortfolioService", testForwarder(t), publicRoutes["PortfolioService"])
	require.ErrorContains(t, err, "GET /api/no-such/{x}: no route of PortfolioService takes it")
}

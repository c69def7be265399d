package gateway

import (
	"context"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	ledgerinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
	opsinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	portfoliointernalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/grpcserver"
	"github.com/foundryhq/foundry/services/platform/requestid"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/servicecred"
)

// TestInternalServicesHaveNoRoute: the REST mapping names only the public
// services. An internal RPC reachable over REST would skip the service
// credential, since the gateway presents it on every call it forwards.
func TestInternalServicesHaveNoRoute(t *testing.T) {
	mapping, err := os.ReadFile("api.yaml")
	require.NoError(t, err)
	selectors := regexp.MustCompile(`selector:\s*foundry\.[a-z]+\.v1\.([A-Za-z]+)\.`).FindAllStringSubmatch(string(mapping), -1)
	require.Greater(t, len(selectors), 50, "api.yaml's rules were read")
	public := map[string]bool{"PortfolioService": true, "LedgerService": true, "AgentService": true, "OpsService": true}
	for _, m := range selectors {
		require.True(t, public[m[1]], "api.yaml maps a method of %s, which is not a public service", m[1])
	}
	for _, internal := range []string{
		portfoliointernalv1.PortfolioInternalService_ServiceDesc.ServiceName,
		ledgerinternalv1.LedgerInternalService_ServiceDesc.ServiceName,
		opsinternalv1.OpsInternalService_ServiceDesc.ServiceName,
		"foundry.internal.platform.v1.StorageService",
	} {
		require.NotContains(t, string(mapping), internal+".")
	}
}

// TestClientCannotSendServiceKey: no REST header becomes the service-key
// metadata or the verified principal, whatever its spelling; only the
// gateway's own connection presents the key, and only its edge
// authentication names the principal. The credentials themselves stay at
// the edge too (authenticate removes them).
func TestClientCannotSendServiceKey(t *testing.T) {
	for _, h := range []string{servicecred.MetadataKey, "Foundry-Service-Key", "Grpc-Metadata-Foundry-Service-Key", "grpc-metadata-foundry-service-key",
		authz.MetadataKey, "Foundry-Principal", "Grpc-Metadata-Foundry-Principal", "X-Api-Key", "Authorization"} {
		_, forwarded := incomingHeader(h)
		require.False(t, forwarded, "header %q must not be forwarded", h)
	}
	key, forwarded := incomingHeader("Idempotency-Key")
	require.True(t, forwarded, "the Idempotency-Key is")
	require.Equal(t, "idempotency-key", key)
}

// TestServicesSeeOnlyTheMetadataTheyRead: a call the gateway makes for a
// REST request carries, besides gRPC's own headers, exactly the metadata the
// services act on: the service credential, the principal, the client's
// address and the request's id. Every other key would cost both ends of
// the hop on every call; the Host the client asked for (grpc-gateway's
// x-forwarded-host) is one nothing reads.
func TestServicesSeeOnlyTheMetadataTheyRead(t *testing.T) {
	seen := make(chan metadata.MD, 1)
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		seen <- md
		return handler(ctx, req)
	}))
	portfoliov1.RegisterPortfolioServiceServer(srv, ideaServer{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(),
		grpcserver.ClientOptions(grpcserver.NewClientMetrics(nil), grpcserver.ClientCredentials{ServiceKey: "the-key"})...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })

	api := newAPIMux(testForwarder(t))
	require.NoError(t, portfoliov1.RegisterPortfolioServiceHandlerClient(context.Background(), api, portfoliov1.NewPortfolioServiceClient(conn)))
	root := http.NewServeMux()
	root.Handle("/api/", api)
	h := edge(root, Config{MaxBodyBytes: 1 << 20, RequestTimeout: time.Minute}, zap.NewNop(), nil, &app.Settings{HTTPAddr: "127.0.0.1:8080"}, nil, nil)
	req := httptest.NewRequest(http.MethodGet, "http://localhost:8080/api/ideas/an-idea", nil)
	req.RemoteAddr = "127.0.0.1:40000"
	req.Header.Set(requestid.Header, "the-request")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	md := <-seen
	got := slices.Sorted(maps.Keys(md))
	require.Equal(t, []string{":authority", "content-type", "foundry-principal", servicecred.MetadataKey,
		"grpc-accept-encoding", "user-agent", "x-forwarded-for", requestid.Key}, got)
	require.Equal(t, []string{"the-key"}, md.Get(servicecred.MetadataKey))
	principal := md.Get(authz.MetadataKey)
	require.Len(t, principal, 1)
	require.True(t, strings.HasPrefix(principal[0], authz.Principal{Kind: authz.Anonymous}.Encode()+"&until="), "%q", principal)
	require.True(t, authz.Signed(principal[0]), "the gateway signs the principal it forwards: %q", principal)
	require.Equal(t, []string{"127.0.0.1"}, md.Get(rpcmeta.ForwardedForKey))
	require.Equal(t, []string{"the-request"}, md.Get(requestid.Key))
}

// ideaServer answers GetIdea with the idea asked for.
type ideaServer struct {
	portfoliov1.UnimplementedPortfolioServiceServer
}

func (ideaServer) GetIdea(_ context.Context, req *portfoliov1.GetIdeaRequest) (*portfoliov1.GetIdeaResponse, error) {
	return &portfoliov1.GetIdeaResponse{Idea: &portfoliov1.Idea{Id: req.GetId()}}, nil
}

// TestAccessLevel: a 5xx is logged as an error, but the 501 the contract
// asks of a stubbed route is not a fault.
func TestAccessLevel(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]zapcore.Level{
		http.StatusOK: zapcore.InfoLevel, http.StatusUnprocessableEntity: zapcore.InfoLevel,
		http.StatusNotImplemented: zapcore.InfoLevel, http.StatusInternalServerError: zapcore.ErrorLevel,
		http.StatusServiceUnavailable: zapcore.ErrorLevel, http.StatusGatewayTimeout: zapcore.ErrorLevel,
	} {
		require.Equal(t, want, accessLevel(status), "status %d", status)
	}
}

// testForwarder signs the principals a test's gateway forwards, with a key
// made for the test.
func testForwarder(t testing.TB) *authz.Forwarder {
	t.Helper()
	skey, _, err := authz.GenerateKey("gateway-test")
	require.NoError(t, err)
	f, err := authz.NewForwarder(skey)
	require.NoError(t, err)
	return f
}

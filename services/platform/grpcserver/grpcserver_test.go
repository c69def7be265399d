package grpcserver_test

import (
	"context"
	"net"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/foundryhq/foundry/services/platform/grpcserver"
	"github.com/foundryhq/foundry/services/platform/requestid"
)

// method is a unary method of the test service test.Panicky that runs fn
// (health messages serve as its request and response).
func method(name string, fn func() error) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(srv any, ctx context.Context, dec func(any) error,
		interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := new(healthpb.HealthCheckRequest)
		if err := dec(in); err != nil {
			return nil, err
		}
		handler := func(context.Context, any) (any, error) { return &healthpb.HealthCheckResponse{}, fn() }
		return interceptor(ctx, in, &grpc.UnaryServerInfo{Server: srv, FullMethod: "/test.Panicky/" + name}, handler)
	}}
}

// TestServerRecoversLogsAndCounts serves a panicking method through the
// server's interceptors: the caller gets Internal, the panic and the call
// are logged with the request id, the standard metrics count both calls,
// and the client metrics count the caller's side, but for a call the
// gateway makes at the edge.
func TestServerRecoversLogsAndCounts(t *testing.T) {
	core, logs := observer.New(zapcore.InfoLevel)
	reg := prometheus.NewRegistry()
	server := grpcserver.New(zap.New(core), reg, grpcserver.Options{Reflection: true, ServiceKey: "k"})
	server.RegisterService(&grpc.ServiceDesc{ServiceName: "test.Panicky", HandlerType: (*any)(nil), Methods: []grpc.MethodDesc{
		method("Check", func() error { panic("boom") }),
		method("List", func() error { return status.Error(codes.NotFound, "nothing here") }),
	}}, struct{}{})
	server.InitializeMetrics()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = server.Serve(lis) }()
	t.Cleanup(server.Stop)

	clientMetrics := grpcserver.NewClientMetrics(reg)
	conn, err := grpc.NewClient(lis.Addr().String(), grpcserver.ClientOptions(clientMetrics, grpcserver.ClientCredentials{ServiceKey: "k"})...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	ctx := requestid.With(context.Background(), "req-42")

	err = conn.Invoke(ctx, "/test.Panicky/Check", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	require.Equal(t, codes.Internal, status.Code(err))
	require.Equal(t, "internal error", status.Convert(err).Message(), "the panic's value stays in the log")
	err = conn.Invoke(ctx, "/test.Panicky/List", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	require.Equal(t, codes.NotFound, status.Code(err))

	panics := logs.FilterMessage("panic in handler").All()
	require.Len(t, panics, 1)
	require.Equal(t, "boom", panics[0].ContextMap()["panic"])
	require.Equal(t, "req-42", panics[0].ContextMap()["request_id"])
	calls := logs.FilterMessage("finished call").All()
	require.Len(t, calls, 2, "Internal at error and NotFound at info are both above the level")
	byCode := map[string]zapcore.Level{}
	for _, c := range calls {
		m := c.ContextMap()
		require.Equal(t, "req-42", m["request_id"])
		require.Equal(t, "test.Panicky", m["grpc.service"])
		byCode[m["grpc.code"].(string)] = c.Level
	}
	require.Equal(t, map[string]zapcore.Level{"Internal": zapcore.ErrorLevel, "NotFound": zapcore.InfoLevel}, byCode)

	handled := func(kind, code, method string) float64 {
		return counter(t, reg, "grpc_"+kind+"_handled_total", map[string]string{"grpc_code": code, "grpc_service": "test.Panicky", "grpc_method": method})
	}
	require.Equal(t, 1.0, handled("server", "Internal", "Check"))
	require.Equal(t, 1.0, handled("server", "NotFound", "List"))
	require.Equal(t, 0.0, handled("server", "OK", "Check"), "InitializeMetrics made every series")
	require.Equal(t, 1.0, handled("client", "Internal", "Check"))
	require.Equal(t, 1.0, handled("client", "NotFound", "List"))

	// A call the gateway makes for a request (AtEdge) is the server's to
	// count, not the client's: measured at the edge and by the service.
	err = conn.Invoke(grpcserver.AtEdge(ctx), "/test.Panicky/List", &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	require.Equal(t, codes.NotFound, status.Code(err))
	require.Equal(t, 2.0, handled("server", "NotFound", "List"))
	require.Equal(t, 1.0, handled("client", "NotFound", "List"), "not counted as a client call")
}

// counter is the value of the counter series of name whose labels include
// want; the test fails when there is none.
func counter(t *testing.T, reg *prometheus.Registry, name string, want map[string]string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if labels[k] != v {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	t.Fatalf("no %s series with %v", name, want)
	return 0
}

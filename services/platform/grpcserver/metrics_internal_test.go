package grpcserver

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestServerMetricsAsTheProvider: Foundry's grpc_server_* series are
// go-grpc-middleware's Prometheus provider's, for the same calls: the same
// families (name, help, type), the same series (labels, every method's
// created at zero), the same counts (calls started and handled by code,
// messages received and sent, durations observed, into the same buckets)
// and the same exemplars (the trace of a sampled call). Unary calls that
// succeed, fail with a status, with a context error and with a code gRPC
// does not define, and a stream that sends messages and is cancelled, are
// made to a server of each, and a call of a method neither server had
// when it was initialised (only the code that call reached gets a series).
func TestServerMetricsAsTheProvider(t *testing.T) {
	theirs := prometheus.NewRegistry()
	provider := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(latencyBuckets)))
	theirs.MustRegister(provider)
	exemplar := grpcprom.WithExemplarFromContext(exemplarOf)
	theirUnary := provider.UnaryServerInterceptor(exemplar)
	makeCalls(t, theirs, metricsServer(t, theirUnary, provider.StreamServerInterceptor(exemplar),
		func(s *grpc.Server) { provider.InitializeMetrics(s) }))
	callUnregistered(theirUnary)

	ours := prometheus.NewRegistry()
	m := newServerMetrics(latencyBuckets)
	ours.MustRegister(m)
	makeCalls(t, ours, metricsServer(t, m.unary, m.stream, m.initialize))
	callUnregistered(m.unary)

	want, got := families(t, theirs), families(t, ours)
	require.Greater(t, len(want), 20, "the provider's series were gathered")
	require.Equal(t, want, got)
}

// metricsServer serves the health service and test.Metrics, whose methods
// answer as their names say, with the metrics interceptors, runs
// initialize once they are registered, and returns its address. A call
// that asks for it ("sampled" metadata) has a sampled trace in its context,
// as the stats handler puts one there when the process exports traces.
func metricsServer(t *testing.T, unary grpc.UnaryServerInterceptor, stream grpc.StreamServerInterceptor, initialize func(*grpc.Server)) string {
	sampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4}, TraceFlags: trace.FlagsSampled})
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
			if md, _ := metadata.FromIncomingContext(ctx); len(md.Get("sampled")) > 0 {
				ctx = trace.ContextWithSpanContext(ctx, sampled)
			}
			return unary(ctx, req, info, handler)
		}),
		grpc.ChainStreamInterceptor(stream))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "test.Metrics",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{
			answer("Ok", nil),
			answer("NotFound", status.Error(codes.NotFound, "no such thing")),
			answer("Deadline", context.DeadlineExceeded),
			answer("Undefined", status.Error(codes.Code(42), "a code of its own")),
		},
	}, struct{}{})
	initialize(srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// makeCalls makes the test's calls to the server at addr, whose metrics
// are in reg: test.Metrics' methods (Ok twice, and once with a sampled
// trace), a health check of an unknown service, and a health watch that
// receives its first message and is cancelled.
func makeCalls(t *testing.T, reg *prometheus.Registry, addr string) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	ctx := context.Background()
	for _, name := range []string{"Ok", "Ok", "NotFound", "Deadline", "Undefined"} {
		_ = conn.Invoke(ctx, "/test.Metrics/"+name, &healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	}
	_ = conn.Invoke(metadata.AppendToOutgoingContext(ctx, "sampled", "yes"), "/test.Metrics/Ok",
		&healthpb.HealthCheckRequest{}, &healthpb.HealthCheckResponse{})
	_, err = healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "no-such-service"})
	require.Equal(t, codes.NotFound, status.Code(err))
	watchCtx, cancel := context.WithCancel(ctx)
	watch, err := healthpb.NewHealthClient(conn).Watch(watchCtx, &healthpb.HealthCheckRequest{})
	require.NoError(t, err)
	_, err = watch.Recv()
	require.NoError(t, err)
	cancel()
	_, err = watch.Recv()
	require.Equal(t, codes.Canceled, status.Code(err))
	// The server ends its side of the stream after the client has seen it
	// end.
	require.Eventually(t, func() bool {
		return slices.ContainsFunc(families(t, reg), func(line string) bool {
			return strings.HasPrefix(line, "grpc_server_handled_total") && strings.Contains(line, "grpc_code=Canceled") &&
				strings.Contains(line, "grpc_method=Watch") && strings.HasSuffix(line, "} 1")
		})
	}, 5*time.Second, time.Millisecond)
}

// callUnregistered passes a failed call of a method no server registered
// through the interceptor.
func callUnregistered(unary grpc.UnaryServerInterceptor) {
	_, _ = unary(context.Background(), &healthpb.HealthCheckRequest{}, &grpc.UnaryServerInfo{FullMethod: "/test.Unregistered/Call"},
		func(context.Context, any) (any, error) { return nil, status.Error(codes.Aborted, "aborted") })
}

// answer is a unary method that returns err, or a response when err is nil.
func answer(name string, err error) grpc.MethodDesc {
	return grpc.MethodDesc{MethodName: name, Handler: func(_ any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
		in := new(healthpb.HealthCheckRequest)
		if err := dec(in); err != nil {
			return nil, err
		}
		handler := func(context.Context, any) (any, error) {
			if err != nil {
				return nil, err
			}
			return &healthpb.HealthCheckResponse{}, nil
		}
		return interceptor(ctx, in, &grpc.UnaryServerInfo{FullMethod: "/test.Metrics/" + name}, handler)
	}}
}

// families renders every gathered family as text with what a run cannot
// make equal left out (how long calls took: a histogram's sum and which
// buckets its observations fell in, and an exemplar's timestamp).
func families(t *testing.T, reg *prometheus.Registry) []string {
	t.Helper()
	got, err := reg.Gather()
	require.NoError(t, err)
	var out []string
	for _, f := range got {
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			line := fmt.Sprintf("%s %s (%s) {%s}", f.GetName(), f.GetType(), f.GetHelp(), strings.Join(labels, ","))
			switch {
			case m.GetCounter() != nil:
				line += fmt.Sprintf(" %v%s", m.GetCounter().GetValue(), exemplarText(m.GetCounter().GetExemplar()))
			case m.GetHistogram() != nil:
				h := m.GetHistogram()
				var bounds []float64
				var exemplars []string
				for _, b := range h.GetBucket() {
					bounds = append(bounds, b.GetUpperBound())
					if e := exemplarText(b.GetExemplar()); e != "" {
						exemplars = append(exemplars, e)
					}
				}
				line += fmt.Sprintf(" count=%d bounds=%v%s", h.GetSampleCount(), bounds, strings.Join(exemplars, ""))
			}
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// exemplarText is an exemplar's labels and value.
func exemplarText(e *dto.Exemplar) string {
	if e == nil {
		return ""
	}
	var labels []string
	for _, l := range e.GetLabel() {
		labels = append(labels, l.GetName()+"="+l.GetValue())
	}
	return fmt.Sprintf(" exemplar{%s}", strings.Join(labels, ","))
}

// BenchmarkServerMetrics measures what recording a unary call's
// grpc_server_* series costs, the provider's interceptor against
// Foundry's, around a handler that answers at once.
func BenchmarkServerMetrics(b *testing.B) {
	provider := grpcprom.NewServerMetrics(grpcprom.WithServerHandlingTimeHistogram(grpcprom.WithHistogramBuckets(latencyBuckets)))
	ours := newServerMetrics(latencyBuckets)
	srv := grpc.NewServer()
	healthpb.RegisterHealthServer(srv, health.NewServer())
	provider.InitializeMetrics(srv)
	ours.initialize(srv)
	info := &grpc.UnaryServerInfo{FullMethod: "/grpc.health.v1.Health/Check"}
	handler := func(context.Context, any) (any, error) { return &healthpb.HealthCheckResponse{}, nil }
	for _, c := range []struct {
		name        string
		interceptor grpc.UnaryServerInterceptor
	}{
		{"provider", provider.UnaryServerInterceptor(grpcprom.WithExemplarFromContext(exemplarOf))},
		{"foundry", ours.unary},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			ctx := context.Background()
			for b.Loop() {
				_, _ = c.interceptor(ctx, nil, info, handler)
			}
		})
	}
}

package grpcserver

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestAccessLogLinesByCode(t *testing.T) {
	t.Parallel()
	info := &grpc.UnaryServerInfo{FullMethod: "/foundry.portfolio.v1.PortfolioService/GetIdea"}
	call := func(level zapcore.Level, err error) []observer.LoggedEntry {
		core, logs := observer.New(level)
		_, got := accessLog{log: zap.New(core)}.unary(context.Background(), nil, info,
			func(context.Context, any) (any, error) { return "ok", err })
		require.Equal(t, err, got, "the handler's error passes through")
		return logs.All()
	}
	require.Empty(t, call(zapcore.InfoLevel, nil), "a success is not logged at info")
	require.Empty(t, call(zapcore.InfoLevel, status.Error(codes.Canceled, "gone")), "nor a cancellation")

	lines := call(zapcore.InfoLevel, status.Error(codes.NotFound, "idea x not found"))
	require.Len(t, lines, 1)
	require.Equal(t, zapcore.InfoLevel, lines[0].Level)
	fields := lines[0].ContextMap()
	require.Equal(t, "foundry.portfolio.v1.PortfolioService", fields["grpc.service"])
	require.Equal(t, "GetIdea", fields["grpc.method"])
	require.Equal(t, "unary", fields["grpc.method_type"])
	require.Equal(t, "NotFound", fields["grpc.code"])
	require.Equal(t, "idea x not found", fields["grpc.error"])

	lines = call(zapcore.InfoLevel, status.Error(codes.Internal, "boom"))
	require.Len(t, lines, 1)
	require.Equal(t, zapcore.ErrorLevel, lines[0].Level, "a server fault is an error")

	lines = call(zapcore.DebugLevel, nil)
	require.Len(t, lines, 1, "at debug every call is logged")
	require.Equal(t, "OK", lines[0].ContextMap()["grpc.code"])
}

// BenchmarkAccessLog is a successful call's cost at the production level
// (info), where nothing is written.
func BenchmarkAccessLog(b *testing.B) {
	a := accessLog{log: zap.NewExample().WithOptions(zap.IncreaseLevel(zap.InfoLevel))}
	info := &grpc.UnaryServerInfo{FullMethod: "/foundry.portfolio.v1.PortfolioService/GetIdea"}
	h := func(context.Context, any) (any, error) { return nil, nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		_, _ = a.unary(ctx, nil, info, h)
	}
}

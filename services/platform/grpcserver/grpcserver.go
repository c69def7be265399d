// Package grpcserver builds the one gRPC server a Foundry process runs: panic
// recovery, access logging, Prometheus metrics and the domain-error table as
// interceptors, plus grpc.health.v1 and reflection.
package grpcserver

import (
	"context"
	"runtime/debug"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/foundryhq/foundry/services/platform/grpcerr"
	"github.com/foundryhq/foundry/services/platform/requestid"
)

// MaxMessageBytes bounds a gRPC message; the gateway's body cap is smaller.
const MaxMessageBytes = 4 << 20

// New returns a server with Foundry's interceptors, a health server
// registered on it, and reflection enabled. The interceptors run outermost
// first: the request id (so every line of the request carries it), recovery,
// then logging and metrics, then error translation, so the log and the
// metrics see the status the caller gets.
func New(log *zap.Logger, reg prometheus.Registerer) (*grpc.Server, *health.Server) {
	handled := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "foundry_grpc_server_handling_seconds",
		Help:    "Time to handle a unary gRPC call, by method and status code.",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{"method", "code"})
	if reg != nil {
		reg.MustRegister(handled)
	}
	srv := grpc.NewServer(
		grpc.MaxRecvMsgSize(MaxMessageBytes),
		grpc.ChainUnaryInterceptor(
			requestid.UnaryServerInterceptor(),
			recovery(log),
			observe(log, handled),
			grpcerr.UnaryServerInterceptor(log),
		),
	)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	return srv, hs
}

func recovery(log *zap.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic in handler", zap.String("method", info.FullMethod), requestid.Field(ctx), zap.Any("panic", r),
					zap.ByteString("stack", debug.Stack()))
				err = status.Error(codes.Internal, "internal error")
			}
		}()
		return handler(ctx, req)
	}
}

func observe(log *zap.Logger, handled *prometheus.HistogramVec) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		elapsed := time.Since(start)
		code := status.Code(err)
		handled.WithLabelValues(info.FullMethod, code.String()).Observe(elapsed.Seconds())
		level := zapcore.DebugLevel
		switch code {
		case codes.OK, codes.Canceled:
		case codes.Internal, codes.Unknown, codes.DataLoss:
			level = zapcore.ErrorLevel
		default:
			level = zapcore.InfoLevel
		}
		if ce := log.Check(level, "rpc"); ce != nil {
			fields := []zap.Field{zap.String("method", info.FullMethod), zap.String("code", code.String()), zap.Duration("elapsed", elapsed),
				requestid.Field(ctx)}
			if err != nil {
				fields = append(fields, zap.String("detail", status.Convert(err).Message()))
			}
			ce.Write(fields...)
		}
		return resp, err
	}
}

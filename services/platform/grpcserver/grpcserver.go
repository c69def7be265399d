// Package grpcserver builds the one gRPC server a Foundry process runs and
// the options of its client connections: OpenTelemetry stats handlers,
// Prometheus metrics under the standard names of go-grpc-middleware's
// provider (grpc_client_* from the provider itself; grpc_server_*, the
// same series, recorded here at less per call: metrics.go), access logging
// and go-grpc-middleware's panic recovery, with Foundry's request ids and
// domain-error table around them; plus
// grpc.health.v1 and, when asked for, reflection. Importing it installs
// grpccodec, the generated protobuf marshalling, for every gRPC call of the
// process, served or made.
package grpcserver

import (
	"context"
	"crypto/tls"
	"runtime"
	"runtime/debug"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	"github.com/foundryhq/foundry/services/platform/authz"
	// Registered process-wide under gRPC's "proto" by its init: every
	// server built here and every client dialled with ClientOptions (and
	// any other connection of the process) uses it.
	_ "github.com/foundryhq/foundry/services/platform/grpccodec"
	"github.com/foundryhq/foundry/services/platform/grpcerr"
	"github.com/foundryhq/foundry/services/platform/observability"
	"github.com/foundryhq/foundry/services/platform/requestid"
	"github.com/foundryhq/foundry/services/platform/servicecred"
)

// MaxMessageBytes bounds a gRPC message; the gateway's body cap is smaller.
const MaxMessageBytes = 4 << 20

// windowBytes is every connection's and stream's flow-control window. Giving
// one at all turns off gRPC's bandwidth-delay estimator, which otherwise
// pings the peer on nearly every data frame it receives: on the loopback
// and in-cluster connections Foundry's small messages travel, those pings
// were system calls with nothing to learn. 1 MiB holds many of those
// messages at once; a larger one (up to MaxMessageBytes) still passes, in
// window-sized steps.
const windowBytes = 1 << 20

// streamWorkers is how many goroutines serve calls, each kept for many
// calls, instead of gRPC's default of a new goroutine per call. A new
// goroutine starts with a small stack, and a call through the interceptors,
// a use case and pgx grows it several times (runtime.newstack and
// copystack were 9-11 % of a service's CPU under load in make bench-http's
// profiles); a worker's stack stays grown. A call that finds every worker
// busy still gets a goroutine of its own, so this bounds nothing. Idle,
// each costs its stack (a few KiB to tens of KiB); gRPC replaces a worker
// every 65 536 calls, so a stack grown once by a rare deep call does not
// stay forever.
var streamWorkers = uint32(max(32, 8*runtime.GOMAXPROCS(0)))

// latencyBuckets are the handling-time histograms' buckets: 0.5 ms to 16 s.
var latencyBuckets = prometheus.ExponentialBuckets(0.0005, 2, 16)

// Server is the process's gRPC server and its health service.
type Server struct {
	*grpc.Server
	Health  *health.Server
	metrics *serverMetrics
}

// Options are the server's switches.
type Options struct {
	// Reflection registers grpc.reflection, which lets a caller holding the
	// service credential list and describe every service (grpcurl,
	// debugging). Convenient on a laptop; a deployment may not want it.
	Reflection bool
	// ServiceKey, when set, is required of every caller (see servicecred);
	// only grpc.health.v1 stays open.
	ServiceKey string
	// AcceptedServiceKeys are accepted beside ServiceKey while it rotates
	// (servicecred.Matches).
	AcceptedServiceKeys []string
	// TLS, when set, serves TLS; a config from servicecred.TLSFiles
	// requires a client certificate the Foundry CA signed.
	TLS *tls.Config
	// Authz, when set, enforces every Foundry method's authorization policy
	// (after the service credential is checked and inside the error
	// table, so its refusals become 401 and 403).
	Authz *authz.Enforcer
	// MaxConnectionAge closes a client's connection after this long
	// (gracefully: calls in flight finish), so clients dial again and
	// spread over replicas that came up since; 0 never closes.
	MaxConnectionAge time.Duration
}

// Keepalive settings. The server pings an idle connection after
// serverPingAfter and drops it when no answer comes within pingTimeout, so a
// peer that vanished (a killed pod, a cut network) frees its resources; it
// lets clients ping as often as every clientPingMin, and clients ping every
// clientPingAfter, so a dead server is noticed within ~40 s instead of
// the kernel's TCP timeout of many minutes. connectionAgeGrace is how long
// calls in flight may run after MaxConnectionAge: longer than the gateway's
// request timeout (30 s by default), so no REST request is cut by it.
const (
	serverPingAfter    = time.Minute
	clientPingAfter    = 30 * time.Second
	clientPingMin      = 10 * time.Second
	pingTimeout        = 10 * time.Second
	connectionAgeGrace = time.Minute
)

// reconnect is how a client dials a peer that does not answer: gRPC's
// default backoff grows to two minutes, so a peer down for a while (a
// rollout, a restarted pod) would stay unused, its calls failing with
// Unavailable, for up to two minutes after it came back. Capped at 5 s, a
// peer gets calls again within 5 s of answering; the attempts that cost
// are one connection attempt per peer every 5 s.
var reconnect = grpc.ConnectParams{
	Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
	MinConnectTimeout: 20 * time.Second, // gRPC's default
}

// New returns a server with Foundry's interceptors, a health server
// registered on it, and reflection when opts ask for it. The interceptors run outermost
// first: the request id (so every line of the request carries it), the
// metrics and the access log, the service credential, panic recovery, error
// translation, then authorization, so the metrics and the log see the
// status the caller gets, a recovered panic's Internal and a refusal's 403
// included. The OpenTelemetry stats handler runs before
// them all (when the process exports traces) and puts the call's span in
// the context.
func New(log *zap.Logger, reg prometheus.Registerer, o Options) *Server {
	m := newServerMetrics(latencyBuckets)
	if reg != nil {
		reg.MustRegister(m)
	}
	access := accessLog{log: log}
	rec := recovery.WithRecoveryHandlerContext(func(ctx context.Context, p any) error {
		log.Error("panic in handler", append(observability.Fields(ctx), zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))...)
		return status.Error(codes.Internal, "internal error")
	})
	opts := []grpc.ServerOption{grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.NumStreamWorkers(streamWorkers),
		grpc.InitialWindowSize(windowBytes), grpc.InitialConnWindowSize(windowBytes),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			Time: serverPingAfter, Timeout: pingTimeout,
			MaxConnectionAge: o.MaxConnectionAge, MaxConnectionAgeGrace: connectionAgeGrace,
		}),
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: clientPingMin, PermitWithoutStream: true}),
	}
	if o.TLS != nil {
		opts = append(opts, grpc.Creds(credentials.NewTLS(o.TLS)))
	}
	if observability.Active() {
		opts = append(opts, grpc.StatsHandler(otelgrpc.NewServerHandler()))
	}
	unary := []grpc.UnaryServerInterceptor{
		requestid.UnaryServerInterceptor(),
		m.unary,
		access.unary,
		servicecred.UnaryServerInterceptor(o.ServiceKey, o.AcceptedServiceKeys...),
		recovery.UnaryServerInterceptor(rec),
		grpcerr.UnaryServerInterceptor(log),
	}
	stream := []grpc.StreamServerInterceptor{
		m.stream,
		access.stream,
		servicecred.StreamServerInterceptor(o.ServiceKey, o.AcceptedServiceKeys...),
		recovery.StreamServerInterceptor(rec),
	}
	if o.Authz != nil {
		unary = append(unary, o.Authz.UnaryServerInterceptor())
		stream = append(stream, o.Authz.StreamServerInterceptor())
	}
	unary = append(unary, checkText()) // after authorization: a 401 before a 422
	srv := grpc.NewServer(append(opts, grpc.ChainUnaryInterceptor(unary...), grpc.ChainStreamInterceptor(stream...))...)
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	if o.Reflection {
		reflection.Register(srv)
	}
	return &Server{Server: srv, Health: hs, metrics: m}
}

// InitializeMetrics creates every registered method's series at zero, so
// rates and alerts work before a method's first call. Call it once every
// service is registered.
func (s *Server) InitializeMetrics() { s.metrics.initialize(s.Server) }

// ClientCredentials are how a connection to a peer proves it is Foundry:
// the service key on every call when there is one, over TLS when TLS is
// set (plaintext otherwise).
type ClientCredentials struct {
	ServiceKey string
	TLS        *tls.Config
}

// roundRobin spreads calls over every address the target resolves to (the
// replicas listed in -<peer>-addr, or a headless Service's pods), instead
// of gRPC's default of sending all of them to the first.
const roundRobin = `{"loadBalancingConfig": [{"round_robin": {}}]}`

// ClientOptions are the dial options of a connection to a peer: its
// credentials, round-robin balancing, keepalive pings, client metrics in m,
// the request id sent on, and when the process exports traces the
// OpenTelemetry stats handler (the trace continues in the peer).
func ClientOptions(m *grpcprom.ClientMetrics, c ClientCredentials) []grpc.DialOption {
	transport := insecure.NewCredentials()
	if c.TLS != nil {
		transport = credentials.NewTLS(c.TLS)
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(transport),
		grpc.WithDefaultServiceConfig(roundRobin),
		grpc.WithConnectParams(reconnect),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: clientPingAfter, Timeout: pingTimeout, PermitWithoutStream: true}),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes)),
		grpc.WithInitialWindowSize(windowBytes), grpc.WithInitialConnWindowSize(windowBytes),
		grpc.WithChainUnaryInterceptor(
			requestid.UnaryClientInterceptor(),
			unlessAtEdge(m.UnaryClientInterceptor(grpcprom.WithExemplarFromContext(exemplarOf))),
		),
		grpc.WithChainStreamInterceptor(m.StreamClientInterceptor(grpcprom.WithExemplarFromContext(exemplarOf))),
	}
	if c.ServiceKey != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(servicecred.PerRPC(c.ServiceKey, c.TLS != nil)))
	}
	if observability.Active() {
		opts = append(opts, grpc.WithStatsHandler(otelgrpc.NewClientHandler()))
	}
	return opts
}

// atEdge is AtEdge's context key.
type atEdge struct{}

// AtEdge returns ctx for the calls the gateway makes to serve one HTTP
// request: they are not observed as client calls (grpc_client_*). The
// gateway's http_server_request_duration_seconds times the request around
// them and the called service's grpc_server_* the call itself; a third
// observation of the same call at the gateway cost label look-ups and
// allocations on every request (about 4 % of the gateway's CPU on a read)
// and told nothing the other two do not. Calls between services, and the
// gateway's own background calls, are observed as before.
func AtEdge(ctx context.Context) context.Context { return context.WithValue(ctx, atEdge{}, true) }

// unlessAtEdge runs the client interceptor next for every call but those
// made under AtEdge.
func unlessAtEdge(next grpc.UnaryClientInterceptor) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if ctx.Value(atEdge{}) != nil {
			return invoker(ctx, method, req, reply, cc, opts...)
		}
		return next(ctx, method, req, reply, cc, invoker, opts...)
	}
}

// NewClientMetrics returns the grpc_client_* collectors, registered in reg.
func NewClientMetrics(reg prometheus.Registerer) *grpcprom.ClientMetrics {
	m := grpcprom.NewClientMetrics(grpcprom.WithClientHandlingTimeHistogram(grpcprom.WithHistogramBuckets(latencyBuckets)))
	if reg != nil {
		reg.MustRegister(m)
	}
	return m
}

// exemplarOf labels a sample with its trace, when the call is sampled, so a
// latency spike on a dashboard links to a trace.
func exemplarOf(ctx context.Context) prometheus.Labels {
	if sc := trace.SpanContextFromContext(ctx); sc.IsSampled() {
		return prometheus.Labels{"trace_id": sc.TraceID().String()}
	}
	return nil
}

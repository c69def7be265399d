// Package gateway serves Foundry's /api REST surface by translating HTTP to
// the services' gRPC APIs, whose routes each service module declares
// (app.Module.Routes). The path of every route is declared once, in
// api.yaml beside this file; this package adds what generated code cannot:
// the JSON conventions, the error table, the body cap, 201 for creates, the
// raw routes that must see unparsed bodies, the API docs and the dashboard.
package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	opsinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/platform/ratelimit"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// Config holds the gateway's own settings.
type Config struct {
	// MaxBodyBytes caps a request body; larger ones get 413.
	MaxBodyBytes int
	// RequestTimeout bounds one request end to end.
	RequestTimeout time.Duration
	// AllowedHosts are the Host names served (comma-separated); empty
	// serves loopback names alone when listening on loopback, any otherwise.
	AllowedHosts string
	// AuthFailuresPerMin is how many credentials that do not verify a
	// client address may send a minute (in bursts of as many) before its
	// requests with a credential are answered 429 (authenticate); 0 turns
	// the throttle off.
	AuthFailuresPerMin int
	// ReadsPerMin is how many reads (GET, HEAD) a client address may send
	// a minute, in bursts of as many, before it is answered 429
	// (limitReads); 0 turns the limit off.
	ReadsPerMin int
}

func (c *Config) register(fs *config.FlagSet) {
	fs.Int(&c.MaxBodyBytes, "max-body-bytes", "FOUNDRY_MAX_BODY_BYTES", 1<<20, "largest request body accepted (413 beyond)")
	fs.Duration(&c.RequestTimeout, "request-timeout", "FOUNDRY_REQUEST_TIMEOUT", 30*time.Second, "time limit of one request")
	fs.Int(&c.AuthFailuresPerMin, "auth-failures-per-min", "FOUNDRY_AUTH_FAILURES_PER_MIN", 30,
		"failed authentications a client address may make a minute before it is answered 429 (0: no limit)")
	fs.Int(&c.ReadsPerMin, "reads-per-min", "FOUNDRY_READS_PER_MIN", 1200,
		"reads (GET, HEAD) a client address may make a minute, in bursts of as many, before it is answered 429 (0: no limit)")
	fs.String(&c.AllowedHosts, "allowed-hosts", "FOUNDRY_ALLOWED_HOSTS", "",
		"comma-separated Host names the gateway answers (others: 403); empty: loopback names only when listening on loopback, any otherwise")
}

// Module returns the gateway module in front of services: it serves the
// REST routes of each one that declares them (app.Module.Routes), through a
// connection to it, besides its own raw routes on the ledger and ops. The
// list is the system's one list of services (allinone.Services), so a
// service added there gets its routes served and its address taken with
// no change here.
func Module(services ...app.Module) app.Module {
	cfg := &Config{}
	var routed []app.Module
	for _, m := range services {
		if m.Routes != nil {
			routed = append(routed, m)
		}
	}
	peers := make([]string, 0, len(routed)+2)
	for _, m := range routed {
		peers = append(peers, m.Name)
	}
	// The raw routes' own peers: the webhook and the audit log's text
	// routes call the ledger, /api/ready and the telemetry ops.
	for _, p := range []string{ledgerPeer, opsPeer} {
		if !slices.Contains(peers, p) {
			peers = append(peers, p)
		}
	}
	return app.Module{
		Name:  "gateway",
		Peers: peers,
		Flags: cfg.register,
		Start: func(ctx context.Context, h *app.Host) error {
			if len(routed) == 0 {
				// The gateway serves the routes of the services it is
				// given; its binary is cmd/gateway.
				return errors.New("the gateway is given no service whose routes to serve: build it with gateway.Module(services...) (cmd/gateway)")
			}
			conns := make(map[string]*grpc.ClientConn, len(peers))
			for _, p := range peers {
				c, err := h.Dial(p)
				if err != nil {
					return err
				}
				conns[p] = c
			}
			handler, err := New(ctx, *cfg, routed, conns, h)
			if err != nil {
				return err
			}
			h.ServeHTTP(handler)
			return nil
		},
	}
}

// ledgerPeer and opsPeer are the services the gateway's raw routes call
// themselves.
const (
	ledgerPeer = "ledger"
	opsPeer    = "ops"
)

// marshalOptions are Foundry's JSON conventions: field names exactly as the
// API names them, and every field present (unset wrappers as null, empty
// lists as []).
var marshalOptions = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// unmarshalOptions reject unknown fields: no silent mass assignment.
var unmarshalOptions = protojson.UnmarshalOptions{DiscardUnknown: false}

// compactJSON is runtime.JSONPb with stable output. protojson inserts random
// whitespace on purpose (so nobody depends on its bytes); Foundry removes
// it, so a response is the same bytes every time and no larger than needed.
type compactJSON struct{ *runtime.JSONPb }

// Marshal implements runtime.Marshaler. A message (every response, and a
// route's response_body when it is a message) goes through marshalJSON,
// which writes protojson's bytes without protojson (render.go); anything
// else grpc-gateway marshals (a response_body that is a list or a scalar)
// through JSONPb, whose options are marshalOptions.
func (m compactJSON) Marshal(v any) ([]byte, error) {
	if msg, ok := v.(proto.Message); ok {
		return marshalJSON(msg)
	}
	b, err := m.JSONPb.Marshal(v)
	if err != nil {
		return nil, err
	}
	return compact(b), nil
}

// protojsonSpaces is whether this binary's protojson writes ", " between
// members. Its single-line output differs from compact JSON in that one
// way only, and the choice is fixed per binary (seeded from the
// executable), so it is probed once.
var protojsonSpaces = func() bool {
	b, err := protojson.Marshal(&structpb.ListValue{Values: []*structpb.Value{structpb.NewNullValue(), structpb.NewNullValue()}})
	return err != nil || bytes.Contains(b, []byte(", "))
}()

// compact returns protojson's single-line output as compact JSON. The
// output of a binary whose protojson adds no spaces is compact already
// (most of the cost of a read's response was json.Compact's general
// scanner); otherwise the space after each comma outside a string goes.
func compact(b []byte) []byte {
	if !protojsonSpaces {
		return b
	}
	return dropCommaSpaces(b)
}

// dropCommaSpaces removes the space protojson writes after a comma between
// members or elements; commas and spaces inside strings stay.
func dropCommaSpaces(b []byte) []byte {
	out := make([]byte, 0, len(b))
	inString, escaped := false, false
	var prev byte
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' && prev == ',':
			prev = c
			continue
		}
		out = append(out, c)
		prev = c
	}
	return out
}

// New returns the gateway's HTTP handler: the routes of services, each
// through its connection in conns (by module name), and the raw routes
// through conns' ledger and ops.
func New(ctx context.Context, cfg Config, services []app.Module, conns map[string]*grpc.ClientConn, h *app.Host) (http.Handler, error) {
	if _, err := servedDocuments(); err != nil {
		return nil, fmt.Errorf("the OpenAPI document: %w", err)
	}
	ops, err := operations(openAPI)
	if err != nil {
		return nil, err
	}
	// Every route on one mux, and each operation's on a mux of its own
	// that its pattern leads to (routes.go).
	fwd, err := h.Forwarder()
	if err != nil {
		return nil, err
	}
	mux := newAPIMux(fwd)
	byOperation := map[string]*runtime.ServeMux{}
	for _, m := range services {
		register := func(into *runtime.ServeMux) error { return m.Routes(ctx, into, conns[m.Name]) }
		if err := register(mux); err != nil {
			return nil, fmt.Errorf("register %s routes: %w", m.Name, err)
		}
		own, err := operationMuxes(ops, serviceName(m.Service), fwd, register)
		if err != nil {
			return nil, fmt.Errorf("register %s routes: %w", m.Name, err)
		}
		maps.Copy(byOperation, own)
	}
	root := http.NewServeMux()
	root.Handle("/api/", mux)
	ledger := ledgerv1.NewLedgerServiceClient(conns[ledgerPeer])
	root.Handle("POST /api/contributions/github", githubWebhook(ledger))
	root.Handle("POST /api/webhooks/impact", impactWebhook(ledger))
	root.Handle("GET /api/audit/checkpoint", auditText(ledger, fwd, readCheckpoint))
	root.Handle("GET /api/audit/verifier-key", auditText(ledger, fwd, readVerifierKey))
	opsClient := opsv1.NewOpsServiceClient(conns[opsPeer])
	root.Handle("GET /api/ready", readyHandler(opsClient))
	siteRoutes(root)
	// After the routes served by hand, which keep their patterns.
	if err := routeOperations(root, ops, byOperation); err != nil {
		return nil, err
	}

	tel := newTelemetry(opsinternalv1.NewOpsInternalServiceClient(conns[opsPeer]), h.Log.Named("telemetry"), h.Metrics, defaultTelemetryOptions)
	h.Go(tel.run)
	return edge(root, cfg, h.Log, h.Metrics, h.Settings, h.Verifier(), tel), nil
}

// edge wraps the routes in what every request passes through, outermost
// first.
func edge(root http.Handler, cfg Config, log *zap.Logger, reg prometheus.Registerer, s *app.Settings, v *authz.Verifier, tel *telemetry) http.Handler {
	return chain(root,
		traced,
		requestScope(log, reg, tel, cfg.RequestTimeout),
		recoverPanics(log),
		allowedHosts(newHostRule(cfg.AllowedHosts, s.HTTPAddr)),
		rejectUnusableURL,
		crossOrigin,
		checkHeaders,
		limitBody(int64(cfg.MaxBodyBytes)),
		requireJSON,
		onlyDryRunInQuery,
		dryRunFromQuery,
		forwardClient(s.Proxies),
		limitReads(ratelimit.New(cfg.ReadsPerMin, nil), readsThrottled(reg)),
		authenticate(v, ratelimit.New(cfg.AuthFailuresPerMin, nil), authThrottled(reg), log.Named("auth")),
		toRoutes,
	)
}

// useStrictQuery installs strictQuery as grpc-gateway's query parser. The
// runtime keeps one parser for the whole process, set by a mux option, so
// it is set once: each gateway a test process builds setting it again was
// a data race.
var useStrictQuery sync.Once

// newAPIMux returns the grpc-gateway mux with Foundry's conventions, before
// any service's routes are registered on it: every call it makes carries
// the request's principal signed by fwd. inner are middlewares run after
// Foundry's, nearest the handler (routes.go's probe).
func newAPIMux(fwd *authz.Forwarder, inner ...runtime.Middleware) *runtime.ServeMux {
	useStrictQuery.Do(func() { runtime.SetQueryParameterParser(strictQuery{})(nil) })
	return runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, compactJSON{&runtime.JSONPb{
			MarshalOptions:   marshalOptions,
			UnmarshalOptions: unmarshalOptions,
		}}),
		runtime.WithErrorHandler(errorHandler),
		runtime.WithRoutingErrorHandler(routingErrorHandler),
		runtime.WithForwardResponseOption(forwardStatus),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithMetadata(principalMetadata(fwd)),
		runtime.WithOutgoingHeaderMatcher(dropHeader),
		runtime.WithOutgoingTrailerMatcher(dropHeader),
		runtime.WithMiddlewares(append([]runtime.Middleware{recordRoute, pathMatchesBody}, inner...)...),
	)
}

// siteRoutes adds what the gateway serves itself besides the API's
// operations: the OpenAPI document, the API docs page, the dashboard and
// its assets, and a JSON 404 for every other path. The dashboard routes by
// URL hash, so it needs no fallback: an unknown path is never a page.
func siteRoutes(root *http.ServeMux) {
	root.Handle("GET /api/openapi.json", openAPIHandler(func(d documents) []byte { return d.v3 }))
	root.Handle("GET /api/openapi-v2.json", openAPIHandler(func(d documents) []byte { return d.v2 }))
	root.Handle("GET /api/docs/", docsHandler())
	root.Handle("GET /api/docs", http.RedirectHandler("/api/docs/", http.StatusMovedPermanently))
	dashboard, dashboardAssets := dashboardHandlers()
	root.Handle("GET /{$}", dashboard)
	// Spelled out, not built from dashboardPrefix: the authorization
	// matrix's test reads the routes from this source.
	root.Handle("GET /ui/", dashboardAssets)
	root.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSONError(w, http.StatusNotFound, ErrorBody{Detail: "not found"})
	})
}

// incomingHeader forwards only the headers services read; everything else,
// including client-supplied Grpc-Metadata-* headers and any
// Foundry-Principal, stays at the edge. (X-Forwarded-For is forwarded by
// the runtime itself; forwardClient has reduced it to the one resolved
// client address. The credentials are gone: authenticate turned them into
// the principal that principalMetadata sends. The request id travels in
// the context: requestScope puts it there and the connections' requestid
// client interceptor sends it.)
func incomingHeader(key string) (string, bool) {
	if http.CanonicalHeaderKey(key) == "Idempotency-Key" {
		return rpcmeta.IdempotencyKeyKey, true
	}
	return "", false
}

// dropHeader keeps gRPC metadata out of HTTP responses.
func dropHeader(string) (string, bool) { return "", false }

// forwardStatus applies the HTTP status a handler asked for (201 on create).
func forwardStatus(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
	md, ok := runtime.ServerMetadataFromContext(ctx)
	if !ok {
		return nil
	}
	vals := md.HeaderMD.Get(rpcmeta.HTTPCodeKey)
	if len(vals) == 0 {
		return nil
	}
	// A value that is not a 2xx status is ignored: the call succeeded, and
	// the default 200 is the right answer then.
	if code, err := strconv.Atoi(vals[0]); err == nil && code >= 200 && code <= 299 {
		w.WriteHeader(code)
	}
	return nil
}

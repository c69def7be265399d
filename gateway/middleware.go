package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/foundryhq/foundry/services/platform/clientip"
	"github.com/foundryhq/foundry/services/platform/grpcserver"
	"github.com/foundryhq/foundry/services/platform/observability"
	"github.com/foundryhq/foundry/services/platform/requestid"
)

type middleware func(http.Handler) http.Handler

// chain wraps h so that the first middleware is the outermost.
func chain(h http.Handler, mws ...middleware) http.Handler {
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	return h
}

// writeJSONError writes an {"detail": ...} body with the status.
func writeJSONError(w http.ResponseWriter, code int, body ErrorBody) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(body)
}

// recoverPanics turns a panic into a 500 instead of a dropped connection.
// It runs inside requestScope, so the 500 carries the scope's headers and is
// logged and measured as every other answer is.
func recoverPanics(log *zap.Logger) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
						panic(v)
					}
					log.Error("panic serving request", append(observability.Fields(r.Context()),
						zap.String("path", r.URL.Path), zap.Any("panic", v), zap.Stack("stack"))...)
					writeJSONError(w, http.StatusInternalServerError, ErrorBody{Detail: "internal error"})
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// exchange is one request's state at the edge, in one allocation: the
// response writer that remembers the status and size written, and the
// route that served it (recordRoute and toRoutes name it).
type exchange struct {
	http.ResponseWriter
	status int
	bytes  int
	route  string
}

func (e *exchange) WriteHeader(code int) {
	if e.status == 0 {
		e.status = code
	}
	e.ResponseWriter.WriteHeader(code)
}

func (e *exchange) Write(b []byte) (int, error) {
	if e.status == 0 {
		e.status = http.StatusOK
	}
	n, err := e.ResponseWriter.Write(b)
	e.bytes += n
	return n, err
}

func (e *exchange) Unwrap() http.ResponseWriter { return e.ResponseWriter }

type exchangeKey struct{}

// exchangeOf is the request's exchange, or nil outside requestScope.
func exchangeOf(ctx context.Context) *exchange {
	e, _ := ctx.Value(exchangeKey{}).(*exchange)
	return e
}

// nosniff is X-Content-Type-Options' one value, shared by every response
// (net/http only reads a header's values; one that is added to gets a new
// slice).
var nosniff = []string{"nosniff"}

// requestScope opens every request's scope and records the request once
// it is served. Before: the headers every response carries, errors and a
// panic's 500 included (X-Content-Type-Options: nosniff, which stops a
// browser from reading a JSON answer as HTML or script, and X-Request-Id);
// the request's id (requestid: the client's X-Request-Id when well formed,
// a fresh one otherwise), which every service's log lines of the request
// carry; the mark that the calls made for it are the edge's
// (grpcserver.AtEdge: measured here and by the services, not a third time
// as client calls); and its deadline (timeout; 0 is none), which reaches
// the services. After: the access line, the request's duration by route
// pattern and status, and a runtime telemetry event (when tel is not nil
// and on). It never logs or records headers, query strings or bodies
// (tokens and keys live there).
//
// All of that is one copy of the request and one value in its context
// (besides the id's and the edge's mark, which their packages read): as
// separate middlewares the id, the recording and the deadline each copied
// the request and added context of their own.
func requestScope(log *zap.Logger, reg prometheus.Registerer, tel *telemetry, timeout time.Duration) middleware {
	// Request durations as OpenTelemetry's semantic conventions name them
	// (http.server.request.duration, in Prometheus form), with their
	// attributes and default buckets, so dashboards and alerts written for
	// any OTel-instrumented HTTP server read the gateway as they are. It is
	// the one HTTP histogram: Foundry's own form of the same durations
	// (foundry_http_request_duration_seconds) was a second observation and
	// label lookup on every request, and nothing read it.
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "http_server_request_duration_seconds",
		Help:    "Duration of HTTP server requests (OpenTelemetry semantic conventions, http.server.request.duration).",
		Buckets: semconvBuckets,
	}, []string{"http_request_method", "http_route", "http_response_status_code"})
	if reg != nil {
		reg.MustRegister(duration)
	}
	// The access line's caller would always be this function: not worth
	// the stack walk zap makes for it on every request.
	log = log.WithOptions(zap.WithCaller(false))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			id := r.Header.Get(requestid.Header)
			if !requestid.Valid(id) {
				id = requestid.New()
			}
			h := w.Header()
			h["X-Content-Type-Options"] = nosniff
			h[requestid.Header] = []string{id}
			ex := &exchange{ResponseWriter: w}
			ctx := context.WithValue(requestid.With(grpcserver.AtEdge(r.Context()), id), exchangeKey{}, ex)
			if timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, timeout)
				defer cancel()
			}
			r = r.WithContext(ctx)
			next.ServeHTTP(ex, r)
			elapsed := time.Since(start)
			if ex.status == 0 {
				ex.status = http.StatusOK
			}
			if ex.route == "" { // neither recordRoute nor toRoutes named one
				ex.route = "unmatched"
			}
			route := ex.route
			method := metricMethod(r.Method)
			duration.WithLabelValues(semconvMethod(r.Method), semconvRoute(route), strconv.Itoa(ex.status)).
				Observe(elapsed.Seconds())
			if tel != nil && tel.on() {
				tel.record(event(method, route, ex.status, start, elapsed))
			}
			level := accessLevel(ex.status)
			if span := trace.SpanFromContext(ctx); span.IsRecording() {
				// route is "METHOD /path/{pattern}" (or "unmatched").
				span.SetName(route)
				if _, path, ok := strings.Cut(route, " "); ok {
					span.SetAttributes(semconv.HTTPRoute(path))
				}
			}
			if ce := log.Check(level, "http"); ce != nil {
				ce.Write(append(observability.AppendFields(make([]zap.Field, 0, 9), ctx), zap.String("method", r.Method), zap.String("path", r.URL.Path),
					zap.String("route", route), zap.Int("status", ex.status), zap.Int("bytes", ex.bytes),
					zap.Duration("elapsed", elapsed))...)
			}
		})
	}
}

// traced starts the request's span (continuing the caller's trace when it
// sent a traceparent) and puts it in the context, so the access log, the
// services called and their statements join it. It wraps every other part
// of the edge, so the access line carries the span's ids; requestScope
// renames it after its route once routing has named one. Without tracing
// it is not there.
func traced(next http.Handler) http.Handler {
	if !observability.Active() {
		return next
	}
	return otelhttp.NewHandler(next, "gateway", otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
		return metricMethod(r.Method)
	}))
}

// knownMethods are the methods metrics and telemetry name as they are.
var knownMethods = map[string]bool{
	http.MethodGet: true, http.MethodHead: true, http.MethodPost: true, http.MethodPut: true,
	http.MethodPatch: true, http.MethodDelete: true, http.MethodOptions: true,
}

// metricMethod is the method as metrics label it: any token is a valid HTTP
// method, so labelling the raw one would let each client-made-up method
// ("FOOBAR1", "FOOBAR2", ...) create a new time series without bound.
// Everything but the standard methods counts as "other".
func metricMethod(m string) string {
	if knownMethods[m] {
		return m
	}
	return "other"
}

// semconvBuckets are the OpenTelemetry semantic conventions' advised
// buckets of http.server.request.duration (seconds).
var semconvBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// semconvMethod is http.request.method: the method when it is one of the
// conventions' known methods, _OTHER otherwise (bounded, as metricMethod).
func semconvMethod(m string) string {
	if knownMethods[m] || m == http.MethodConnect || m == http.MethodTrace {
		return m
	}
	return "_OTHER"
}

// semconvRoute is http.route: the route's path pattern (the route label
// without its method: "GET /api/ideas/{idea_id=*}", or a root-mux pattern
// with or without one, "/docs/"), or empty (the label left out) when no
// route matched, as the conventions ask, rather than the path a client
// made up.
func semconvRoute(route string) string {
	if route == "unmatched" {
		return ""
	}
	if _, path, ok := strings.Cut(route, " "); ok {
		return path
	}
	return route
}

// recordRoute is a grpc-gateway middleware (it runs after routing) that tells
// requestScope which pattern matched, so metrics are labelled by route, not
// by path with its ids. A mux applies its middlewares to each handler as it
// is registered, under one pattern, so each handler's label ("GET
// /api/ideas/{idea_id=*}") is built once and kept beside it: Pattern.String
// built it anew with seven allocations on every request.
func recordRoute(next runtime.HandlerFunc) runtime.HandlerFunc {
	var kept atomic.Pointer[routeName]
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if ex := exchangeOf(r.Context()); ex != nil {
			if name := kept.Load(); name != nil && name.method == r.Method {
				ex.route = name.label
			} else if p, ok := runtime.HTTPPattern(r.Context()); ok {
				// The method is the request's: a handler is registered for
				// one, but grpc-gateway may hand a GET's handler a POST
				// (its path-length fallback).
				name := &routeName{method: r.Method, label: r.Method + " " + p.String()}
				kept.Store(name)
				ex.route = name.label
			}
		}
		next(w, r, params)
	}
}

// routeName is a handler's route label for requests of one method.
type routeName struct{ method, label string }

// catchAll are the root patterns that mean "no route matched".
var catchAll = map[string]bool{"/": true, "/api/": true}

// toRoutes hands the request to the root mux, innermost of the edge, and
// tells requestScope which pattern of the root mux matched a raw route (GET
// /api/ready, the docs, the webhook): the mux records it on the request it
// is given, which the edge's own parts may have copied since requestScope's
// copy, so requestScope's request never shows it. Routes of the generated
// mux are recorded earlier by recordRoute and kept.
//
// The services are not told the Host the client asked for: grpc-gateway
// sends it to them as x-forwarded-host, which nothing in Foundry reads,
// and each metadata key costs both ends of the hop on every call (its
// header field encoded and decoded, a value in the service's metadata).
// Everything of the edge that reads the Host (the allowed hosts, the
// cross-origin check) has read it by now, and the request here is the
// edge's own (requestScope's copy, or a later part's), so it is cleared
// in place.
func toRoutes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Host = ""
		// Deferred, so a route that panics is labelled too.
		defer func() {
			if ex := exchangeOf(r.Context()); ex != nil && ex.route == "" && !catchAll[r.Pattern] {
				ex.route = r.Pattern
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody answers 413 for a body over max bytes, before any handler reads
// it. Bodies are small, so the accepted body is buffered whole; handlers then
// see an ordinary reader and never a half-read stream.
func limitBody(max int64) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Body == nil || r.Body == http.NoBody {
				next.ServeHTTP(w, r)
				return
			}
			tooLarge := ErrorBody{Detail: fmt.Sprintf("request body too large: the limit is %d bytes", max)}
			if r.ContentLength > max {
				writeJSONError(w, http.StatusRequestEntityTooLarge, tooLarge)
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
			if err != nil {
				writeJSONError(w, http.StatusBadRequest, ErrorBody{Detail: "could not read the request body"})
				return
			}
			if int64(len(body)) > max {
				writeJSONError(w, http.StatusRequestEntityTooLarge, tooLarge)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			r.ContentLength = int64(len(body))
			next.ServeHTTP(w, r)
		})
	}
}

// rejectUnusableURL answers a request whose path or query, unescaped, is
// not UTF-8 or holds a NUL character. No id or filter can be spelled so,
// and such a value sent on as one was a 500: gRPC refuses to send a string
// that is not UTF-8, and Postgres a NUL. A path is a 404 (it names
// nothing), a query a 422 naming the parameter. A malformed pair of the
// query is left to the handlers, which refuse it.
func rejectUnusableURL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !usableText(r.URL.Path) {
			writeJSONError(w, http.StatusNotFound, ErrorBody{Detail: "not found"})
			return
		}
		if r.URL.RawQuery != "" {
			query, _ := url.ParseQuery(r.URL.RawQuery)
			for _, name := range slices.Sorted(maps.Keys(query)) {
				if usableText(name) && !slices.ContainsFunc(query[name], func(v string) bool { return !usableText(v) }) {
					continue
				}
				field := strings.ToValidUTF8(strings.ReplaceAll(name, "\x00", ""), "\uFFFD")
				const msg = "must be UTF-8 without NUL characters"
				writeJSONError(w, http.StatusUnprocessableEntity, ErrorBody{Detail: field + ": " + msg,
					Errors: []FieldError{{Field: field, Message: msg}}})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// usableText reports whether s is UTF-8 without a NUL character.
func usableText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// requireJSON answers 415 to a POST, PUT or PATCH whose body is not declared
// JSON (application/json or application/*+json, parameters such as charset
// allowed): the services read JSON alone. A request with an empty body
// passes whatever type it declares: body-less actions
// (POST /api/ideas/{id}/advance) need none, and curl with an empty -d labels its
// empty body a form. (Cross-site requests are crossOrigin's to refuse.) It
// runs after limitBody, whose buffering makes ContentLength exact.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
		default:
			next.ServeHTTP(w, r)
			return
		}
		ct := r.Header.Get("Content-Type")
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		if !isJSONMediaType(ct) {
			detail := "unsupported Content-Type: send the body as JSON with Content-Type: application/json"
			if ct == "" {
				detail = "missing Content-Type: send the body as JSON with Content-Type: application/json"
			}
			writeJSONError(w, http.StatusUnsupportedMediaType, ErrorBody{Detail: detail})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// isJSONMediaType reports whether a Content-Type value is JSON:
// application/json or a structured syntax type application/*+json.
func isJSONMediaType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	sub, ok := strings.CutPrefix(mt, "application/")
	return ok && (sub == "json" || (strings.HasSuffix(sub, "+json") && len(sub) > len("+json")))
}

// forwardClient resolves the client's address (clientip: the peer, or the
// X-Forwarded-For hop a trusted proxy recorded) and leaves it as the only
// address the services see. grpc-gateway forwards the X-Forwarded-For the
// client sent followed by the peer address; so the header is dropped and
// the peer replaced by the resolved client, and x-forwarded-for reaches the
// services holding exactly that one address, whatever the client sent.
func forwardClient(proxies clientip.Proxies) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			forwarded, sent := r.Header["X-Forwarded-For"]
			// Nothing to drop and nothing to resolve: the peer is the
			// client, and RemoteAddr already says so as resolving would.
			if !sent && clientip.IsPeerForm(r.RemoteAddr) {
				next.ServeHTTP(w, r)
				return
			}
			client := proxies.FromHTTP(r.RemoteAddr, forwarded)
			// A shallow copy, whose RemoteAddr changes and whose headers lose
			// the one to drop.
			r = r.WithContext(r.Context())
			r.Header = r.Header.Clone()
			r.Header.Del("X-Forwarded-For")
			_, port, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				port = "0"
			}
			r.RemoteAddr = net.JoinHostPort(client, port)
			next.ServeHTTP(w, r)
		})
	}
}

// dryRunFromQuery folds a dry_run query parameter of a POST into its JSON
// body. Every POST route takes its fields from the body alone (body "*"),
// so grpc-gateway never reads a POST's query string: without this,
// POST /api/cc/stake?dry_run=true would be a real stake. The one flag a
// client may well put in the URL is therefore honoured: "true", "1",
// "false", … (strconv.ParseBool; a bare ?dry_run is true), and a query and
// a body that disagree are a 422, as is a value, in the query or the body,
// that is no boolean. A body
// that is not a JSON object is passed on for the service to refuse. A
// route without a dry_run field then refuses the body's unknown field,
// never ignoring the flag silently.
func dryRunFromQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.RawQuery == "" {
			next.ServeHTTP(w, r)
			return
		}
		q := r.URL.Query()
		if !q.Has("dry_run") {
			next.ServeHTTP(w, r)
			return
		}
		invalid := func(msg string) {
			writeJSONError(w, http.StatusUnprocessableEntity, ErrorBody{Detail: "validation failed",
				Errors: []FieldError{{Field: "dry_run", Message: msg}}})
		}
		raw := q.Get("dry_run")
		dry := true
		if raw != "" {
			var err error
			if dry, err = strconv.ParseBool(raw); err != nil {
				invalid("must be true or false")
				return
			}
		}
		body := map[string]json.RawMessage{}
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				writeJSONError(w, http.StatusBadRequest, ErrorBody{Detail: "could not read the request body"})
				return
			}
			if err := json.Unmarshal(b, &body); err != nil || body == nil {
				r.Body = io.NopCloser(bytes.NewReader(b))
				next.ServeHTTP(w, r)
				return
			}
		}
		// The body's own dry_run must be a boolean (null is "not sent", as
		// everywhere): a string there was overwritten by the query's value
		// instead of being refused as a wrong type.
		if given, ok := body["dry_run"]; ok && string(given) != "null" {
			var inBody bool
			if err := json.Unmarshal(given, &inBody); err != nil {
				invalid("must be true or false")
				return
			}
			if inBody != dry {
				invalid("the query and the body disagree")
				return
			}
		}
		body["dry_run"] = json.RawMessage(strconv.FormatBool(dry))
		b, err := json.Marshal(body)
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, ErrorBody{Detail: "could not read the request body"})
			return
		}
		r = r.Clone(r.Context())
		q.Del("dry_run")
		r.URL.RawQuery = q.Encode()
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(b)), int64(len(b))
		r.Header.Set("Content-Type", "application/json")
		next.ServeHTTP(w, r)
	})
}

// accessLevel is the level of a request's access line: a server fault
// (5xx) at error, which also carries a stack trace; anything else at info.
// 501 is no fault: it is the answer the contract asks of a route it stubs
// (POST /api/onboarding/upgrade), and logging it as an error paged people
// for every client that asked.
func accessLevel(status int) zapcore.Level {
	if status >= 500 && status != http.StatusNotImplemented {
		return zapcore.ErrorLevel
	}
	return zapcore.InfoLevel
}

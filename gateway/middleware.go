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
func recoverPanics(log *zap.Logger) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if v := recover(); v != nil {
					if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
						panic(v)
					}
					log.Error("panic serving request", zap.String("path", r.URL.Path), zap.Any("panic", v), zap.Stack("stack"))
					writeJSONError(w, http.StatusInternalServerError, ErrorBody{Detail: "internal error"})
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// observe logs every request, records its duration by route pattern and
// status, and queues a runtime telemetry event (when tel is not nil). It
// never logs or records headers, query strings or bodies (tokens and keys
// live there).
func observe(log *zap.Logger, reg prometheus.Registerer, tel *telemetry) middleware {
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
			rec := &statusRecorder{ResponseWriter: w}
			route := new(string)
			r = r.WithContext(context.WithValue(r.Context(), routeKey{}, route))
			next.ServeHTTP(rec, r)
			elapsed := time.Since(start)
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			if *route == "" { // neither recordRoute nor notePattern named one
				*route = "unmatched"
			}
			method := metricMethod(r.Method)
			duration.WithLabelValues(semconvMethod(r.Method), semconvRoute(*route), strconv.Itoa(rec.status)).
				Observe(elapsed.Seconds())
			if tel != nil && tel.on() {
				tel.record(event(method, *route, rec.status, start, elapsed))
			}
			level := zapcore.InfoLevel
			if rec.status >= 500 {
				level = zapcore.ErrorLevel
			}
			if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
				// route is "METHOD /path/{pattern}" (or "unmatched").
				span.SetName(*route)
				if _, path, ok := strings.Cut(*route, " "); ok {
					span.SetAttributes(semconv.HTTPRoute(path))
				}
			}
			if ce := log.Check(level, "http"); ce != nil {
				ce.Write(append(observability.AppendFields(make([]zap.Field, 0, 9), r.Context()), zap.String("method", r.Method), zap.String("path", r.URL.Path),
					zap.String("route", *route), zap.Int("status", rec.status), zap.Int("bytes", rec.bytes),
					zap.Duration("elapsed", elapsed))...)
			}
		})
	}
}

// traced starts the request's span (continuing the caller's trace when it
// sent a traceparent) and puts it in the context, so the access log, the
// services called and their statements join it. observe renames it after
// its route once routing has named one. Without tracing it is not there.
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

type routeKey struct{}

// recordRoute is a grpc-gateway middleware (it runs after routing) that tells
// observe which pattern matched, so metrics are labelled by route, not by
// path with its ids. A mux applies its middlewares to each handler as it is
// registered, under one pattern, so each handler's label ("GET
// /api/ideas/{idea_id=*}") is built once and kept beside it: Pattern.String
// built it anew with seven allocations on every request.
func recordRoute(next runtime.HandlerFunc) runtime.HandlerFunc {
	var kept atomic.Pointer[routeName]
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if holder, _ := r.Context().Value(routeKey{}).(*string); holder != nil {
			if name := kept.Load(); name != nil && name.method == r.Method {
				*holder = name.label
			} else if p, ok := runtime.HTTPPattern(r.Context()); ok {
				// The method is the request's: a handler is registered for
				// one, but grpc-gateway may hand a GET's handler a POST
				// (its path-length fallback).
				name := &routeName{method: r.Method, label: r.Method + " " + p.String()}
				kept.Store(name)
				*holder = name.label
			}
		}
		next(w, r, params)
	}
}

// routeName is a handler's route label for requests of one method.
type routeName struct{ method, label string }

// catchAll are the root patterns that mean "no route matched".
var catchAll = map[string]bool{"/": true, "/api/": true}

// notePattern tells observe which pattern of the root mux matched a raw
// route (GET /api/ready, the docs, the webhook). It must wrap the root mux
// directly: the mux records the pattern on the request it is given, which
// the middlewares in between (withTimeout) have copied, so observe's own
// request never shows it. Routes of the generated mux are recorded earlier
// by recordRoute and kept.
func notePattern(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r)
		if holder, _ := r.Context().Value(routeKey{}).(*string); holder != nil && *holder == "" && !catchAll[r.Pattern] {
			*holder = r.Pattern
		}
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

// withRequestID gives every request an id: the client's X-Request-Id when
// it is well formed (requestid.Valid), a fresh one otherwise. The id is
// answered in X-Request-Id (errors included: it is the outermost
// middleware but one), logged on the gateway's line, and forwarded to the
// services as x-request-id metadata, where every log line of the request
// carries it.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(requestid.Header)
		if !requestid.Valid(id) {
			id = requestid.New()
		}
		w.Header().Set(requestid.Header, id)
		// The calls made for this request are the edge's
		// (grpcserver.AtEdge: measured here and by the services, not a
		// third time as client calls).
		next.ServeHTTP(w, r.WithContext(requestid.With(grpcserver.AtEdge(r.Context()), id)))
	})
}

// secureHeaders sets the headers every response carries, errors included:
// X-Content-Type-Options: nosniff stops a browser from reading a JSON answer
// as HTML or script. It is the outermost middleware, so even a panic's 500
// carries them.
func secureHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
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

// withTimeout bounds a request's work; the deadline reaches the services.
func withTimeout(d time.Duration) middleware {
	return func(next http.Handler) http.Handler {
		if d <= 0 {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, cancel := context.WithTimeout(r.Context(), d)
			defer cancel()
			next.ServeHTTP(w, r.WithContext(ctx))
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

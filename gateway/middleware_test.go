package gateway

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"google.golang.org/grpc/metadata"

	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/clientip"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/grpcerr"
	"github.com/foundryhq/foundry/services/platform/requestid"
)

func TestMetricsNormaliseUnknownMethods(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	tel := newTelemetry(&fakeSender{}, zap.NewNop(), nil, testOptions(nil))
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })
	h := chain(ok, requestScope(zap.NewNop(), reg, tel, 0))

	for _, m := range []string{"FOOBAR", "FOOBAR2", "get", http.MethodGet, http.MethodPatch} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(m, "/api/nowhere", nil))
	}

	const name = "http_server_request_duration_seconds"
	got, err := testutil.GatherAndCount(reg, name)
	require.NoError(t, err)
	require.Equal(t, 3, got, "series: _OTHER, GET and PATCH; got %d", got)
	families, err := reg.Gather()
	require.NoError(t, err)
	counts := map[string]uint64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "http_request_method" {
					counts[l.GetValue()] += m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	require.Equal(t, map[string]uint64{"_OTHER": 3, "GET": 1, "PATCH": 1}, counts,
		"FOOBAR, FOOBAR2 and lower-case get are counted under _OTHER")

	var methods []string
	for range 5 {
		methods = append(methods, (<-tel.events).GetMethod())
	}
	require.Equal(t, []string{"other", "other", "other", "GET", "PATCH"}, methods, "telemetry events use the same labels")
}

func TestIsJSONMediaType(t *testing.T) {
	t.Parallel()
	tests := map[string]bool{
		"application/json":                  true,
		"application/json; charset=utf-8":   true,
		"Application/JSON;charset=UTF-8":    true,
		"application/merge-patch+json":      true,
		"application/vnd.github+json":       true,
		"application/+json":                 false,
		"text/plain":                        false,
		"text/plain; charset=utf-8":         false,
		"application/x-www-form-urlencoded": false,
		"multipart/form-data; boundary=x":   false,
		"application/jsonp":                 false,
		"text/json":                         false,
		"":                                  false,
		"application/json; charset":         false,
	}
	for ct, want := range tests {
		require.Equal(t, want, isJSONMediaType(ct), "Content-Type %q", ct)
	}
}

func TestRequireJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		method string
		ct     string
		body   string
		want   int
	}{
		{"JSON POST", http.MethodPost, "application/json", `{}`, http.StatusOK},
		{"JSON PATCH with charset", http.MethodPatch, "application/json; charset=utf-8", `{}`, http.StatusOK},
		{"text/plain POST", http.MethodPost, "text/plain", `{}`, http.StatusUnsupportedMediaType},
		{"form PUT", http.MethodPut, "application/x-www-form-urlencoded", "a=1", http.StatusUnsupportedMediaType},
		{"a body without a type", http.MethodPost, "", `{}`, http.StatusUnsupportedMediaType},
		{"no body and no type (a body-less action)", http.MethodPost, "", "", http.StatusOK},
		{"no body but a form type (curl -d '')", http.MethodPost, "application/x-www-form-urlencoded", "", http.StatusOK},
		{"GET is not checked", http.MethodGet, "text/plain", "", http.StatusOK},
		{"DELETE is not checked", http.MethodDelete, "", "", http.StatusOK},
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	h := chain(next, limitBody(1<<20), requireJSON)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tt.method, "/api/ideas", strings.NewReader(tt.body))
			if tt.body == "" {
				req = httptest.NewRequest(tt.method, "/api/ideas", nil)
			}
			if tt.ct != "" {
				req.Header.Set("Content-Type", tt.ct)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, tt.want, rec.Code, "body: %s", rec.Body)
			if tt.want == http.StatusUnsupportedMediaType {
				var body ErrorBody
				require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
				require.Contains(t, body.Detail, "application/json")
			}
		})
	}
}

func TestRejectUnusableURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		target string
		want   int
		field  string
	}{
		{"/api/ideas/0b6f?limit=5&tags=%C3%A9", http.StatusOK, ""},
		{"/api/ideas/%ff%fe", http.StatusNotFound, ""},
		{"/api/ideas/%c0%ae/questions", http.StatusNotFound, ""},
		{"/api/assets/a%00b", http.StatusNotFound, ""},
		{"/api/agent/tasks?status=%ff", http.StatusUnprocessableEntity, "status"},
		{"/api/graph/edges?edge_type=%ed%a0%80", http.StatusUnprocessableEntity, "edge_type"},
		{"/api/ideas?tags=a&tags=a%00b", http.StatusUnprocessableEntity, "tags"},
		{"/api/ideas?a%00=1", http.StatusUnprocessableEntity, "a"},
		{"/api/ideas?limit=%zz", http.StatusOK, ""}, // malformed: the handler's to refuse
	}
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			t.Parallel()
			rec := httptest.NewRecorder()
			rejectUnusableURL(next).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tt.target, nil))
			require.Equal(t, tt.want, rec.Code, "body: %s", rec.Body)
			if tt.want == http.StatusOK {
				return
			}
			var body ErrorBody
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body))
			require.NotEmpty(t, body.Detail)
			if tt.field != "" {
				require.Equal(t, []FieldError{{Field: tt.field, Message: "must be UTF-8 without NUL characters"}}, body.Errors)
			}
		})
	}
}

// forwardedFor returns the x-forwarded-for metadata grpc-gateway would send
// to a service for r after forwardClient.
func forwardedFor(t *testing.T, proxies clientip.Proxies, r *http.Request) []string {
	t.Helper()
	var got []string
	mux := runtime.NewServeMux(runtime.WithIncomingHeaderMatcher(incomingHeader))
	h := forwardClient(proxies)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		ctx, err := runtime.AnnotateContext(r.Context(), mux, r, "/foundry.ledger.v1.LedgerService/Register")
		require.NoError(t, err)
		md, _ := metadata.FromOutgoingContext(ctx)
		got = md.Get("x-forwarded-for")
	}))
	h.ServeHTTP(httptest.NewRecorder(), r)
	return got
}

func TestForwardClientSendsExactlyTheResolvedAddress(t *testing.T) {
	t.Parallel()
	ingress := clientip.MustParse("10.0.0.0/8")
	tests := []struct {
		name    string
		proxies clientip.Proxies
		remote  string
		headers []string
		want    []string
	}{
		{"no header: the peer", clientip.Proxies{}, "203.0.113.9:4000", nil, []string{"203.0.113.9"}},
		{"no header, an IPv6 peer", clientip.Proxies{}, "[2001:db8::9]:4000", nil, []string{"2001:db8::9"}},
		{"no header, an IPv4-mapped peer: as IPv4", clientip.Proxies{}, "[::ffff:203.0.113.9]:4000", nil, []string{"203.0.113.9"}},
		{"no header, a peer with a zone: without it", clientip.Proxies{}, "[fe80::1%eth0]:4000", nil, []string{"fe80::1"}},
		{"an empty header is dropped", clientip.Proxies{}, "203.0.113.9:4000", []string{""}, []string{"203.0.113.9"}},
		{"an untrusted client's header is dropped", clientip.Proxies{}, "203.0.113.9:4000", []string{"1.2.3.4"}, []string{"203.0.113.9"}},
		{"several header lines of an untrusted client are dropped", clientip.Proxies{}, "203.0.113.9:4000", []string{"1.2.3.4", "5.6.7.8"}, []string{"203.0.113.9"}},
		{"behind a trusted proxy: the hop it recorded, alone", ingress, "10.0.0.5:4000", []string{"6.6.6.6, 203.0.113.9"}, []string{"203.0.113.9"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := httptest.NewRequest(http.MethodPost, "/api/onboarding/register", nil)
			r.RemoteAddr = tt.remote
			for _, h := range tt.headers {
				r.Header.Add("X-Forwarded-For", h)
			}
			r.Header.Set("Grpc-Metadata-X-Forwarded-For", "9.9.9.9")
			got := forwardedFor(t, tt.proxies, r)
			require.Equal(t, tt.want, got, "got %v, want %v", got, tt.want)
		})
	}
}

func TestRateLimitAnswersRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		wait time.Duration
		want string
	}{
		{20 * time.Second, "20"},
		{1500 * time.Millisecond, "2"},
		{time.Millisecond, "1"},
		{0, ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		writeError(rec, grpcerr.Status(&fault.Error{Kind: fault.RateLimited, Detail: "slow down", RetryAfter: tt.wait}).Err())
		require.Equal(t, http.StatusTooManyRequests, rec.Code)
		require.Equal(t, tt.want, rec.Header().Get("Retry-After"), "wait %s", tt.wait)
	}
}

func TestSecureHeadersOnEveryResponse(t *testing.T) {
	t.Parallel()
	panicking := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	h := chain(panicking, requestScope(zap.NewNop(), nil, nil, 0), recoverPanics(zap.NewNop()))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), "even a panic's 500")
}

func TestDryRunFromQueryFoldsTheFlagIntoTheBody(t *testing.T) {
	t.Parallel()
	var got string
	h := dryRunFromQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
		w.WriteHeader(http.StatusOK)
	}))
	for _, tc := range []struct {
		name, method, target, body string
		wantCode                   int
		wantBody                   string
	}{
		{"query true", http.MethodPost, "/api/cc/stake?dry_run=true", `{"amount_cc":5}`, 200, `{"amount_cc":5,"dry_run":true}`},
		{"a bare flag is true", http.MethodPost, "/api/cc/stake?dry_run", `{"amount_cc":5}`, 200, `{"amount_cc":5,"dry_run":true}`},
		{"query false", http.MethodPost, "/api/cc/stake?dry_run=0", `{}`, 200, `{"dry_run":false}`},
		{"no body", http.MethodPost, "/api/cc/stake?dry_run=1", ``, 200, `{"dry_run":true}`},
		{"agreeing body", http.MethodPost, "/api/cc/stake?dry_run=true", `{"dry_run":true}`, 200, `{"dry_run":true}`},
		{"disagreeing body", http.MethodPost, "/api/cc/stake?dry_run=true", `{"dry_run":false}`, 422, ``},
		{"not a boolean", http.MethodPost, "/api/cc/stake?dry_run=maybe", `{}`, 422, ``},
		{"not an object: passed on", http.MethodPost, "/api/cc/stake?dry_run=true", `[1]`, 200, `[1]`},
		{"other methods untouched", http.MethodPatch, "/api/x?dry_run=true", `{}`, 200, `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got = ""
			req := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			require.Equal(t, tc.wantCode, rec.Code, rec.Body.String())
			if tc.wantCode == 200 {
				require.JSONEq(t, tc.wantBody, got)
			} else {
				require.Contains(t, rec.Body.String(), `"field":"dry_run"`)
			}
		})
	}
}

// TestSemconvHistogram: beside Foundry's own, the gateway records the
// OpenTelemetry semantic conventions' http.server.request.duration, with
// their attributes (the route's path pattern, the method or _OTHER, the
// status code) and their default buckets.
func TestSemconvHistogram(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	routed := func(route string, status int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if route != "" {
				exchangeOf(r.Context()).route = route
			}
			w.WriteHeader(status)
		})
	}
	mw := requestScope(zap.NewNop(), reg, nil, 0)
	for _, c := range []struct {
		method, route string
		status        int
	}{
		{http.MethodGet, "GET /api/ideas/{idea_id=*}", http.StatusOK},
		{http.MethodGet, "GET /api/ideas/{idea_id=*}", http.StatusOK},
		{http.MethodPost, "POST /api/ideas", http.StatusCreated},
		{http.MethodGet, "/docs/", http.StatusOK},
		{"FOOBAR", "", http.StatusNotFound},
	} {
		mw(routed(c.route, c.status)).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(c.method, "/api/whatever", nil))
	}

	families, err := reg.Gather()
	require.NoError(t, err)
	got := map[string]uint64{}
	for _, f := range families {
		if f.GetName() != "http_server_request_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[labels["http_request_method"]+" "+labels["http_route"]+" "+labels["http_response_status_code"]] = m.GetHistogram().GetSampleCount()
			var bounds []float64
			for _, b := range m.GetHistogram().GetBucket() {
				bounds = append(bounds, b.GetUpperBound())
			}
			require.Equal(t, []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}, bounds)
		}
	}
	require.Equal(t, map[string]uint64{
		"GET /api/ideas/{idea_id=*} 200": 2,
		"POST /api/ideas 201":            1,
		"GET /docs/ 200":                 1,
		"_OTHER  404":                    1, // no route matched: http_route left out
	}, got)
	n, err := testutil.GatherAndCount(reg, "foundry_http_request_duration_seconds")
	require.NoError(t, err)
	require.Zero(t, n, "one HTTP histogram: Foundry's own form is gone")
}

// BenchmarkEdge measures what the middlewares every request passes cost
// an anonymous GET of an idea, around a route that answers at once.
func BenchmarkEdge(b *testing.B) {
	root := http.NewServeMux()
	body := []byte(`{"id":"x"}`)
	root.HandleFunc("GET /api/ideas/{id}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
	tel := newTelemetry(&fakeSender{}, zap.NewNop(), nil, testOptions(nil))
	tel.off.Store(true)
	settings := &app.Settings{HTTPAddr: "127.0.0.1:8080"}
	// The access line as a process writes it: JSON, buffered (here, then
	// thrown away).
	enc := zap.NewProductionEncoderConfig()
	log := zap.New(zapcore.NewCore(zapcore.NewJSONEncoder(enc), &zapcore.BufferedWriteSyncer{WS: zapcore.AddSync(io.Discard)}, zapcore.InfoLevel))
	h := edge(root, Config{MaxBodyBytes: 1 << 20, RequestTimeout: 30 * time.Second}, log, prometheus.NewRegistry(), settings, nil, tel)
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8080/api/ideas/0190a5b8-0000-7000-8000-000000000001", nil)
	req.RemoteAddr = "127.0.0.1:40000"
	w := &nowhere{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		h.ServeHTTP(w, req)
	}
	if w.status != http.StatusOK {
		b.Fatalf("status %d", w.status)
	}
}

// TestEdgeRecordsEveryAnswer: every answer of the edge is logged and
// measured, and carries the request's id and the security header: a
// panic's 500 and a refused Host's 403 as much as a route's 200 (recovery
// and the allowed hosts run inside the request's scope).
func TestEdgeRecordsEveryAnswer(t *testing.T) {
	t.Parallel()
	root := http.NewServeMux()
	root.HandleFunc("GET /api/ideas/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	root.HandleFunc("GET /api/boom", func(http.ResponseWriter, *http.Request) { panic("boom") })
	reg := prometheus.NewRegistry()
	core, lines := observer.New(zapcore.InfoLevel)
	h := edge(root, Config{MaxBodyBytes: 1 << 20, RequestTimeout: time.Minute}, zap.New(core), reg,
		&app.Settings{HTTPAddr: "127.0.0.1:8080"}, nil, nil)
	for _, c := range []struct {
		host, path string
		status     int
	}{
		{"127.0.0.1:8080", "/api/ideas/1", http.StatusOK},
		{"127.0.0.1:8080", "/api/boom", http.StatusInternalServerError},
		{"evil.example", "/api/ideas/1", http.StatusForbidden},
	} {
		req := httptest.NewRequest(http.MethodGet, "http://"+c.host+c.path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, c.status, rec.Code, c.path)
		require.True(t, requestid.Valid(rec.Header().Get(requestid.Header)), "%s %s: an id", c.host, c.path)
		require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), "%s %s", c.host, c.path)
	}
	var logged []string
	for _, e := range lines.FilterMessage("http").All() {
		logged = append(logged, fmt.Sprint(e.ContextMap()["route"], " ", e.ContextMap()["status"]))
	}
	require.Equal(t, []string{"GET /api/ideas/{id} 200", "GET /api/boom 500", "unmatched 403"}, logged)
	require.Equal(t, 3, testutil.CollectAndCount(reg, "http_server_request_duration_seconds"), "a series for each")
}

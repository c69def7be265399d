package gateway

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	opsinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/grpcerr"
)

// fakeSender hands each batch to batches, failing when err is set; with
// block set it waits for it to close first (a stalled ops service). An
// empty batch (the recorder asking whether telemetry is on) is counted in
// probes, not handed over; off is the answer to every call.
type fakeSender struct {
	batches chan []*opsinternalv1.RuntimeEvent
	err     error
	block   chan struct{}
	off     atomic.Bool
	probes  atomic.Int32
}

func (f *fakeSender) RecordEvents(ctx context.Context, in *opsinternalv1.RecordEventsRequest, _ ...grpc.CallOption) (*opsinternalv1.RecordEventsResponse, error) {
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if len(in.GetEvents()) == 0 {
		f.probes.Add(1)
	} else {
		f.batches <- in.GetEvents()
	}
	if f.err != nil {
		return nil, f.err
	}
	if f.off.Load() {
		return &opsinternalv1.RecordEventsResponse{Off: true}, nil
	}
	return &opsinternalv1.RecordEventsResponse{Accepted: int32(len(in.GetEvents()))}, nil
}

func testOptions(tick <-chan time.Time) telemetryOptions {
	return telemetryOptions{Buffer: 16, BatchSize: 3, Interval: time.Hour, SendTimeout: time.Minute, tick: tick}
}

func ev(route string) *opsinternalv1.RuntimeEvent {
	return &opsinternalv1.RuntimeEvent{Route: route, Method: "GET", Status: 200}
}

func routes(batch []*opsinternalv1.RuntimeEvent) []string {
	var out []string
	for _, e := range batch {
		out = append(out, e.GetRoute())
	}
	return out
}

// start runs the recorder until the test ends (or stop is called).
func start(t *testing.T, tel *telemetry) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { tel.run(ctx) })
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); wg.Wait() }) }
	t.Cleanup(stop)
	return stop
}

func TestTelemetryBatchesBySizeTickAndStop(t *testing.T) {
	t.Parallel()
	sender := &fakeSender{batches: make(chan []*opsinternalv1.RuntimeEvent, 10)}
	tick := make(chan time.Time)
	reg := prometheus.NewRegistry()
	tel := newTelemetry(sender, zap.NewNop(), reg, testOptions(tick))
	stop := start(t, tel)

	for _, r := range []string{"/a", "/b", "/c", "/d"} {
		tel.record(ev(r))
	}
	require.Equal(t, []string{"/a", "/b", "/c"}, routes(<-sender.batches), "a full batch goes at once")
	tick <- time.Now()
	require.Equal(t, []string{"/d"}, routes(<-sender.batches), "the interval sends what is waiting")
	tel.record(ev("/e"))
	stop()
	require.Equal(t, []string{"/e"}, routes(<-sender.batches), "stopping sends what is left")
	require.Equal(t, 5.0, testutil.ToFloat64(tel.sent))
	require.Equal(t, 0.0, testutil.ToFloat64(tel.dropped))
}

func TestTelemetryNeverBlocksARequest(t *testing.T) {
	t.Parallel()
	sender := &fakeSender{batches: make(chan []*opsinternalv1.RuntimeEvent, 10), block: make(chan struct{})}
	tel := newTelemetry(sender, zap.NewNop(), nil, testOptions(nil))
	start(t, tel)
	defer close(sender.block)

	// The first full batch stalls in the sender; the buffer (16) then fills
	// and the rest is dropped. If record blocked, this loop would hang.
	const n = 100
	for range n {
		tel.record(ev("/slow"))
	}
	dropped := testutil.ToFloat64(tel.dropped)
	require.GreaterOrEqual(t, dropped, float64(n-16-3), "past the buffer, events are dropped and counted")
	require.LessOrEqual(t, dropped, float64(n-16))
}

func TestTelemetryFailuresAreCounted(t *testing.T) {
	t.Parallel()
	sender := &fakeSender{batches: make(chan []*opsinternalv1.RuntimeEvent, 10), err: status.Error(codes.Unavailable, "down")}
	tel := newTelemetry(sender, zap.NewNop(), nil, testOptions(nil))
	stop := start(t, tel)
	for _, r := range []string{"/a", "/b", "/c"} {
		tel.record(ev(r))
	}
	<-sender.batches
	stop()
	require.Equal(t, 3.0, testutil.ToFloat64(tel.failed))
	require.Equal(t, 0.0, testutil.ToFloat64(tel.sent))
}

func TestTelemetryOffRecordsNothingUntilOn(t *testing.T) {
	t.Parallel()
	sender := &fakeSender{batches: make(chan []*opsinternalv1.RuntimeEvent, 10)}
	sender.off.Store(true)
	tick := make(chan time.Time)
	tel := newTelemetry(sender, zap.NewNop(), nil, testOptions(tick))
	h := chain(http.NotFoundHandler(), requestScope(zap.NewNop(), nil, tel, 0))
	serve := func() { h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/api/nothing", nil)) }
	start(t, tel)

	require.Eventually(t, func() bool { return !tel.on() }, 5*time.Second, time.Millisecond, "the first probe learns telemetry is off")
	require.Equal(t, int32(1), sender.probes.Load())
	serve() // builds no event: the batch below holds only the next request's

	sender.off.Store(false)
	tick <- time.Now() // ProbeInterval 0: every tick asks while off
	require.Eventually(t, tel.on, 5*time.Second, time.Millisecond, "a probe learns it is on again")
	require.Equal(t, int32(2), sender.probes.Load())
	serve()
	tick <- time.Now()
	require.Equal(t, []string{"unmatched"}, routes(<-sender.batches),
		"requests record events again, and the one served while off recorded none")
	require.Equal(t, int32(2), sender.probes.Load(), "no probe while telemetry is on")
}

func TestObserveRecordsRoutePatternsOnly(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(&fakeSender{}, zap.NewNop(), nil, testOptions(nil))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/things/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	// A part of the edge copies the request between requestScope and the
	// mux (as authenticate does for a credential), so toRoutes must carry
	// the pattern back.
	copying := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { next.ServeHTTP(w, r.WithContext(r.Context())) })
	}
	h := chain(mux, requestScope(zap.NewNop(), nil, tel, time.Minute), copying, toRoutes)

	req := httptest.NewRequest(http.MethodGet, "/api/things/42?token=secret-token", nil)
	req.Header.Set("Authorization", "Bearer secret-token")
	h.ServeHTTP(httptest.NewRecorder(), req)

	got := <-tel.events
	require.Equal(t, "/api/things/{id}", got.GetRoute(), "the pattern, not the path")
	require.Equal(t, "GET", got.GetMethod())
	require.Equal(t, int32(http.StatusTeapot), got.GetStatus())
	require.GreaterOrEqual(t, got.GetDurationMs(), 0.0)
	_, err := time.Parse(time.RFC3339Nano, got.GetOccurredAt())
	require.NoError(t, err)
	require.NotContains(t, got.String(), "secret", "no query string, header or body")
	// Only the route can carry the path's id; the timestamp and duration
	// may contain the digits "42" by chance, so the whole event is not
	// searched.
	require.NotContains(t, got.GetRoute(), "42")
}

func TestEventUsesTemplateForm(t *testing.T) {
	t.Parallel()
	got := event("GET", "GET /api/graph/nodes/{node_id=*}/edges", 200, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC), 1500*time.Microsecond)
	require.Equal(t, "/api/graph/nodes/{node_id}/edges", got.GetRoute())
	require.Equal(t, "/api/ready", event("HEAD", "GET /api/ready", 200, time.Now(), 0).GetRoute())
	require.Equal(t, "unmatched", event("GET", "unmatched", 404, time.Now(), 0).GetRoute())
	require.Equal(t, 1.5, got.GetDurationMs())
	require.Equal(t, "2026-05-01T00:00:00Z", got.GetOccurredAt())
}

// fakeReady answers Ready with resp or err.
type fakeReady struct {
	resp *opsv1.ReadyResponse
	err  error
}

func (f fakeReady) Ready(context.Context, *opsv1.ReadyRequest, ...grpc.CallOption) (*opsv1.ReadyResponse, error) {
	return f.resp, f.err
}

func TestReadyHandler(t *testing.T) {
	t.Parallel()
	notReady := grpcerr.Status(fault.New(fault.Unavailable, "not ready: ledger: unreachable")).Err()
	tests := []struct {
		name     string
		ops      fakeReady
		wantCode int
		wantBody string
	}{
		{"ready", fakeReady{resp: &opsv1.ReadyResponse{Status: "ready", Checks: []*opsv1.ReadinessCheck{{Name: "ledger", Status: "ok"}}}},
			200, `{"status":"ready","checks":[{"name":"ledger","status":"ok","detail":""}]}`},
		{"ops names the failing part", fakeReady{err: notReady}, 503, `{"detail":"not ready: ledger: unreachable"}`},
		{"ops unreachable is named too", fakeReady{err: status.Error(codes.Unavailable, "dial tcp 10.1.2.3:9090: refused")},
			503, `{"detail":"not ready: ops: unreachable"}`},
		{"ops hung", fakeReady{err: context.DeadlineExceeded}, 503, `{"detail":"not ready: ops: unreachable"}`},
	}
	for _, tc := range tests {
		rec := httptest.NewRecorder()
		readyHandler(tc.ops).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/ready", nil))
		require.Equal(t, tc.wantCode, rec.Code, tc.name)
		require.JSONEq(t, tc.wantBody, rec.Body.String(), tc.name)
		require.NotContains(t, rec.Body.String(), "10.1.2.3", tc.name)
	}
}

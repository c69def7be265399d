// Package handler implements the ops service's gRPC API: readiness, the
// persistence report and runtime telemetry (this file), the graph layer
// (graph.go) and automation usage (usage.go). It validates requests, applies
// the domain rules of the graph and usage packages and maps store errors to
// domain failures.
package handler

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	platformv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/platform/v1"
	"github.com/foundryhq/foundry/services/ops/internal/collector"
	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/readiness"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// probeTimeout bounds each readiness probe and each part of the persistence
// report, so a hung dependency makes them fail fast instead of hang.
const probeTimeout = 2 * time.Second

// sinkTimeout bounds one telemetry batch write.
const sinkTimeout = 5 * time.Second

// DefaultLatencyBudget bounds live usage collection when none is configured.
const DefaultLatencyBudget = time.Second

// Peer is another service readiness and the persistence report depend on.
type Peer struct {
	// Name is the module name ("ledger").
	Name string
	// Service is the gRPC service name its health server reports.
	Service string
	Health  healthpb.HealthClient
	// Storage describes the peer's database (served by every process).
	Storage platformv1.StorageServiceClient
	// Reconnect, when set, makes a connection that is backing off after a
	// failure retry at once, so readiness sees a returning peer on the next
	// probe rather than after the backoff.
	Reconnect func()
}

// Options configure a Handler.
type Options struct {
	// Store is the ops store (graph and usage snapshots).
	Store store.Store
	// DB is the ops database, for readiness and the persistence report.
	DB *database.DB
	// Peers are the other services.
	Peers []Peer
	// Telemetry is where runtime events go; nil means off.
	Telemetry telemetry.Sink
	// Collectors gather usage live; none means stored snapshots only.
	Collectors []collector.Collector
	// LatencyBudget bounds live usage collection; DefaultLatencyBudget when 0.
	LatencyBudget time.Duration
	// Clock defaults to the wall clock.
	Clock clock.Clock
	// Log defaults to a no-op logger.
	Log *zap.Logger
	// Metrics registers the handler's counters; nil leaves them unregistered.
	Metrics prometheus.Registerer
	// Monitor is the economy monitor (GET /api/health/coherence); nil when
	// this deployment does not run it.
	Monitor *monitor.Runner
}

// Handler serves foundry.ops.v1.OpsService and, for the gateway's
// telemetry, OpsInternalService.
type Handler struct {
	opsv1.UnimplementedOpsServiceServer
	opsv1.UnimplementedOpsInternalServiceServer

	store      store.Store
	monitor    *monitor.Runner
	db         *database.DB
	peers      []Peer
	sink       telemetry.Sink
	collectors []collector.Collector
	budget     time.Duration
	clock      clock.Clock
	log        *zap.Logger

	background sync.WaitGroup // storing live usage collections

	// storedMu guards stored: per provider, the collected_at of the last
	// live snapshot handed to the store, so an answer served again from
	// the usage cache is not stored again.
	storedMu sync.Mutex
	stored   map[string]time.Time

	eventsWritten prometheus.Counter
	eventsFailed  prometheus.Counter
	usageStoreErr prometheus.Counter
}

// New returns a Handler.
func New(opts Options) *Handler {
	h := &Handler{
		store: opts.Store, monitor: opts.Monitor, db: opts.DB, peers: opts.Peers, sink: opts.Telemetry,
		collectors: opts.Collectors, budget: opts.LatencyBudget, clock: opts.Clock, log: opts.Log,
		stored: map[string]time.Time{},
		eventsWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "foundry_telemetry_events_written_total",
			Help: "Runtime telemetry events written to the telemetry sink.",
		}),
		eventsFailed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "foundry_telemetry_events_failed_total",
			Help: "Runtime telemetry events lost because the telemetry sink failed.",
		}),
		usageStoreErr: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "foundry_usage_snapshot_store_failures_total",
			Help: "Live usage collections that could not be stored as snapshots.",
		}),
	}
	if h.sink == nil {
		h.sink, _ = telemetry.Open(telemetry.Config{}) // off; cannot fail
	}
	if h.budget <= 0 {
		h.budget = DefaultLatencyBudget
	}
	if h.clock == nil {
		h.clock = clock.Real{}
	}
	if h.log == nil {
		h.log = zap.NewNop()
	}
	if opts.Metrics != nil {
		opts.Metrics.MustRegister(h.eventsWritten, h.eventsFailed, h.usageStoreErr)
	}
	return h
}

// Ready implements OpsService.Ready: ready when the ops database answers and
// every peer answers its gRPC health check (SERVING) and describes a
// database that answers now. A telemetry database is probed too, but only
// reported: telemetry is best-effort, so its outage must not take Foundry
// out of service. Failure details stay generic ("unreachable", "database
// not answering"); the causes are logged.
func (h *Handler) Ready(ctx context.Context, _ *opsv1.ReadyRequest) (*opsv1.ReadyResponse, error) {
	probes := []readiness.Probe{{Name: "ops database", Check: func(ctx context.Context) error {
		if err := h.db.Ping(ctx); err != nil {
			h.log.Warn("readiness: ops database not answering", zap.Error(err))
			return errors.New("not answering")
		}
		return nil
	}}}
	for _, p := range h.peers {
		probes = append(probes, readiness.Probe{Name: p.Name, Check: func(ctx context.Context) error { return h.checkPeer(ctx, p) }})
	}
	if telemetry.IsDatabase(h.sink.Backend()) {
		probes = append(probes, readiness.Probe{Name: "telemetry", Optional: true, Check: func(ctx context.Context) error {
			if err := h.sink.Check(ctx); err != nil {
				h.log.Warn("readiness: telemetry database not answering (reported, not failing)", zap.Error(err))
				return errors.New("telemetry database not answering; events are being dropped")
			}
			return nil
		}})
	}
	results := readiness.Run(ctx, probes, probeTimeout)
	if failing := readiness.Failing(results); failing != "" {
		return nil, fault.New(fault.Unavailable, "not ready: %s", failing)
	}
	resp := &opsv1.ReadyResponse{Status: "ready"}
	for _, r := range results {
		c := &opsv1.ReadinessCheck{Name: r.Name, Status: "ok"}
		if !r.OK {
			c.Status, c.Detail = "fail", r.Detail
		}
		resp.Checks = append(resp.Checks, c)
	}
	return resp, nil
}

// checkPeer probes one peer: its health status, then its database.
func (h *Handler) checkPeer(ctx context.Context, p Peer) error {
	if p.Reconnect != nil {
		p.Reconnect()
	}
	hr, err := p.Health.Check(ctx, &healthpb.HealthCheckRequest{Service: p.Service})
	if err != nil {
		h.log.Warn("readiness: peer unreachable", zap.String("peer", p.Name), zap.Error(err))
		return errors.New("unreachable")
	}
	if hr.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return errors.New("not serving")
	}
	if p.Storage == nil {
		return nil
	}
	sr, err := p.Storage.DescribeStorage(ctx, &platformv1.DescribeStorageRequest{Service: p.Name})
	if err != nil {
		h.log.Warn("readiness: peer storage not described", zap.String("peer", p.Name), zap.Error(err))
		return errors.New("database not answering")
	}
	if sr.GetStatus() != "ok" {
		h.log.Warn("readiness: peer database not answering", zap.String("peer", p.Name), zap.String("detail", sr.GetDetail()))
		return errors.New("database not answering")
	}
	return nil
}

// GetPersistence implements OpsService.GetPersistence: every service's
// backend and schema version (asked of each service's own process, so the
// report is true however Foundry is deployed) and where telemetry goes. It
// answers 200 whenever ops can answer: a failing service shows as "fail"
// and makes the overall status "degraded", and the telemetry sink never
// changes the overall status (a file sink next to a database is a supported
// configuration, not a fault).
func (h *Handler) GetPersistence(ctx context.Context, _ *opsv1.GetPersistenceRequest) (*opsv1.GetPersistenceResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	services := make([]*opsv1.ServicePersistence, len(h.peers)+1)
	var wg sync.WaitGroup
	for i, p := range h.peers {
		wg.Go(func() { services[i] = h.describePeer(ctx, p) })
	}
	wg.Go(func() { services[len(h.peers)] = h.describeSelf(ctx) })
	tel := &opsv1.TelemetryPersistence{Backend: h.sink.Backend(), Target: h.sink.Target(), Status: "ok"}
	wg.Go(func() {
		if tel.Backend == telemetry.Off {
			tel.Status = "off"
			return
		}
		if err := h.sink.Check(ctx); err != nil {
			h.log.Warn("persistence: telemetry sink failing", zap.Error(err))
			tel.Status, tel.Detail = "fail", "the telemetry sink is not answering"
		}
	})
	wg.Wait()
	resp := &opsv1.GetPersistenceResponse{Services: services, Telemetry: tel, Status: "ok"}
	for _, s := range services {
		if s.GetStatus() != "ok" {
			resp.Status = "degraded"
		}
	}
	// Where the data lives (hosts, database names, file paths) helps an
	// attacker more than a health check: only an administrator sees it.
	// Everyone else gets the public view, so probes and dashboards work
	// without a credential.
	if authz.FromContext(ctx).Is(authz.Admin) {
		resp.TargetsShown = true
	} else {
		for _, s := range services {
			s.Target = ""
		}
		tel.Target = ""
	}
	return resp, nil
}

func (h *Handler) describePeer(ctx context.Context, p Peer) *opsv1.ServicePersistence {
	out := &opsv1.ServicePersistence{Service: p.Name, Status: "fail", Detail: "unreachable"}
	if p.Storage == nil {
		return out
	}
	if p.Reconnect != nil {
		p.Reconnect()
	}
	sr, err := p.Storage.DescribeStorage(ctx, &platformv1.DescribeStorageRequest{Service: p.Name})
	if err != nil {
		h.log.Warn("persistence: peer storage not described", zap.String("peer", p.Name), zap.Error(err))
		return out
	}
	return &opsv1.ServicePersistence{
		Service: p.Name, Backend: sr.GetBackend(), SchemaVersion: sr.GetSchemaVersion(),
		Status: sr.GetStatus(), Detail: sr.GetDetail(), Target: sr.GetTarget(), Schema: sr.GetSchema(),
	}
}

func (h *Handler) describeSelf(ctx context.Context) *opsv1.ServicePersistence {
	out := &opsv1.ServicePersistence{Service: "ops", Backend: string(h.db.Engine()), Target: h.db.Target(), Schema: h.db.Schema(), Status: "ok"}
	v, err := migrate.Version(ctx, h.db)
	if err != nil {
		h.log.Warn("persistence: ops database not answering", zap.Error(err))
		out.Status, out.Detail = "fail", "the database is not answering"
		return out
	}
	out.SchemaVersion = int32(v)
	return out
}

// Limits of one telemetry batch.
const (
	maxEventsPerBatch = 5000
	maxRouteLen       = 256
	maxMethodLen      = 16
)

// RecordEvents implements OpsService.RecordEvents: it stores a batch in the
// configured sink (accepted 0 when telemetry is off). A sink failure is
// logged and counted here and answered Unavailable to the caller (the
// gateway's background sender), never to an HTTP client.
func (h *Handler) RecordEvents(ctx context.Context, req *opsv1.RecordEventsRequest) (*opsv1.RecordEventsResponse, error) {
	if n := len(req.GetEvents()); n > maxEventsPerBatch {
		return nil, fault.Validation(fault.Field("events", "at most %d events per batch, got %d", maxEventsPerBatch, n))
	}
	if h.sink.Backend() == telemetry.Off || len(req.GetEvents()) == 0 {
		return &opsv1.RecordEventsResponse{}, nil
	}
	now := h.clock.Now()
	events := make([]telemetry.Event, 0, len(req.GetEvents()))
	for _, e := range req.GetEvents() {
		events = append(events, sanitizeEvent(e, now))
	}
	wctx, cancel := context.WithTimeout(ctx, sinkTimeout)
	defer cancel()
	if err := h.sink.Write(wctx, events); err != nil {
		h.eventsFailed.Add(float64(len(events)))
		h.log.Warn("telemetry sink failed: events dropped", zap.String("backend", h.sink.Backend()),
			zap.Int("events", len(events)), zap.Error(err))
		return nil, fault.New(fault.Unavailable, "telemetry sink unavailable: %d events dropped", len(events))
	}
	h.eventsWritten.Add(float64(len(events)))
	return &opsv1.RecordEventsResponse{Accepted: int32(len(events))}, nil
}

// sanitizeEvent keeps an event to what telemetry may hold even if a sender
// errs: a route without query string or fragment, bounded lengths, a sane
// duration and a time (the time of receipt when missing or malformed).
func sanitizeEvent(e *opsv1.RuntimeEvent, now time.Time) telemetry.Event {
	route, _, _ := strings.Cut(e.GetRoute(), "?")
	route, _, _ = strings.Cut(route, "#")
	at, err := time.Parse(time.RFC3339Nano, e.GetOccurredAt())
	if err != nil {
		at = now
	}
	d := e.GetDurationMs()
	if math.IsNaN(d) || math.IsInf(d, 0) || d < 0 {
		d = 0
	}
	return telemetry.Event{
		OccurredAt: at.UTC(), Method: truncate(strings.ToUpper(e.GetMethod()), maxMethodLen),
		Route: truncate(route, maxRouteLen), Status: int(e.GetStatus()), DurationMS: d,
	}
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

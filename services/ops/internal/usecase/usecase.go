// Package usecase is the ops service's use-case layer: each exported method
// is one use case (the graph layer, automation usage, runtime telemetry,
// readiness and the persistence report, and the economy monitor's checks
// and report), and each one that writes runs in exactly one database
// transaction that it opens itself. It validates a whole command at once
// (one fault.Validation per request), calls the pure rules of the graph,
// usage and monitor packages and the peers (the ledger, the other
// services' health), and maps store errors to domain failures.
// Repositories work over a querier (the pool or that transaction) and
// never open transactions of their own. The gRPC handler and the
// background runners (the economy monitor, telemetry retention) both call
// this layer; neither touches a store directly.
package usecase

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ops/internal/collector"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/uow"
)

// Repos are the ops repositories over one querier.
type Repos struct {
	Nodes  store.Nodes
	Edges  store.Edges
	Usage  store.UsageSnapshots
	Checks store.Checks
}

// Opener builds the repositories over a querier.
type Opener func(q database.Querier) Repos

// AgentUsage is the agent service as the usage overview reads it.
type AgentUsage interface {
	// Spent returns what its finished tasks reported spending over the
	// last days, by model.
	Spent(ctx context.Context, days int) ([]usage.ModelSpent, error)
}

// AgentUsageDays is the window of the agent's recorded usage in the
// overview: a month, the period providers' quotas most often run over.
const AgentUsageDays = 30

// DefaultLatencyBudget bounds live usage collection when none is configured.
const DefaultLatencyBudget = time.Second

// Config configures the use cases. Zero values take the documented defaults.
type Config struct {
	// Clock defaults to the wall clock.
	Clock clock.Clock
	// NewID makes ids of nodes, edges and snapshots (UUIDs by default).
	NewID func() string
	// Peers are the other services readiness and the persistence report
	// depend on.
	Peers []Peer
	// Telemetry is where runtime events go; nil means off.
	Telemetry telemetry.Sink
	// Collectors gather usage live; none means stored snapshots only.
	Collectors []collector.Collector
	// LatencyBudget bounds live usage collection (DefaultLatencyBudget).
	LatencyBudget time.Duration
	// Agent reads the usage the agent's tasks recorded; nil: none.
	Agent AgentUsage
	// Log defaults to a no-op logger.
	Log *zap.Logger
	// Metrics registers the use cases' counters; nil leaves them
	// unregistered.
	Metrics prometheus.Registerer
	// Monitor configures the economy monitor's use cases.
	Monitor MonitorConfig
}

// App runs the ops use cases.
type App struct {
	db   *database.DB
	unit uow.Unit[Repos]
	cfg  Config
	log  *zap.Logger
	sink telemetry.Sink
	// monitorLog is the economy monitor's logger.
	monitorLog *zap.Logger

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

// New returns the use-case layer over db.
func New(db *database.DB, open Opener, cfg Config) *App {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.NewID == nil {
		cfg.NewID = uuid.NewString
	}
	if cfg.LatencyBudget <= 0 {
		cfg.LatencyBudget = DefaultLatencyBudget
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	a := &App{
		db: db, unit: uow.New(db, open, cfg.Clock), cfg: cfg, log: cfg.Log, sink: cfg.Telemetry,
		monitorLog: cfg.Log.Named("monitor"),
		stored:     map[string]time.Time{},
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
	if a.sink == nil {
		a.sink, _ = telemetry.Open(telemetry.Config{}) // off; cannot fail
	}
	if cfg.Metrics != nil {
		cfg.Metrics.MustRegister(a.eventsWritten, a.eventsFailed, a.usageStoreErr)
	}
	return a
}

// Close waits for background work (storing live usage) to finish.
func (a *App) Close() { a.background.Wait() }

// now is the time records carry, to the microsecond the store keeps, so a
// write's answer equals what a later read returns.
func (a *App) now() time.Time { return a.unit.Now() }

// wrap adds the use case's name to an unclassified error.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

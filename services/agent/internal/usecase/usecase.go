// Package usecase is the agent's use-case layer: each exported method is
// one use case of the task pipeline (create, claim, update, reap, deliver
// the idea advancements, and the pipeline's reports), and each one that
// writes runs in exactly one database transaction that it opens itself.
// Repositories work over a querier (the pool or that transaction) and never
// open transactions of their own, so a status change, its counters, its
// prompt A/B outcome and its outbox row commit or roll back together. The
// gRPC handlers and the background loops both call this layer; neither
// touches a store directly.
package usecase

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/attention"
	"github.com/foundryhq/foundry/services/agent/internal/routing"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/uow"
)

// Repos are the agent's repositories over one querier.
type Repos struct {
	Tasks   store.Tasks
	Stats   store.Stats
	Prompts store.Prompts
	Outbox  store.Outbox
	Loop    store.LoopPasses
	// Keys holds the Idempotency-Key records of creates and claims.
	Keys idempotency.Keys
	// Send sends a batch the use case queued across the repositories, over
	// their querier (in the transaction, when they run in one): a use
	// case's writes that need no answer go together, one round trip on
	// Postgres.
	Send func(ctx context.Context, b *database.Batch) error
}

// Opener builds the repositories over a querier.
type Opener func(q database.Querier) Repos

// Ideas advances ideas in the portfolio, through its gRPC API: the agent
// never writes another service's schema.
type Ideas interface {
	// AdvanceForTask reports that task taskID of taskType completed for the
	// idea. It is idempotent by taskID. An unknown idea is a fault.NotFound
	// error, an id the portfolio refuses a fault.Invalid one.
	AdvanceForTask(ctx context.Context, ideaID, taskType, taskID string) error
}

// Defaults of the configuration.
const (
	// DefaultLease is how long a claim holds without a renewal.
	DefaultLease = 5 * time.Minute
	// DefaultMaxAttempts is how many claims a task gets before an expired
	// lease times it out.
	DefaultMaxAttempts = 3
	// DefaultABDraws is how many Thompson draws estimate a variant's
	// selection probability.
	DefaultABDraws = 10000
	// DefaultExactSample is how many durations a metrics window may hold
	// for its percentiles to be computed from the durations themselves;
	// beyond, they come from the duration histogram (within 2 %).
	DefaultExactSample = 1000
)

// Config configures the use cases. Zero values take the documented defaults.
type Config struct {
	Clock clock.Clock
	// NewID makes task ids (UUIDs by default).
	NewID func() string
	// Seed seeds the prompt-variant selection (0: a random seed). The
	// selection probabilities reported by the A/B statistics are estimated
	// with a source seeded from it too, so one seed gives reproducible
	// answers.
	Seed uint64
	// Routing routes task types (routing.Default() by default).
	Routing routing.Table
	// Attention holds the pipeline's attention thresholds (attention.Defaults).
	Attention attention.Config
	// Lease is the claim lease when a claim names none (DefaultLease).
	Lease time.Duration
	// MaxAttempts is how many attempts a task of a type Retries does not
	// name gets (DefaultMaxAttempts).
	MaxAttempts int
	// Retries are the task types' retry policies; a zero Default is
	// task.DefaultRetry with MaxAttempts attempts.
	Retries task.Policies
	// Prices estimate a task's cost from its tokens when its executor
	// reports none (task.DefaultPrices when nil).
	Prices task.Prices
	// Variants are the prompt variants known before any is recorded.
	Variants []string
	// CoolOff is how long a blocked variant waits for its one re-probe
	// (abtest.DefaultCoolOff when 0; negative: never re-probed).
	CoolOff time.Duration
	// ABDraws is the number of draws behind a selection probability.
	ABDraws int
	// ExactSample is the most durations the metrics' percentiles read
	// (DefaultExactSample).
	ExactSample int
	// Ideas advances ideas in the portfolio (delivery fails without it).
	Ideas Ideas
	// Log records the variant each task uses and the outbox's troubles.
	Log *zap.Logger
	// Metrics registers the use cases' counters (claims, reaped leases);
	// nil leaves them unregistered.
	Metrics prometheus.Registerer
}

// App runs the agent's use cases.
type App struct {
	db  *database.DB
	cfg Config
	log *zap.Logger

	rndMu sync.Mutex
	rnd   *rand.Rand

	// wake is signalled after a commit that queued an idea advancement.
	wake chan struct{}

	// promptCache holds the stored prompts creates choose among.
	promptCache promptCache

	// closed caches the metrics windows' closed days.
	closed closedDays
	// closedDaily caches the daily series' closed days (DailyMetrics).
	closedDaily dailyCache

	// unit runs the transactions over fresh repositories.
	unit uow.Unit[Repos]
	// keyed runs the use cases that take an Idempotency-Key.
	keyed idempotency.Runner[Repos]

	// claims counts the claims this process committed; reaps the expired
	// leases it reaped, by the status the task went back to.
	claims prometheus.Counter
	reaps  *prometheus.CounterVec
	// retries counts the failed attempts this process scheduled a retry
	// of, discards the tasks whose last attempt failed here.
	retries, discards prometheus.Counter
}

// New returns the use-case layer over db.
func New(db *database.DB, open Opener, cfg Config) *App {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string { return uuid.Must(uuid.NewRandomFromReader(crand.Reader)).String() }
	}
	if cfg.Seed == 0 {
		var b [8]byte
		_, _ = crand.Read(b[:])
		cfg.Seed = binary.LittleEndian.Uint64(b[:]) | 1
	}
	if cfg.Routing.TaskTypes == nil {
		cfg.Routing = routing.Default()
	}
	if cfg.Attention == (attention.Config{}) {
		cfg.Attention = attention.Defaults
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Retries.Default.MaxAttempts == 0 {
		cfg.Retries.Default = task.DefaultRetry
		cfg.Retries.Default.MaxAttempts = cfg.MaxAttempts
	}
	if cfg.Prices == nil {
		cfg.Prices = task.DefaultPrices
	}
	if cfg.CoolOff == 0 {
		cfg.CoolOff = abtest.DefaultCoolOff
	}
	if cfg.ABDraws <= 0 {
		cfg.ABDraws = DefaultABDraws
	}
	if cfg.ExactSample <= 0 {
		cfg.ExactSample = DefaultExactSample
	}
	if cfg.Log == nil {
		cfg.Log = zap.NewNop()
	}
	a := &App{
		db: db, cfg: cfg, log: cfg.Log, unit: uow.New(db, open, cfg.Clock),
		rnd:  rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		wake: make(chan struct{}, 1),
	}
	a.keyed = a.unit.Runner(func(r Repos) idempotency.Keys { return r.Keys })
	a.claims = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "foundry_agent_task_claims_total",
		Help: "Tasks this process handed to a worker: claims, PATCHes to running and tasks the pipeline loop created claimed.",
	})
	a.reaps = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "foundry_agent_lease_reaps_total",
		Help: "Expired claims this process reaped, by the status the task went to (pending: back to the queue; timed_out: out of attempts).",
	}, []string{"status"})
	// Both series exist from the start, so increase() sees the first reap.
	a.reaps.WithLabelValues(string(task.Pending))
	a.reaps.WithLabelValues(string(task.TimedOut))
	a.retries = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "foundry_agent_task_retries_total",
		Help: "Failed attempts this process scheduled a retry of (the task type's retry policy had attempts left).",
	})
	a.discards = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "foundry_agent_tasks_discarded_total",
		Help: "Tasks whose last attempt failed in this process: discarded until an operator retries them.",
	})
	if cfg.Metrics != nil {
		cfg.Metrics.MustRegister(a.claims, a.reaps, a.retries, a.discards)
	}
	return a
}

// now is the time records carry, to the microsecond the store keeps, so a
// write's answer equals what a later read returns.
func (a *App) now() time.Time { return a.unit.Now() }

// tx runs fn in one transaction over fresh repositories. Serialization
// failures and deadlocks are retried by the database layer, so fn must have
// no effect outside the transaction.
func (a *App) tx(ctx context.Context, fn func(r Repos) error) error { return a.unit.Tx(ctx, fn) }

// read gives repositories over the pool: for use cases that only read.
func (a *App) read() Repos { return a.unit.Read() }

// Wake is signalled (without blocking, so at most one signal waits) after
// a transaction queued an idea advancement: the deliverer need not wait
// for its next tick.
func (a *App) Wake() <-chan struct{} { return a.wake }

func (a *App) signal() {
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// jitter draws a retry's jitter (task.RetryPolicy.Retries) from the
// App's seeded source.
func (a *App) jitter() float64 {
	a.rndMu.Lock()
	defer a.rndMu.Unlock()
	return a.rnd.Float64()
}

// maxAttempts is how many attempts t gets: its own count, or for a task
// from before retries its type's policy's.
func (a *App) maxAttempts(t store.Task) int {
	if t.MaxAttempts > 0 {
		return t.MaxAttempts
	}
	return a.cfg.Retries.Of(t.Type).MaxAttempts
}

// wrap adds the use case's name to an unclassified error.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

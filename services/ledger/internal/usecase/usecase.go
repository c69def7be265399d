// Package usecase is the ledger's use-case layer: each exported method is
// one use case (onboarding, attribution and the credit economy), and each
// one that writes runs in exactly one database transaction that it opens
// itself. Stores are repositories over a querier (the pool or that
// transaction) and never open transactions of their own, so a CC movement,
// its journal lines, its audit entry and its idempotency record commit or
// roll back together. The gRPC handlers and the background loops both call
// this layer; neither touches a store directly.
package usecase

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/uow"
)

// Repos are the ledger's repositories over one querier.
type Repos struct {
	Credit      store.Credit
	Audit       store.Audit
	Integrity   store.Integrity
	Identity    store.Identity
	Attribution store.Attribution
	Impact      store.Impact
	// Keys holds the Idempotency-Key records.
	Keys idempotency.Keys
	// Send sends a batch the use case queued across the repositories, over
	// the same querier (a use case's last batch may end its transaction:
	// database.Batch.Final).
	Send func(ctx context.Context, b *database.Batch) error
}

// Opener builds the repositories over a querier.
type Opener func(q database.Querier) Repos

// Ideas looks ideas up in the portfolio, through its gRPC API: the ledger
// never reads another service's schema.
type Ideas interface {
	// Idea returns the idea; a fault.NotFound error when there is none.
	Idea(ctx context.Context, id string) (IdeaInfo, error)
}

// ImpactBoard shows each idea's impact totals beside it: the ledger owns
// the records, the portfolio answers the idea.
type ImpactBoard interface {
	// SetImpact tells the idea's totals as of version (how many records
	// they sum); a version no newer than the one shown changes nothing.
	// A fault.NotFound error when there is no such idea.
	SetImpact(ctx context.Context, ideaID string, version int64, t store.ImpactTotals) error
}

// IdeaInfo is what the credit economy needs of an idea.
type IdeaInfo struct {
	ID    string
	Stage string
	// Confidence (0..1) stands for the idea's coherence in projections.
	Confidence float64
	// Pending is true while an operator has not accepted the idea's name
	// and values; CreatedBy is the contributor who created it ("" for an
	// operator). Only the creator stakes on a pending idea
	// (credit.CheckStakeOn).
	Pending   bool
	CreatedBy string
}

// Config configures the use cases. Zero values take the documented defaults.
type Config struct {
	Clock clock.Clock
	// NewID makes entity ids (UUIDs by default).
	NewID func() string
	// Rates is where the mid rate comes from (a fixed rate by default).
	Rates RateSource
	// SpreadBP is the posted spread in basis points (100: 1 %).
	SpreadBP int64
	// Breaker is the oracle circuit breaker (20 % from the 1-hour average of
	// accepted readings; 3 clean readings or a second source, after 5 minutes).
	Breaker credit.Breaker
	// PledgeRate is the CC a pledged hour is worth (500 CC).
	PledgeRate money.Micros
	// ImpactUsageRate is the attribution a usage record adds to a
	// position per unit of usage, as a share of its stake
	// (impact.DefaultUsageRate: 0.01).
	ImpactUsageRate money.Micros
	// Signers are the freeze signers: id → HMAC secret.
	Signers map[string]string
	// Ideas looks ideas up in the portfolio.
	Ideas Ideas
	// Board is where ideas show their impact totals (the portfolio); nil:
	// the totals stay unpublished, their notices kept (PublishImpact).
	Board ImpactBoard
	// SessionTTL is a session's sliding lifetime; 0: sessions never expire.
	SessionTTL time.Duration
	// AuditSigner signs the audit log's checkpoints (a key made for this
	// process when nil: its checkpoints verify only until it stops).
	AuditSigner *audit.Signer
	// Witnesses are the witnesses asked to cosign each checkpoint
	// (WitnessCheckpoint); while any is configured, the checkpoint served
	// is the latest they all cosigned, with their cosignatures.
	Witnesses []Witness
	// AuditPreviousKeys are verifier keys the log's checkpoints may also
	// be signed by: keys the ledger signed with before its signing key was
	// rotated. A checkpoint signed by any other key is tampering.
	AuditPreviousKeys []string
	// AuditPreviousSigner is the key the ledger signed with before its
	// signing key was rotated, given for the rotation: it countersigns the
	// change the log records (keychange.go). Its checkpoints are trusted
	// as AuditPreviousKeys' are.
	AuditPreviousSigner *audit.Signer
	// AuditBatch is how many queued audit entries one batch integrates
	// (DefaultAuditBatch).
	AuditBatch int
	// ScrubCycle is how long one cycle of the scrubber may take
	// (DefaultScrubCycle; negative: the scrubber is off, and nothing
	// reports it late).
	ScrubCycle time.Duration
	// ScrubSlice is how many entries, journal entries and accounts one
	// step of the scrubber checks of each (DefaultScrubSlice).
	ScrubSlice int
	// CoherenceSlice is how many journal entries and audit entries one
	// coherence check reconciles of each, at most (DefaultCoherenceSlice).
	CoherenceSlice int
	// Metrics registers the use cases' counters (freezes); nil leaves
	// them unregistered.
	Metrics prometheus.Registerer
}

// App runs the ledger's use cases.
type App struct {
	db    *database.DB
	cfg   Config
	clock clock.Clock
	// unit runs the transactions over fresh repositories; a commit wakes
	// the sequencer when queued is set.
	unit uow.Unit[Repos]
	// keyed runs the use cases that take an Idempotency-Key.
	keyed  idempotency.Runner[Repos]
	signer *audit.Signer
	// queued is set by a movement that queued audit entries; the next
	// commit then wakes the sequencer through kick. A hint only: the
	// sequencer polls too.
	queued atomic.Bool
	kick   chan struct{}
	// treeCaughtUp is set once the Merkle tree covers every entry sequenced
	// before it existed, so an idle sequencer stops checking.
	treeCaughtUp atomic.Bool
	// verified caches the last incremental verification's answer.
	verifyMu sync.Mutex
	verified verifyCache
	// lastVerified is the last verification this process ran, whatever
	// asked for it (the monitor's check, GET /api/audit/verify), for the
	// metrics (Gauges); nil before the first.
	lastVerified atomic.Pointer[Verification]
	// freezes counts the changes to frozen this process made.
	freezes prometheus.Counter
	// integrityFound counts the integrity findings this process recorded,
	// by kind.
	integrityFound *prometheus.CounterVec
}

// New returns the use-case layer over db.
func New(db *database.DB, open Opener, cfg Config) *App {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.NewID == nil {
		cfg.NewID = func() string { return uuid.Must(uuid.NewRandomFromReader(rand.Reader)).String() }
	}
	if cfg.Rates == nil {
		cfg.Rates = FixedRate(DefaultCCPerUSD)
	}
	if cfg.SpreadBP == 0 {
		cfg.SpreadBP = credit.DefaultSpreadBP
	}
	if cfg.Breaker == (credit.Breaker{}) {
		cfg.Breaker = credit.DefaultBreaker
	}
	if cfg.PledgeRate == 0 {
		cfg.PledgeRate = credit.DefaultPledgeRate
	}
	if cfg.ImpactUsageRate == 0 {
		cfg.ImpactUsageRate = impact.DefaultUsageRate
	}
	if cfg.AuditBatch <= 0 {
		cfg.AuditBatch = DefaultAuditBatch
	}
	if cfg.ScrubCycle == 0 {
		cfg.ScrubCycle = DefaultScrubCycle
	}
	if cfg.CoherenceSlice <= 0 {
		cfg.CoherenceSlice = DefaultCoherenceSlice
	}
	if cfg.ScrubSlice <= 0 {
		cfg.ScrubSlice = DefaultScrubSlice
	}
	if cfg.AuditSigner == nil {
		skey, _, err := audit.GenerateKey(EphemeralAuditKeyName)
		if err == nil {
			cfg.AuditSigner, err = audit.NewSigner(skey)
		}
		if err != nil {
			panic("generate an audit signing key: " + err.Error()) // crypto/rand failing is not recoverable
		}
	}
	a := &App{db: db, cfg: cfg, clock: cfg.Clock, signer: cfg.AuditSigner, kick: make(chan struct{}, 1),
		freezes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "foundry_ledger_freezes_total",
			Help: "Changes of the economy to frozen this process made (a signer's freeze, or the monitor's mode).",
		}),
		integrityFound: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "foundry_ledger_integrity_findings_total",
			Help: "Integrity findings this process recorded (the log, the journal, a balance or the supply disagreeing with what the ledger signed), by kind.",
		}, []string{"kind"}),
	}
	for kind := range findingModes {
		a.integrityFound.WithLabelValues(kind)
	}
	if cfg.Metrics != nil {
		cfg.Metrics.MustRegister(a.freezes, a.integrityFound)
	}
	a.unit = uow.New(db, open, cfg.Clock)
	a.unit.AfterCommit = a.wakeSequencer
	a.keyed = a.unit.Runner(func(r Repos) idempotency.Keys { return r.Keys })
	return a
}

// now is the time records carry, to the microsecond the store keeps, so a
// write's answer equals what a later read returns.
func (a *App) now() time.Time { return a.unit.Now() }

// EphemeralAuditKeyName names the audit signing key a ledger makes for
// itself when none is configured.
const EphemeralAuditKeyName = "foundry-audit"

// tx runs fn in one transaction over fresh repositories. Serialization
// failures and deadlocks are retried by the database layer, so fn must have
// no effect outside the transaction. A commit after a movement queued audit
// entries wakes the sequencer.
func (a *App) tx(ctx context.Context, fn func(r Repos) error) error { return a.unit.Tx(ctx, fn) }

// wakeSequencer runs after every commit: when a movement queued audit
// entries, it wakes the sequencer (without blocking, so at most one signal
// waits).
func (a *App) wakeSequencer() {
	if a.queued.Swap(false) {
		select {
		case a.kick <- struct{}{}:
		default:
		}
	}
}

// read gives repositories over the pool: for use cases that only read.
func (a *App) read() Repos { return a.unit.Read() }

// wrap adds the use case's name to an unclassified error.
func wrap(what string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", what, err)
}

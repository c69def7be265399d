package telemetry

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/periodic"
)

// DefaultRetention is how long events are kept unless configured: a month
// answers "what happened last week" without letting a busy gateway grow
// the table without bound.
const DefaultRetention = 30 * 24 * time.Hour

// DefaultPruneInterval is how often a Retainer prunes: one request event
// per served request accumulates slowly enough that an hour's worth is a
// few batches.
const DefaultPruneInterval = time.Hour

// Pruner deletes old events: the ops use case that prunes the sink.
type Pruner interface {
	// PruneEvents deletes the events that occurred before before and
	// reports how many (a file or off sink prunes nothing).
	PruneEvents(ctx context.Context, before time.Time) (int64, error)
}

// Retainer keeps a sink's events for Retention and deletes older ones, at
// start and then every Interval, through the use case that prunes them. It
// reads the time from Clock, so tests decide what "old" means without
// waiting. Every ops replica may run one: a row another replica already
// deleted is simply not there.
type Retainer struct {
	// Events prunes the sink.
	Events Pruner
	// Retention is the age past which events go; it must be positive.
	Retention time.Duration
	// Interval is the time between prunes; DefaultPruneInterval when 0.
	Interval time.Duration
	// Clock defaults to the wall clock.
	Clock clock.Clock
	// Log defaults to a no-op logger.
	Log *zap.Logger
}

// Once deletes the events that occurred more than Retention before now and
// reports how many.
func (r *Retainer) Once(ctx context.Context) (int64, error) {
	c := r.Clock
	if c == nil {
		c = clock.Real{}
	}
	return r.Events.PruneEvents(ctx, c.Now().Add(-r.Retention))
}

// Run prunes at once and then every Interval until ctx ends. A failed prune
// (the telemetry database is down) is logged and retried at the next tick:
// retention never stops the service.
func (r *Retainer) Run(ctx context.Context) {
	log := r.Log
	if log == nil {
		log = zap.NewNop()
	}
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultPruneInterval
	}
	periodic.Run(ctx, interval, func() {
		n, err := r.Once(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("pruning runtime telemetry failed", zap.Error(err))
		case n > 0:
			log.Info("pruned runtime telemetry", zap.Int64("events", n), zap.Duration("retention", r.Retention))
		}
	})
}

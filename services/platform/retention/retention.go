// Package retention deletes what a service keeps only for a while
// (telemetry events, idempotency keys), in bounded batches, at start and
// then on an interval: what is live stays small however long the service
// runs. Money and the audit log are never pruned; each use of this
// package says what it deletes and after how long (docs/ops.md,
// "Retention").
package retention

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/periodic"
)

// DefaultInterval is how often a Retainer prunes.
const DefaultInterval = time.Hour

// DefaultBatch is how many rows one prune deletes at most: one short
// transaction, whatever the backlog of what aged out.
const DefaultBatch = 1000

// Prune deletes at most batch of what is older than before and reports
// how many it deleted (a use case's, over its own repository).
type Prune func(ctx context.Context, before time.Time, batch int) (int64, error)

// Retainer keeps what Prune deletes for Retention, pruning at start and
// then every Interval, a batch at a time until a batch comes back short.
// Every replica may run one: a row another replica deleted is simply not
// there. It reads the time from Clock, so tests decide what "old" means
// without waiting.
type Retainer struct {
	// What names what is pruned, for the log ("idempotency keys").
	What  string
	Prune Prune
	// Retention is the age past which rows go; it must be positive.
	Retention time.Duration
	// Interval is the time between prunes (DefaultInterval when 0); Batch
	// the most rows one call of Prune deletes (DefaultBatch when 0).
	Interval time.Duration
	Batch    int
	// Clock defaults to the wall clock, Log to a no-op logger.
	Clock clock.Clock
	Log   *zap.Logger
}

// Once deletes what is older than Retention, batch after batch, and
// reports how many rows went.
func (r *Retainer) Once(ctx context.Context) (int64, error) {
	c := r.Clock
	if c == nil {
		c = clock.Real{}
	}
	batch := r.Batch
	if batch <= 0 {
		batch = DefaultBatch
	}
	before := c.Now().Add(-r.Retention)
	var total int64
	for {
		n, err := r.Prune(ctx, before, batch)
		total += n
		if err != nil || n < int64(batch) {
			return total, err
		}
	}
}

// Run prunes at once and then every Interval until ctx ends. A failed
// prune (the database is down) is logged and tried again at the next
// tick: retention never stops the service.
func (r *Retainer) Run(ctx context.Context) {
	log := r.Log
	if log == nil {
		log = zap.NewNop()
	}
	interval := r.Interval
	if interval <= 0 {
		interval = DefaultInterval
	}
	periodic.Run(ctx, interval, func() {
		n, err := r.Once(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("pruning failed", zap.String("what", r.What), zap.Error(err))
		case n > 0:
			log.Info("pruned", zap.String("what", r.What), zap.Int64("rows", n), zap.Duration("retention", r.Retention))
		}
	})
}

package usecase

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Outbox delivery timing.
const (
	// outboxHold is how long a taken item is left to its deliverer before
	// another may take it (longer than a delivery may last).
	outboxHold = 30 * time.Second
	// deliveryTimeout bounds one call to the portfolio.
	deliveryTimeout = 10 * time.Second
	// backoffBase and backoffMax bound the wait before a retry: base ×
	// 2^(attempts−1), at most max.
	backoffBase = time.Second
	backoffMax  = 5 * time.Minute
)

// Backoff is the wait after a failed delivery attempt (1 s, 2 s, 4 s, ...
// up to 5 minutes).
func Backoff(attempts int) time.Duration {
	d := backoffBase
	for i := 1; i < attempts && d < backoffMax; i++ {
		d *= 2
	}
	return min(d, backoffMax)
}

// DeliverOutbox delivers up to limit due idea advancements and reports how
// many were settled (delivered, or given up as undeliverable). A failed
// delivery is retried later with backoff; errors of single items are
// recorded on them, not returned.
func (a *App) DeliverOutbox(ctx context.Context, limit int) (int, error) {
	var items []store.OutboxItem
	err := a.tx(ctx, func(r Repos) error {
		now := a.now()
		var err error
		items, err = r.Outbox.Take(ctx, now, now.Add(outboxHold), limit)
		return err
	})
	if err != nil {
		return 0, wrap("take outbox items", err)
	}
	settled := 0
	for _, it := range items {
		ok, err := a.deliver(ctx, it)
		if err != nil {
			return settled, err
		}
		if ok {
			settled++
		}
	}
	return settled, nil
}

// DeliverTask delivers one task's idea advancement now, whether due or
// not (idempotent: nothing happens when it was delivered or there is
// none). It returns the delivery's error, which is also recorded for the
// retry.
func (a *App) DeliverTask(ctx context.Context, taskID string) error {
	var it store.OutboxItem
	err := a.tx(ctx, func(r Repos) error {
		var err error
		it, err = r.Outbox.TakeOne(ctx, taskID, a.now().Add(outboxHold))
		return err
	})
	if isNotFound(err) {
		return nil
	}
	if err != nil {
		return wrap("take the outbox item of task "+taskID, err)
	}
	if _, err := a.deliver(ctx, it); err != nil {
		return err
	}
	got, err := a.read().Outbox.Get(ctx, taskID)
	if err != nil {
		return wrap("read the outbox item of task "+taskID, err)
	}
	if got.DeliveredAt.IsZero() {
		return fault.New(fault.Unavailable, "advancing idea %s failed: %s", got.IdeaID, got.LastError)
	}
	return nil
}

// OutboxItem returns a task's outbox item.
func (a *App) OutboxItem(ctx context.Context, taskID string) (store.OutboxItem, error) {
	it, err := a.read().Outbox.Get(ctx, taskID)
	return it, wrap("read outbox item", err)
}

// deliver calls the portfolio for one item and records the attempt. An
// unknown idea (or an id the portfolio refuses) will never advance, so it
// is settled as delivered with the error kept; any other failure waits
// for a retry. ok reports whether the item is settled.
func (a *App) deliver(ctx context.Context, it store.OutboxItem) (bool, error) {
	var callErr error
	if a.cfg.Ideas == nil {
		callErr = errors.New("no portfolio client configured")
	} else {
		cctx, cancel := context.WithTimeout(ctx, deliveryTimeout)
		callErr = a.cfg.Ideas.AdvanceForTask(cctx, it.IdeaID, string(it.TaskType), it.TaskID)
		cancel()
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	now := a.now()
	it.Attempts++
	it.LastError = ""
	switch kind := fault.KindOf(callErr); {
	case callErr == nil:
		it.DeliveredAt = now
	case kind == fault.NotFound || kind == fault.Invalid:
		it.DeliveredAt, it.LastError = now, callErr.Error()
		a.log.Warn("idea advancement not deliverable; given up", zap.String("task_id", it.TaskID),
			zap.String("idea_id", it.IdeaID), zap.Error(callErr))
	default:
		it.LastError = callErr.Error()
		it.NextAttemptAt = now.Add(Backoff(it.Attempts))
		a.log.Warn("idea advancement failed; retrying later", zap.String("task_id", it.TaskID), zap.String("idea_id", it.IdeaID),
			zap.Int("attempts", it.Attempts), zap.Duration("retry_in", Backoff(it.Attempts)), zap.Error(callErr))
	}
	if err := a.tx(ctx, func(r Repos) error { return r.Outbox.Settle(ctx, it) }); err != nil {
		return false, wrap("settle the outbox item of task "+it.TaskID, err)
	}
	return !it.DeliveredAt.IsZero(), nil
}

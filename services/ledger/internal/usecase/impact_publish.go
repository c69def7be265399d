package usecase

import (
	"context"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/fault"
)

const (
	// ImpactPublishBatch is how many ideas one round of PublishImpact
	// tells the portfolio of.
	ImpactPublishBatch = 100
	// ImpactPushWait bounds the push a record makes itself.
	ImpactPushWait = 2 * time.Second
)

// PublishImpact tells the portfolio the impact totals of up to limit
// ideas whose records changed since it was last told (the oldest notices
// first), and answers how many it told. Each notice was added in its
// record's transaction, so a record is published at least once whatever
// failed after it committed; a push reads the totals after the notice,
// and clears only the notices it read, so a record that commits during a
// push is pushed again. Pushes are idempotent and ordered by version (the
// portfolio keeps the newest), so two ledgers publishing at once agree.
// An idea the portfolio does not know is skipped and its notice cleared:
// ideas are never deleted, so it would never know it.
func (a *App) PublishImpact(ctx context.Context, limit int) (int, error) {
	if a.cfg.Board == nil {
		return 0, nil
	}
	notices, err := a.read().Impact.ImpactNotices(ctx, limit)
	if err != nil {
		return 0, err
	}
	told := 0
	for _, n := range notices {
		if err := a.publish(ctx, n); err != nil {
			return told, err
		}
		told++
	}
	return told, nil
}

// publishIdeaImpact publishes one idea's pending notice, if it has one,
// for the use case that just noted it, within ImpactPushWait, so the
// idea answers its record at once. A failure leaves the notice to the
// publisher, which retries it and logs what keeps failing.
func (a *App) publishIdeaImpact(ctx context.Context, ideaID string) {
	if a.cfg.Board == nil {
		return
	}
	// The record has committed: a client gone now must not cut the push.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ImpactPushWait)
	defer cancel()
	if n, err := a.read().Impact.ImpactNoticeOf(ctx, ideaID); err == nil {
		_ = a.publish(ctx, n)
	}
}

func (a *App) publish(ctx context.Context, n store.ImpactNotice) error {
	r := a.read()
	t, err := r.Impact.ImpactTotals(ctx, n.IdeaID)
	if err != nil {
		return err
	}
	version := int64(t.UsageRecords) + int64(t.RevenueRecords)
	if err := a.cfg.Board.SetImpact(ctx, n.IdeaID, version, t); err != nil && fault.KindOf(err) != fault.NotFound {
		return fmt.Errorf("tell the portfolio the impact of idea %s: %w", n.IdeaID, err)
	}
	_, err = r.Impact.ClearImpactNotice(ctx, n)
	return err
}

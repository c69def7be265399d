package ledger

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
)

// impactPublishEvery is how often the publisher looks for impact totals
// the portfolio has not been told. A record pushes its own totals as it
// commits; the publisher is for the ones whose push failed (the
// portfolio down or slow), so an idea's answers catch up within this
// once the portfolio is back.
const impactPublishEvery = 5 * time.Second

// runImpactPublisher tells the portfolio the ideas' impact totals it has
// not been told, every interval until ctx ends, in batches back to back
// while they come full. A failure is logged once a minute while it
// repeats: the notices wait, and nothing else depends on them.
func runImpactPublisher(ctx context.Context, log *zap.Logger, uc *usecase.App, every time.Duration) {
	var logged time.Time
	for ctx.Err() == nil {
		n, err := uc.PublishImpact(ctx, usecase.ImpactPublishBatch)
		if err != nil && ctx.Err() == nil && time.Since(logged) >= time.Minute {
			log.Warn("telling the portfolio the ideas' impact totals failed; ideas answer older totals until it succeeds", zap.Error(err))
			logged = time.Now()
		}
		if err == nil && n == usecase.ImpactPublishBatch {
			continue
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
}

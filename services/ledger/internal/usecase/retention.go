package usecase

import (
	"context"
	"time"
)

// DefaultIdempotencyRetention is how long an Idempotency-Key's record is
// kept: a week of retries, far past any client's (Stripe keeps a day).
const DefaultIdempotencyRetention = 7 * 24 * time.Hour

// PruneIdempotencyKeys deletes at most batch of the Idempotency-Key
// records made before before, oldest first, and reports how many: the
// retention runner's prune (retention.Retainer). A retry with a pruned
// key runs again.
func (a *App) PruneIdempotencyKeys(ctx context.Context, before time.Time, batch int) (int64, error) {
	return a.keyed.Prune(ctx, before, batch)
}

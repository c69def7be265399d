package usecase

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// DefaultIdempotencyRetention is how long an Idempotency-Key's record is
// kept: a week of retries, far past any client's (Stripe keeps a day).
const DefaultIdempotencyRetention = 7 * 24 * time.Hour

// DefaultTaskRetention is how long a finished task is kept: a quarter,
// long enough to read a failure's story back, while what is live stays
// small. The metrics and the prompt A/B keep their sums (the daily rows,
// the variants' records), and an idea's stage outputs outlive its tasks,
// so nothing the reports or the loop read is lost with them.
const DefaultTaskRetention = 90 * 24 * time.Hour

// PruneIdempotencyKeys deletes at most batch of the Idempotency-Key
// records made before before, oldest first, and reports how many: the
// retention runner's prune (retention.Retainer). A retry with a pruned
// key runs again.
func (a *App) PruneIdempotencyKeys(ctx context.Context, before time.Time, batch int) (int64, error) {
	return a.keyed.Prune(ctx, before, batch)
}

// PruneFinishedTasks deletes at most batch of the tasks that finished
// before before for good (store.Tasks.DeleteFinished), oldest first, with
// their attempts, prompt outcomes and delivered idea advancements, and
// takes them out of the task counts, in one transaction: the list's
// totals stay those of what it lists. The retention runner's prune.
func (a *App) PruneFinishedTasks(ctx context.Context, before time.Time, batch int) (int64, error) {
	var n int64
	err := a.tx(ctx, func(r Repos) error {
		gone, err := r.Tasks.DeleteFinished(ctx, before, batch)
		if err != nil || len(gone) == 0 {
			return err
		}
		n = int64(len(gone))
		ids := make([]string, len(gone))
		type key struct {
			status task.Status
			typ    task.Type
		}
		counts := map[key]int64{}
		for i, p := range gone {
			ids[i] = p.ID
			counts[key{p.Status, p.Type}]--
		}
		deltas := make([]store.Count, 0, len(counts))
		for k, d := range counts {
			deltas = append(deltas, store.Count{Status: k.status, Type: k.typ, N: d})
		}
		var b database.Batch
		r.Stats.QueueAddCounts(&b, deltas)
		r.Tasks.QueueDeleteAttempts(&b, ids)
		r.Prompts.QueueDeleteOutcomes(&b, ids)
		r.Outbox.QueueDeleteDelivered(&b, ids)
		b.Final()
		return r.Send(ctx, &b)
	})
	return n, wrap("prune finished tasks", err)
}

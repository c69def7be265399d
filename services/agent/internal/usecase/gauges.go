package usecase

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// QueueGauges are the queue's readings /metrics reports, read in the
// background every interval (the module's refresher), never per scrape.
type QueueGauges struct {
	// Counts are the tasks by status, every status present, from the
	// status counters every status change keeps.
	Counts Counts
	// OldestPending is when the longest-waiting pending task was created;
	// zero when none is pending.
	OldestPending time.Time
	// Outbox is the idea advancements not delivered to the portfolio yet.
	Outbox store.OutboxBacklog
	// At is when the readings were taken.
	At time.Time
}

// Gauges reads the queue's gauges in one batch (one round trip on
// Postgres), each read bounded whatever the number of tasks: the status
// counters, the oldest pending task (an index) and the undelivered outbox
// items (a partial index holding those only).
func (a *App) Gauges(ctx context.Context) (QueueGauges, error) {
	r := a.read()
	var (
		counts []store.Count
		oldest time.Time
		ok     bool
		out    QueueGauges
		batch  database.Batch
	)
	r.Stats.QueueCounts(&batch, &counts)
	r.Tasks.QueueOldestPending(&batch, &oldest, &ok)
	r.Outbox.QueueBacklog(&batch, &out.Outbox)
	if err := r.Send(ctx, &batch); err != nil {
		return QueueGauges{}, wrap("read the queue's gauges", err)
	}
	out.Counts, out.At = countsOf(counts), a.now()
	if ok {
		out.OldestPending = oldest
	}
	return out, nil
}

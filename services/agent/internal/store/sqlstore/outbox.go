package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Outbox implements store.Outbox over a querier.
type Outbox struct {
	q database.Querier
}

var _ store.Outbox = Outbox{}

// NewOutbox returns the outbox repository over q.
func NewOutbox(q database.Querier) Outbox { return Outbox{q: q} }

const outboxColumns = `task_id, idea_id, task_type, created_at, delivered_at, attempts, last_error, next_attempt_at`

func scanOutbox(s scanner) (store.OutboxItem, error) {
	var (
		it            store.OutboxItem
		typ           string
		created, next int64
		delivered     *int64
	)
	if err := s.Scan(&it.TaskID, &it.IdeaID, &typ, &created, &delivered, &it.Attempts, &it.LastError, &next); err != nil {
		return store.OutboxItem{}, err
	}
	it.TaskType, it.CreatedAt, it.DeliveredAt, it.NextAttemptAt = task.Type(typ), database.Time(created), timeOf(delivered), database.Time(next)
	return it, nil
}

func scanOutboxRows(rows database.Rows, err error) ([]store.OutboxItem, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.OutboxItem{}
	for rows.Next() {
		it, err := scanOutbox(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// Enqueue implements store.Outbox.
func (o Outbox) Enqueue(ctx context.Context, it store.OutboxItem) (bool, error) {
	var (
		b      database.Batch
		queued bool
	)
	o.QueueEnqueue(&b, it, &queued)
	if err := o.q.SendBatch(ctx, &b); err != nil {
		return false, fmt.Errorf("queue the advancement of idea %s: %w", it.IdeaID, err)
	}
	return queued, nil
}

// QueueEnqueue implements store.Outbox.
func (o Outbox) QueueEnqueue(b *database.Batch, it store.OutboxItem, queued *bool) {
	b.Exec(func(n int64) error { *queued = n == 1; return nil },
		`INSERT INTO idea_outbox (`+outboxColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (task_id) DO NOTHING`,
		it.TaskID, it.IdeaID, string(it.TaskType), database.Micros(it.CreatedAt), database.NullMicros(it.DeliveredAt),
		it.Attempts, it.LastError, database.Micros(it.NextAttemptAt))
}

// Get implements store.Outbox.
func (o Outbox) Get(ctx context.Context, taskID string) (store.OutboxItem, error) {
	it, err := scanOutbox(o.q.QueryRow(ctx, `SELECT `+outboxColumns+` FROM idea_outbox WHERE task_id = $1`, taskID))
	if errors.Is(err, database.ErrNoRows) {
		return store.OutboxItem{}, fmt.Errorf("outbox item of task %s: %w", taskID, store.ErrNotFound)
	}
	if err != nil {
		return store.OutboxItem{}, fmt.Errorf("read the outbox item of task %s: %w", taskID, err)
	}
	return it, nil
}

// Take implements store.Outbox in two statements: the due items' ids,
// oldest due first (on Postgres, rows another deliverer is taking at the
// same moment are skipped, not waited for), then one UPDATE of those still
// due, whose rows are returned in that order (neither engine orders an
// UPDATE's RETURNING rows, and two advancements of one idea delivered out
// of order would move it one stage instead of two). The UPDATE checks
// again that each item is due, so an item another deliverer took between
// the two statements (on the pool, outside a transaction) stays that
// deliverer's.
func (o Outbox) Take(ctx context.Context, now, until time.Time, limit int) ([]store.OutboxItem, error) {
	rows, err := o.q.Query(ctx, `SELECT task_id FROM idea_outbox WHERE delivered_at IS NULL AND next_attempt_at <= $1
		ORDER BY next_attempt_at, task_id LIMIT $2`+database.SkipLocked(o.q.Engine()), database.Micros(now), limit)
	if err != nil {
		return nil, fmt.Errorf("take due outbox items: %w", err)
	}
	args := []any{database.Micros(now), database.Micros(until)}
	order := map[string]int{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("take due outbox items: %w", err)
		}
		order[id] = len(args)
		args = append(args, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("take due outbox items: %w", err)
	}
	if len(order) == 0 {
		return []store.OutboxItem{}, nil
	}
	out, err := scanOutboxRows(o.q.Query(ctx, `UPDATE idea_outbox SET next_attempt_at = $2
		WHERE task_id IN (`+database.Placeholders(3, len(order))+`) AND delivered_at IS NULL AND next_attempt_at <= $1
		RETURNING `+outboxColumns, args...))
	if err != nil {
		return nil, fmt.Errorf("take due outbox items: %w", err)
	}
	slices.SortFunc(out, func(a, b store.OutboxItem) int { return order[a.TaskID] - order[b.TaskID] })
	return out, nil
}

// TakeOne implements store.Outbox.
func (o Outbox) TakeOne(ctx context.Context, taskID string, until time.Time) (store.OutboxItem, error) {
	it, err := scanOutbox(o.q.QueryRow(ctx, `UPDATE idea_outbox SET next_attempt_at = $2
		WHERE task_id = $1 AND delivered_at IS NULL RETURNING `+outboxColumns, taskID, database.Micros(until)))
	if errors.Is(err, database.ErrNoRows) {
		return store.OutboxItem{}, fmt.Errorf("undelivered outbox item of task %s: %w", taskID, store.ErrNotFound)
	}
	if err != nil {
		return store.OutboxItem{}, fmt.Errorf("take the outbox item of task %s: %w", taskID, err)
	}
	return it, nil
}

// Settle implements store.Outbox. A delivered item stays delivered: a
// late failure report from a slower deliverer does not undo it.
func (o Outbox) Settle(ctx context.Context, it store.OutboxItem) error {
	if _, err := o.q.Exec(ctx, `UPDATE idea_outbox SET delivered_at = $2, attempts = $3, last_error = $4, next_attempt_at = $5
		WHERE task_id = $1 AND delivered_at IS NULL`,
		it.TaskID, database.NullMicros(it.DeliveredAt), it.Attempts, it.LastError, database.Micros(it.NextAttemptAt)); err != nil {
		return fmt.Errorf("settle the outbox item of task %s: %w", it.TaskID, err)
	}
	return nil
}

// QueueDeleteDelivered implements store.Outbox.
func (o Outbox) QueueDeleteDelivered(b *database.Batch, taskIDs []string) {
	queueDeleteOf(b, "idea_outbox", "delivered_at IS NOT NULL", taskIDs)
}

// QueueBacklog implements store.Outbox: the rows of the partial index
// idea_outbox_due (delivered_at IS NULL) and nothing else.
func (o Outbox) QueueBacklog(b *database.Batch, out *store.OutboxBacklog) {
	b.QueryRow(func(row database.Row) error {
		var oldest *int64
		if err := row.Scan(&out.Items, &oldest); err != nil {
			return fmt.Errorf("measure the outbox: %w", err)
		}
		out.Oldest = timeOf(oldest)
		return nil
	}, `SELECT COUNT(*), MIN(created_at) FROM idea_outbox WHERE delivered_at IS NULL`)
}

package usecase

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Limits of the operators' retries and cancellations.
const (
	MaxReason     = 500
	MaxRetryBatch = 1000
	// DefaultRetryBatch is how many tasks a bulk retry takes when it names
	// no limit.
	DefaultRetryBatch = 100
)

// Retry puts a task whose run ended without completing (failed,
// timed_out, discarded, cancelled) back in the queue at once, for an
// operator: pending, unclaimed, its last diagnosis gone from its fields
// (its attempts keep it), and with one attempt more when it had used
// them all. A loop task whose idea has another open loop task is a
// conflict.
func (a *App) Retry(ctx context.Context, id string) (store.Task, error) {
	var out store.Task
	err := a.tx(ctx, func(r Repos) error {
		cur, err := r.Tasks.Lock(ctx, id)
		if err != nil {
			return notFound(err, id)
		}
		if !cur.Status.Retryable() {
			return fault.New(fault.Conflict, "task %s is %s: only a failed, timed_out, discarded or cancelled task is retried", id, cur.Status)
		}
		next := reopened(cur, a.now())
		next.MaxAttempts = max(a.maxAttempts(cur), cur.Attempts+1)
		out = next
		var (
			b      database.Batch
			queued bool
		)
		r.Tasks.QueueSave(&b, next)
		if err := a.changed(ctx, r, &b, cur, next, true, &queued); err != nil {
			return err
		}
		b.Final()
		return r.Send(ctx, &b)
	})
	if database.IsUniqueViolation(err) {
		return store.Task{}, fault.New(fault.Conflict,
			"task %s: its idea has another open task of the pipeline loop; finish or cancel that one first", id)
	}
	if err != nil {
		return store.Task{}, wrap("retry task "+id, err)
	}
	a.log.Info("task retried by an operator", zap.String("task_id", id), zap.String("task_type", string(out.Type)),
		zap.Int("attempts", out.Attempts), zap.Int("max_attempts", out.MaxAttempts))
	return out, nil
}

// reopened is t back in the queue at now for its next attempt, as the
// store's Tasks.Retry puts a due one back: pending, its claim released,
// the last attempt's diagnosis, output and measurements gone from its
// fields (its attempt record keeps them).
func reopened(t store.Task, now time.Time) store.Task {
	t.Status = task.Pending
	t.WorkerID, t.ClaimedBy, t.LeaseSeconds, t.LeaseExpiresAt = "", "", 0, time.Time{}
	t.ErrorSummary, t.ErrorCategory, t.StatusReason = "", "", ""
	t.Output, t.Artifact, t.ProgressPct, t.CurrentStep = "", "", 0, ""
	t.NextAttemptAt, t.CompletedAt, t.Duration = time.Time{}, time.Time{}, nil
	t.ValueScore, t.ResourceCost, t.TokensIn, t.TokensOut, t.CostUSD = nil, nil, nil, nil, nil
	t.UpdatedAt = now
	return t
}

// RetryFilter selects the tasks a bulk retry takes, newest first.
type RetryFilter struct {
	// Status is required: one of the statuses Retry takes.
	Status string
	// Type and IdeaID narrow it when not empty.
	Type   string
	IdeaID string
	// Limit is the most tasks taken (DefaultRetryBatch when nil).
	Limit *int
}

// Retried is a bulk retry's answer: the tasks put back in the queue, and
// those of the filter's that could not be, with why.
type Retried struct {
	Tasks   []store.Task
	Skipped []Skipped
}

// Skipped is a task a bulk retry left as it was.
type Skipped struct {
	TaskID string
	Detail string
}

// RetryMany retries, each as Retry does and in its own transaction, up
// to f.Limit of the tasks f selects: one refused (its idea has an open
// loop task, or it changed since the list) is reported, not fatal.
func (a *App) RetryMany(ctx context.Context, f RetryFilter) (Retried, error) {
	var errs []fault.FieldError
	status, ok := task.ParseStatus(f.Status)
	if !ok || !status.Retryable() {
		errs = append(errs, fault.Field("status", "must be one of failed, timed_out, discarded, cancelled"))
	}
	var typ task.Type
	if f.Type != "" {
		if typ, ok = task.ParseType(f.Type); !ok {
			errs = append(errs, fault.Field("task_type", "is not a task type"))
		}
	}
	limit := DefaultRetryBatch
	if f.Limit != nil {
		limit = *f.Limit
	}
	if limit < 1 || limit > MaxRetryBatch {
		errs = append(errs, fault.Field("limit", "must be between 1 and %d", MaxRetryBatch))
	}
	if len(errs) > 0 {
		return Retried{}, fault.Validation(errs...)
	}
	ts, err := a.read().Tasks.List(ctx, store.Filter{Status: status, Type: typ, IdeaID: f.IdeaID, Limit: limit})
	if err != nil {
		return Retried{}, wrap("list the tasks to retry", err)
	}
	out := Retried{Tasks: []store.Task{}, Skipped: []Skipped{}}
	for _, t := range ts {
		next, err := a.Retry(ctx, t.ID)
		if fe, ok := fault.As(err); ok && (fe.Kind == fault.Conflict || fe.Kind == fault.NotFound) {
			out.Skipped = append(out.Skipped, Skipped{TaskID: t.ID, Detail: fe.Detail})
			continue
		}
		if err != nil {
			return out, err
		}
		out.Tasks = append(out.Tasks, next)
	}
	return out, nil
}

// Cancel takes a task out of the queue for an operator: cancelled, with
// the reason, whatever it was doing unless it had finished (a failed task
// waiting for its retry is cancelled too). A worker running it learns at
// its next report, which is refused; a cancelled task counts in no
// success rate and against no idea's backoff.
func (a *App) Cancel(ctx context.Context, id, reason string) (store.Task, error) {
	reason = strings.TrimSpace(reason)
	if utf8.RuneCountInString(reason) > MaxReason {
		return store.Task{}, fault.Validation(fault.Field("reason", "must be at most %d characters", MaxReason))
	}
	if reason == "" {
		reason = "cancelled by an operator"
	}
	var out store.Task
	err := a.tx(ctx, func(r Repos) error {
		cur, err := r.Tasks.Lock(ctx, id)
		if err != nil {
			return notFound(err, id)
		}
		if !cur.Status.Cancellable() || (cur.Status == task.Failed && cur.NextAttemptAt.IsZero()) {
			return fault.New(fault.Conflict, "task %s is %s: only a task not finished, or a failed one waiting for its retry, is cancelled", id, cur.Status)
		}
		now := a.now()
		next := cur
		next.Status, next.StatusReason, next.UpdatedAt = task.Cancelled, reason, now
		next.NextAttemptAt, next.LeaseExpiresAt = time.Time{}, time.Time{}
		if cur.Status != task.Failed {
			next.CompletedAt, next.Duration = now, ranFor(cur, now)
		}
		out = next
		var (
			b      database.Batch
			queued bool
		)
		r.Tasks.QueueSave(&b, next)
		if err := a.changed(ctx, r, &b, cur, next, false, &queued); err != nil {
			return err
		}
		b.Final()
		return r.Send(ctx, &b)
	})
	if err != nil {
		return store.Task{}, wrap("cancel task "+id, err)
	}
	return out, nil
}

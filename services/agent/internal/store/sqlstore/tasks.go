// Package sqlstore implements the agent's repositories on Postgres and
// SQLite with one set of SQL statements (see the platform database
// package). Every repository works over a database.Querier, the pool or
// the use case's transaction, and none opens a transaction of its own.
package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Tasks implements store.Tasks over a querier.
type Tasks struct {
	q database.Querier
}

var _ store.Tasks = Tasks{}

// NewTasks returns the task repository over q.
func NewTasks(q database.Querier) Tasks { return Tasks{q: q} }

const taskColumns = `id, direction, task_type, status, model, executor, tier, command, context, idea_id, prompt_variant,
	output, progress_pct, current_step, decision_prompt, error_summary, error_category,
	worker_id, lease_seconds, lease_expires_at, attempts, value_score, resource_cost, duration_seconds,
	created_at, updated_at, started_at, completed_at, claimed_by, source, max_attempts, next_attempt_at, status_reason,
	tokens_in, tokens_out, cost_usd, prompt_version, prompt, artifact`

// scanner is a row or rows.
type scanner interface{ Scan(dest ...any) error }

func scanTask(s scanner) (store.Task, error) {
	var (
		t                                          store.Task
		typ, status                                string
		ideaID, variant, summary, category, worker *string
		claimedBy, source, reason, artifact        *string
		leaseExpires, started, completed, next     *int64
		promptVersion                              *int
		created, updated                           int64
		value, cost, duration                      *float64
	)
	err := s.Scan(&t.ID, &t.Direction, &typ, &status, &t.Model, &t.Executor, &t.Tier, &t.Command, &t.Context, &ideaID, &variant,
		&t.Output, &t.ProgressPct, &t.CurrentStep, &t.DecisionPrompt, &summary, &category,
		&worker, &t.LeaseSeconds, &leaseExpires, &t.Attempts, &value, &cost, &duration,
		&created, &updated, &started, &completed, &claimedBy, &source, &t.MaxAttempts, &next, &reason,
		&t.TokensIn, &t.TokensOut, &t.CostUSD, &promptVersion, &t.Prompt, &artifact)
	if err != nil {
		return store.Task{}, err
	}
	t.Type, t.Status = task.Type(typ), task.Status(status)
	t.IdeaID, t.PromptVariant, t.ErrorSummary, t.ErrorCategory, t.WorkerID =
		deref(ideaID), deref(variant), deref(summary), deref(category), deref(worker)
	t.LeaseExpiresAt, t.StartedAt, t.CompletedAt = timeOf(leaseExpires), timeOf(started), timeOf(completed)
	t.CreatedAt, t.UpdatedAt = database.Time(created), database.Time(updated)
	t.ValueScore, t.ResourceCost, t.Duration = value, cost, duration
	t.ClaimedBy, t.Source, t.StatusReason, t.Artifact = deref(claimedBy), deref(source), deref(reason), deref(artifact)
	t.NextAttemptAt = timeOf(next)
	if promptVersion != nil {
		t.PromptVersion = *promptVersion
	}
	return t, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func timeOf(us *int64) time.Time {
	if us == nil {
		return time.Time{}
	}
	return database.Time(*us)
}

func scanTasks(rows database.Rows, err error) ([]store.Task, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []store.Task{}
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, fmt.Errorf("read task: %w", err)
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Insert implements store.Tasks. A conflict is skipped (ON CONFLICT DO
// NOTHING) rather than raised, because on Postgres an error aborts the
// transaction: skipping keeps it usable to tell the two unique rules
// apart, the id's and the loop's one open task per idea. Against a
// concurrent insert for the same idea, Postgres waits for the other
// transaction and skips only if it commits.
func (s Tasks) Insert(ctx context.Context, t store.Task) error {
	n, err := s.q.Exec(ctx, insertTask+` ON CONFLICT DO NOTHING`, insertArgs(t)...)
	if err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	if n == 1 {
		return nil
	}
	return s.Refused(ctx, t)
}

// insertTask is a task's INSERT; a unique rule refusing it is an error.
const insertTask = `INSERT INTO tasks (` + taskColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
		$12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36, $37, $38, $39)`

func insertArgs(t store.Task) []any {
	return []any{t.ID, t.Direction, string(t.Type), string(t.Status), t.Model, t.Executor, t.Tier, t.Command, t.Context,
		database.NullString(t.IdeaID), database.NullString(t.PromptVariant),
		t.Output, t.ProgressPct, t.CurrentStep, t.DecisionPrompt, database.NullString(t.ErrorSummary), database.NullString(t.ErrorCategory),
		database.NullString(t.WorkerID), t.LeaseSeconds, database.NullMicros(t.LeaseExpiresAt), t.Attempts,
		t.ValueScore, t.ResourceCost, t.Duration,
		database.Micros(t.CreatedAt), database.Micros(t.UpdatedAt), database.NullMicros(t.StartedAt), database.NullMicros(t.CompletedAt),
		database.NullString(t.ClaimedBy), database.NullString(t.Source),
		t.MaxAttempts, database.NullMicros(t.NextAttemptAt), database.NullString(t.StatusReason),
		t.TokensIn, t.TokensOut, t.CostUSD, nullInt(t.PromptVersion), t.Prompt, database.NullString(t.Artifact)}
}

// QueueInsert implements store.Tasks: without ON CONFLICT, so that a
// refusal fails the batch and nothing queued after it runs (on Postgres
// the pipeline skips the rest, its COMMIT included).
func (s Tasks) QueueInsert(b *database.Batch, t store.Task) {
	b.Exec(nil, insertTask, insertArgs(t)...)
}

// Refused implements store.Tasks.
func (s Tasks) Refused(ctx context.Context, t store.Task) error {
	var taken bool
	if err := s.q.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tasks WHERE id = $1)`, t.ID).Scan(&taken); err != nil {
		return fmt.Errorf("insert task: %w", err)
	}
	switch {
	case taken:
		return fmt.Errorf("task %s: %w", t.ID, store.ErrAlreadyExists)
	case t.Source != store.SourceLoop:
		return fmt.Errorf("insert task %s: a unique rule refused it", t.ID) // none but the id's binds it
	}
	return fmt.Errorf("task for idea %s: %w", t.IdeaID, store.ErrLoopTaskOpen)
}

func (s Tasks) get(ctx context.Context, id string, lock bool) (store.Task, error) {
	query := `SELECT ` + taskColumns + ` FROM tasks WHERE id = $1`
	if lock {
		query += database.ForUpdate(s.q.Engine())
	}
	t, err := scanTask(s.q.QueryRow(ctx, query, id))
	if errors.Is(err, database.ErrNoRows) {
		return store.Task{}, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return store.Task{}, fmt.Errorf("read task %s: %w", id, err)
	}
	return t, nil
}

// Get implements store.Tasks.
func (s Tasks) Get(ctx context.Context, id string) (store.Task, error) { return s.get(ctx, id, false) }

// Lock implements store.Tasks.
func (s Tasks) Lock(ctx context.Context, id string) (store.Task, error) { return s.get(ctx, id, true) }

// Save implements store.Tasks.
func (s Tasks) Save(ctx context.Context, t store.Task) error {
	var b database.Batch
	s.QueueSave(&b, t)
	if err := s.q.SendBatch(ctx, &b); err != nil {
		return fmt.Errorf("save task %s: %w", t.ID, err)
	}
	return nil
}

// QueueSave implements store.Tasks.
func (s Tasks) QueueSave(b *database.Batch, t store.Task) {
	b.Exec(func(n int64) error {
		if n == 0 {
			return fmt.Errorf("task %s: %w", t.ID, store.ErrNotFound)
		}
		return nil
	}, `UPDATE tasks SET status = $2, output = $3, progress_pct = $4, current_step = $5,
		decision_prompt = $6, error_summary = $7, error_category = $8, worker_id = $9, lease_seconds = $10,
		lease_expires_at = $11, attempts = $12, value_score = $13, resource_cost = $14, duration_seconds = $15,
		updated_at = $16, started_at = $17, completed_at = $18, prompt_variant = $19, claimed_by = $20,
		max_attempts = $21, next_attempt_at = $22, status_reason = $23,
		tokens_in = $24, tokens_out = $25, cost_usd = $26, artifact = $27
		WHERE id = $1`,
		t.ID, string(t.Status), t.Output, t.ProgressPct, t.CurrentStep,
		t.DecisionPrompt, database.NullString(t.ErrorSummary), database.NullString(t.ErrorCategory),
		database.NullString(t.WorkerID), t.LeaseSeconds,
		database.NullMicros(t.LeaseExpiresAt), t.Attempts, t.ValueScore, t.ResourceCost, t.Duration,
		database.Micros(t.UpdatedAt), database.NullMicros(t.StartedAt), database.NullMicros(t.CompletedAt),
		database.NullString(t.PromptVariant), database.NullString(t.ClaimedBy),
		t.MaxAttempts, database.NullMicros(t.NextAttemptAt), database.NullString(t.StatusReason),
		t.TokensIn, t.TokensOut, t.CostUSD, database.NullString(t.Artifact))
}

// List implements store.Tasks.
func (s Tasks) List(ctx context.Context, f store.Filter) ([]store.Task, error) {
	where, args := filterWhere(f)
	args = append(args, f.Limit, f.Offset)
	query := `SELECT ` + taskColumns + ` FROM tasks` + where +
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d OFFSET $%d`, len(args)-1, len(args))
	out, err := scanTasks(s.q.Query(ctx, query, args...))
	if err != nil {
		return nil, fmt.Errorf("list tasks: %w", err)
	}
	return out, nil
}

// filterWhere is the WHERE clause (empty when nothing filters) and its
// arguments for f's filters.
func filterWhere(f store.Filter) (string, []any) {
	var (
		where []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Status != "" {
		add("status = $%d", string(f.Status))
	}
	if f.Type != "" {
		add("task_type = $%d", string(f.Type))
	}
	if f.IdeaID != "" {
		add("idea_id = $%d", f.IdeaID)
	}
	keyset := func(k *store.Key, timeOp, idOp string) {
		args = append(args, database.Micros(k.CreatedAt), k.ID)
		where = append(where, database.Keyset(timeOp, idOp, len(args)-1, len(args)))
	}
	if f.Before != nil {
		keyset(f.Before, "<", "<")
	}
	if len(where) == 0 {
		return "", nil
	}
	return ` WHERE ` + strings.Join(where, " AND "), args
}

// Attention implements store.Tasks. The statuses are literals so the
// planner uses the partial index tasks_attention.
func (s Tasks) Attention(ctx context.Context, limit, offset int) ([]store.Task, error) {
	out, err := scanTasks(s.q.Query(ctx, `SELECT `+taskColumns+` FROM tasks
		WHERE status IN ('failed', 'needs_decision') ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`, limit, offset))
	if err != nil {
		return nil, fmt.Errorf("list attention tasks: %w", err)
	}
	return out, nil
}

// NextPending implements store.Tasks. On Postgres the row is taken with
// FOR UPDATE SKIP LOCKED, so concurrent claimers each get a different task
// without waiting for each other; SQLite's write transactions are already
// exclusive (they begin IMMEDIATE).
func (s Tasks) NextPending(ctx context.Context, types []task.Type) (store.Task, error) {
	query := `SELECT ` + taskColumns + ` FROM tasks WHERE status = 'pending'`
	args := make([]any, len(types))
	for i, t := range types {
		args[i] = string(t)
	}
	switch len(types) {
	case 0:
	case 1:
		query += ` AND task_type = $1`
	default:
		query += ` AND task_type IN (` + database.Placeholders(1, len(types)) + `)`
	}
	query += ` ORDER BY created_at, id LIMIT 1` + database.SkipLocked(s.q.Engine())
	t, err := scanTask(s.q.QueryRow(ctx, query, args...))
	if errors.Is(err, database.ErrNoRows) {
		return store.Task{}, fmt.Errorf("pending task: %w", store.ErrNotFound)
	}
	if err != nil {
		return store.Task{}, fmt.Errorf("take a pending task: %w", err)
	}
	return t, nil
}

// Reap implements store.Tasks: one UPDATE, safe to run on every replica at
// once (a second reaper's UPDATE re-checks each row after the first
// commits and finds it no longer running).
// A task's own max_attempts governs it; maxAttempts, those from before
// retries (0).
func (s Tasks) Reap(ctx context.Context, now time.Time, maxAttempts int, summary string) ([]store.Task, error) {
	const last = `attempts >= (CASE WHEN max_attempts > 0 THEN max_attempts ELSE $2 END)`
	out, err := scanTasks(s.q.Query(ctx, `UPDATE tasks SET
		status = CASE WHEN `+last+` THEN 'timed_out' ELSE 'pending' END,
		worker_id = CASE WHEN `+last+` THEN worker_id ELSE NULL END,
		claimed_by = CASE WHEN `+last+` THEN claimed_by ELSE NULL END,
		lease_expires_at = NULL,
		completed_at = CASE WHEN `+last+` THEN CAST($1 AS BIGINT) ELSE NULL END,
		duration_seconds = CASE WHEN `+last+`
			THEN CAST(CAST($1 AS BIGINT) - COALESCE(started_at, created_at) AS DOUBLE PRECISION) / 1000000 ELSE NULL END,
		error_summary = CASE WHEN `+last+` THEN CAST($3 AS TEXT) ELSE NULL END,
		error_category = CASE WHEN `+last+` THEN 'timeout' ELSE NULL END,
		updated_at = CAST($1 AS BIGINT)
		WHERE status = 'running' AND lease_expires_at < CAST($1 AS BIGINT)
		RETURNING `+taskColumns, database.Micros(now), maxAttempts, summary))
	if err != nil {
		return nil, fmt.Errorf("reap expired leases: %w", err)
	}
	return out, nil
}

// QueueOldestPending implements store.Tasks.
func (s Tasks) QueueOldestPending(b *database.Batch, at *time.Time, ok *bool) {
	b.QueryRow(func(row database.Row) error {
		var us int64
		err := row.Scan(&us)
		if errors.Is(err, database.ErrNoRows) {
			*ok = false
			return nil
		}
		if err != nil {
			return fmt.Errorf("oldest pending task: %w", err)
		}
		*at, *ok = database.Time(us), true
		return nil
	}, `SELECT created_at FROM tasks WHERE status = 'pending' ORDER BY created_at, id LIMIT 1`)
}

// QueueLastFinished implements store.Tasks.
func (s Tasks) QueueLastFinished(b *database.Batch, n int, out *[]task.Status) {
	b.Query(func(rows database.Rows) error {
		*out = []task.Status{}
		for rows.Next() {
			var st string
			if err := rows.Scan(&st); err != nil {
				return fmt.Errorf("last finished tasks: %w", err)
			}
			*out = append(*out, task.Status(st))
		}
		return nil
	}, `SELECT status FROM tasks WHERE completed_at IS NOT NULL ORDER BY completed_at DESC, id DESC LIMIT $1`, n)
}

// QueueDurations implements store.Tasks; an index-only scan of
// tasks_finished. The condition's count is a sum over the duration
// histogram's rows of the days in its range (an uncorrelated subquery,
// evaluated once): when it is over limit the read stops there and costs
// nothing of the tasks table.
func (s Tasks) QueueDurations(b *database.Batch, since time.Time, limit int, only *store.FewDurations, out *[]float64) {
	cond, args := "", []any{database.Micros(since), limit}
	if only != nil {
		cond = `AND $3 + (SELECT COALESCE(SUM(n), 0) FROM task_durations WHERE day >= $4 AND day < $5) <= $2`
		args = append(args, only.Counted, database.Micros(only.From), database.Micros(only.To))
	}
	b.Query(func(rows database.Rows) error {
		*out = []float64{}
		for rows.Next() {
			var d *float64
			if err := rows.Scan(&d); err != nil {
				return err
			}
			if d != nil {
				*out = append(*out, *d)
			}
		}
		return rows.Err()
	}, `SELECT duration_seconds FROM tasks WHERE completed_at IS NOT NULL AND completed_at >= $1 `+cond+`
		ORDER BY completed_at DESC, id DESC LIMIT $2`, args...)
}

// OpenIdeas implements store.Tasks.
func (s Tasks) OpenIdeas(ctx context.Context, ideaIDs []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ideaIDs) == 0 {
		return out, nil
	}
	rows, err := s.q.Query(ctx, `SELECT DISTINCT idea_id FROM tasks WHERE idea_id IN (`+database.Placeholders(1, len(ideaIDs))+`)
		AND (status IN ('pending', 'running', 'needs_decision') OR (status = 'failed' AND next_attempt_at IS NOT NULL))`,
		idArgs(ideaIDs)...)
	if err != nil {
		return nil, fmt.Errorf("open tasks of ideas: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("open tasks of ideas: %w", err)
		}
		out[id] = true
	}
	return out, rows.Err()
}

// PendingLoopTasks implements store.Tasks.
func (s Tasks) PendingLoopTasks(ctx context.Context, ideaIDs []string, now time.Time) (map[string]string, error) {
	out := map[string]string{}
	if len(ideaIDs) == 0 {
		return out, nil
	}
	// tasks_loop_open_idea holds these rows (one open loop task per idea).
	rows, err := s.q.Query(ctx, `SELECT idea_id, id FROM tasks WHERE source = $1
		AND (status = 'pending' OR (status = 'failed' AND next_attempt_at IS NOT NULL AND next_attempt_at <= $2))
		AND idea_id IN (`+database.Placeholders(3, len(ideaIDs))+`)`, idArgs(ideaIDs, store.SourceLoop, database.Micros(now))...)
	if err != nil {
		return nil, fmt.Errorf("pending loop tasks of ideas: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var idea, id string
		if err := rows.Scan(&idea, &id); err != nil {
			return nil, fmt.Errorf("pending loop tasks of ideas: %w", err)
		}
		out[idea] = id
	}
	return out, rows.Err()
}

// Retry implements store.Tasks: one UPDATE over the soonest due (the
// partial index tasks_retry_due), which a second replica's re-checks find
// no longer failed.
func (s Tasks) Retry(ctx context.Context, now time.Time, limit int) ([]store.Task, error) {
	out, err := scanTasks(s.q.Query(ctx, `UPDATE tasks SET status = 'pending', next_attempt_at = NULL,
		worker_id = NULL, claimed_by = NULL, lease_seconds = 0, lease_expires_at = NULL,
		error_summary = NULL, error_category = NULL, output = '', artifact = NULL, progress_pct = 0, current_step = '',
		value_score = NULL, resource_cost = NULL, tokens_in = NULL, tokens_out = NULL, cost_usd = NULL, completed_at = NULL, duration_seconds = NULL, updated_at = $1
		WHERE id IN (SELECT id FROM tasks WHERE status = 'failed' AND next_attempt_at IS NOT NULL AND next_attempt_at <= $1
			ORDER BY next_attempt_at, id LIMIT $2)
		AND status = 'failed' AND next_attempt_at IS NOT NULL
		RETURNING `+taskColumns, database.Micros(now), limit))
	if err != nil {
		return nil, fmt.Errorf("retry failed tasks: %w", err)
	}
	return out, nil
}

// QueueAddAttempt implements store.Tasks.
func (s Tasks) QueueAddAttempt(b *database.Batch, a store.Attempt) {
	b.Exec(nil, `INSERT INTO task_attempts (task_id, attempt, status, error_summary, error_category, worker_id, started_at, finished_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING`,
		a.TaskID, a.Attempt, string(a.Status), a.Summary, a.Category, database.NullString(a.WorkerID),
		database.NullMicros(a.StartedAt), database.Micros(a.FinishedAt))
}

// Attempts implements store.Tasks.
func (s Tasks) Attempts(ctx context.Context, taskID string) ([]store.Attempt, error) {
	rows, err := s.q.Query(ctx, `SELECT attempt, status, error_summary, error_category, worker_id, started_at, finished_at
		FROM task_attempts WHERE task_id = $1 ORDER BY attempt`, taskID)
	if err != nil {
		return nil, fmt.Errorf("attempts of task %s: %w", taskID, err)
	}
	defer rows.Close()
	out := []store.Attempt{}
	for rows.Next() {
		var (
			a        = store.Attempt{TaskID: taskID}
			status   string
			worker   *string
			started  *int64
			finished int64
		)
		if err := rows.Scan(&a.Attempt, &status, &a.Summary, &a.Category, &worker, &started, &finished); err != nil {
			return nil, fmt.Errorf("attempts of task %s: %w", taskID, err)
		}
		a.Status, a.WorkerID, a.StartedAt, a.FinishedAt = task.Status(status), deref(worker), timeOf(started), database.Time(finished)
		out = append(out, a)
	}
	return out, rows.Err()
}

// StageOutputs implements store.Tasks: a range of stage_outputs' key.
// The output and the artifact are cut in Go: the engines' substring
// functions count characters, not bytes.
func (s Tasks) StageOutputs(ctx context.Context, ideaID string, limit, maxOutput, maxArtifact int) ([]store.StageOutput, error) {
	rows, err := s.q.Query(ctx, `SELECT task_id, task_type, output, artifact, completed_at FROM stage_outputs
		WHERE idea_id = $1 ORDER BY completed_at DESC, task_id DESC LIMIT $2`, ideaID, limit)
	if err != nil {
		return nil, fmt.Errorf("stage outputs of idea %s: %w", ideaID, err)
	}
	defer rows.Close()
	out := []store.StageOutput{}
	for rows.Next() {
		var (
			o   store.StageOutput
			typ string
			at  int64
		)
		if err := rows.Scan(&o.TaskID, &typ, &o.Output, &o.Artifact, &at); err != nil {
			return nil, fmt.Errorf("stage outputs of idea %s: %w", ideaID, err)
		}
		o.Type, o.CompletedAt = task.Type(typ), database.Time(at)
		o.Output, o.Artifact = lastBytes(o.Output, maxOutput), lastBytes(o.Artifact, maxArtifact)
		out = append(out, o)
	}
	slices.Reverse(out)
	return out, rows.Err()
}

// QueueStageOutput implements store.Tasks. The idea's rows past the
// newest keep are a range of the key after them, so an idea keeps at most
// keep rows however many loop tasks it completes.
func (s Tasks) QueueStageOutput(b *database.Batch, ideaID string, o store.StageOutput, keep int) {
	at := database.Micros(o.CompletedAt)
	b.Exec(nil, `INSERT INTO stage_outputs (idea_id, completed_at, task_id, task_type, output, artifact)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (idea_id, completed_at, task_id) DO NOTHING`,
		ideaID, at, o.TaskID, string(o.Type), o.Output, o.Artifact)
	b.Exec(nil, `DELETE FROM stage_outputs WHERE idea_id = $1 AND task_id NOT IN (
		SELECT task_id FROM stage_outputs WHERE idea_id = $1 ORDER BY completed_at DESC, task_id DESC LIMIT $2)`, ideaID, keep)
}

// finishedForGood is the statuses DeleteFinished prunes: every finished
// one but failed, which waits for its retry.
const finishedForGood = `status IN ('completed', 'timed_out', 'discarded', 'cancelled')`

// DeleteFinished implements store.Tasks: a range of tasks_finished, oldest
// first, then the rows by their keys. Two statements, not a DELETE over a
// subquery: Postgres's generic plan for that walks the whole table for
// the outer rows. The DELETE repeats the range's conditions so that on
// Postgres a row a concurrent transaction changed in between (an
// operator's retry) is checked again once it commits, and kept if it no
// longer qualifies.
func (s Tasks) DeleteFinished(ctx context.Context, before time.Time, batch int) ([]store.Pruned, error) {
	cut := database.Micros(before)
	rows, err := s.q.Query(ctx, `SELECT id FROM tasks WHERE completed_at IS NOT NULL AND completed_at < $1 AND `+finishedForGood+`
		ORDER BY completed_at, id LIMIT $2`, cut, batch)
	if err != nil {
		return nil, fmt.Errorf("find finished tasks: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("find finished tasks: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find finished tasks: %w", err)
	}
	out := []store.Pruned{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err = s.q.Query(ctx, `DELETE FROM tasks WHERE id IN (`+database.Placeholders(2, len(ids))+`)
		AND completed_at < $1 AND `+finishedForGood+` RETURNING id, status, task_type`, idArgs(ids, cut)...)
	if err != nil {
		return nil, fmt.Errorf("delete finished tasks: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			p           store.Pruned
			status, typ string
		)
		if err := rows.Scan(&p.ID, &status, &typ); err != nil {
			return nil, fmt.Errorf("delete finished tasks: %w", err)
		}
		p.Status, p.Type = task.Status(status), task.Type(typ)
		out = append(out, p)
	}
	return out, rows.Err()
}

// QueueDeleteAttempts implements store.Tasks.
func (s Tasks) QueueDeleteAttempts(b *database.Batch, taskIDs []string) {
	queueDeleteOf(b, "task_attempts", "", taskIDs)
}

// queueDeleteOf queues into b the deletion of table's rows of the tasks
// (its task_id one of taskIDs) that also meet cond ("": all of them): what
// hangs on a pruned task, in each repository that keeps some.
func queueDeleteOf(b *database.Batch, table, cond string, taskIDs []string) {
	if len(taskIDs) == 0 {
		return
	}
	if cond != "" {
		cond += " AND "
	}
	b.Exec(nil, `DELETE FROM `+table+` WHERE `+cond+`task_id IN (`+database.Placeholders(1, len(taskIDs))+`)`, idArgs(taskIDs)...)
}

// lastBytes is s's last max bytes, cut at a character boundary.
func lastBytes(s string, max int) string {
	if over := len(s) - max; over > 0 {
		return strings.ToValidUTF8(s[over:], "")
	}
	return s
}

// nullInt is n, or NULL for 0.
func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// idArgs is the query arguments of an IN list of ids, after the leading
// arguments before it.
func idArgs(ids []string, leading ...any) []any {
	args := make([]any, 0, len(leading)+len(ids))
	args = append(args, leading...)
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

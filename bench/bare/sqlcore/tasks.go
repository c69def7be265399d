package sqlcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// ---------------------------------------------------------------------------
// Agent tasks: shared shapes (services/agent/internal/store/sqlstore/tasks.go
// and handler.toProto).

const taskColumns = `id, direction, task_type, status, model, executor, tier, command, context, idea_id, prompt_variant,
	output, progress_pct, current_step, decision_prompt, error_summary, error_category,
	worker_id, lease_seconds, lease_expires_at, attempts, value_score, resource_cost, duration_seconds,
	created_at, updated_at, started_at, completed_at`

// taskRow is a row of taskColumns.
type taskRow struct {
	ID, Direction, Type, Status, Model, Executor, Tier, Command, Context string
	IdeaID, PromptVariant                                                *string
	Output                                                               string
	ProgressPct                                                          float64
	CurrentStep, DecisionPrompt                                          string
	ErrorSummary, ErrorCategory, WorkerID                                *string
	LeaseSeconds                                                         int
	LeaseExpiresAt                                                       *int64
	Attempts                                                             int
	ValueScore, ResourceCost, Duration                                   *float64
	CreatedAt, UpdatedAt                                                 int64
	StartedAt, CompletedAt                                               *int64
}

func scanTask(row pgx.Row) (taskRow, error) {
	var t taskRow
	err := row.Scan(&t.ID, &t.Direction, &t.Type, &t.Status, &t.Model, &t.Executor, &t.Tier, &t.Command, &t.Context,
		&t.IdeaID, &t.PromptVariant, &t.Output, &t.ProgressPct, &t.CurrentStep, &t.DecisionPrompt, &t.ErrorSummary,
		&t.ErrorCategory, &t.WorkerID, &t.LeaseSeconds, &t.LeaseExpiresAt, &t.Attempts, &t.ValueScore, &t.ResourceCost,
		&t.Duration, &t.CreatedAt, &t.UpdatedAt, &t.StartedAt, &t.CompletedAt)
	return t, err
}

// Task is an agent task as the routes answer it.
type Task struct {
	ID              string          `json:"id"`
	TaskID          string          `json:"task_id"`
	Direction       string          `json:"direction"`
	TaskType        string          `json:"task_type"`
	Status          string          `json:"status"`
	Model           string          `json:"model"`
	Executor        string          `json:"executor"`
	Command         string          `json:"command"`
	Output          string          `json:"output"`
	ProgressPct     float64         `json:"progress_pct"`
	CurrentStep     string          `json:"current_step"`
	DecisionPrompt  string          `json:"decision_prompt"`
	ErrorSummary    *string         `json:"error_summary"`
	ErrorCategory   *string         `json:"error_category"`
	Context         json.RawMessage `json:"context"`
	WorkerID        *string         `json:"worker_id"`
	PromptVariant   *string         `json:"prompt_variant"`
	ValueScore      *float64        `json:"value_score"`
	ResourceCost    *float64        `json:"resource_cost"`
	DurationSeconds *float64        `json:"duration_seconds"`
	CreatedAt       string          `json:"created_at"`
	UpdatedAt       string          `json:"updated_at"`
	StartedAt       *string         `json:"started_at"`
	CompletedAt     *string         `json:"completed_at"`
	Tier            string          `json:"tier"`
	Attempts        int             `json:"attempts"`
	LeaseExpiresAt  *string         `json:"lease_expires_at"`
}

func taskOut(t taskRow) Task {
	ctx := json.RawMessage(t.Context)
	if !json.Valid(ctx) {
		ctx = json.RawMessage("{}")
	}
	return Task{
		ID: t.ID, TaskID: t.ID, Direction: t.Direction, TaskType: t.Type, Status: t.Status,
		Model: t.Model, Executor: t.Executor, Command: t.Command, Output: t.Output, ProgressPct: t.ProgressPct,
		CurrentStep: t.CurrentStep, DecisionPrompt: t.DecisionPrompt, ErrorSummary: t.ErrorSummary,
		ErrorCategory: t.ErrorCategory, Context: ctx, WorkerID: t.WorkerID, PromptVariant: t.PromptVariant,
		ValueScore: t.ValueScore, ResourceCost: t.ResourceCost, DurationSeconds: t.Duration,
		CreatedAt: rfc3339(fromMicros(t.CreatedAt)), UpdatedAt: rfc3339(fromMicros(t.UpdatedAt)),
		StartedAt: optTime(t.StartedAt), CompletedAt: optTime(t.CompletedAt), Tier: t.Tier, Attempts: t.Attempts,
		LeaseExpiresAt: optTime(t.LeaseExpiresAt),
	}
}

// dayKey is sqlstore's day(): the UTC midnight of t, the daily rows' key.
func dayKey(t time.Time) int64 { return micros(t.UTC().Truncate(24 * time.Hour)) }

const sqlAddCount = `INSERT INTO agent.task_counts (status, task_type, n) VALUES ($1, $2, $3)
	ON CONFLICT (status, task_type) DO UPDATE SET n = task_counts.n + excluded.n`

// ---------------------------------------------------------------------------
// 4. POST /api/agent/tasks
//
// Mirrors agent handler.CreateTask (handler/handler.go) → usecase.App.Create
// (usecase/create.go): validateNew, routing.Default's route of the type, the
// prompt-variant read (sqlstore.Prompts.Arms, when the context names none),
// then one transaction: sqlstore.Tasks.Insert, sqlstore.Stats.AddCounts
// (pending +1) and sqlstore.Stats.AddDaily (created +1). One round trip:
// the arms SELECT, BEGIN, the three writes and COMMIT in one batch.
//
// Deliberate simplification: Foundry chooses a variant by Thompson sampling
// among the arms it read before inserting; in one batch the insert cannot
// wait for that read, so the bare server reads the same rows but stores the
// context's prompt_variant (or none). This is exactly Foundry's result when
// no variant is configured or recorded (the default, and the benchmark's
// database: prompt_variants stays empty unless tasks carry a variant).
// The route is routing.Default's, hard-coded (Foundry's default table).

const (
	maxDirection = 20000
	maxContext   = 64 << 10
	maxIdeaRef   = 200
	maxVariant   = 100
	maxWorkerID  = 200
	maxStep      = 1000
	maxDecision  = 20000

	sqlArms       = `SELECT variant, samples, sum_value, sum_cost, first_zeros FROM agent.prompt_variants ORDER BY variant`
	sqlInsertTask = `INSERT INTO agent.tasks (` + taskColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
		$12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)`
	sqlAddDaily = `INSERT INTO agent.task_daily (day, task_type, model, executor, created, completed, failed, timed_out,
		duration_sum, value_sum, cost_sum) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (day, task_type, model, executor) DO UPDATE SET
		created = task_daily.created + excluded.created, completed = task_daily.completed + excluded.completed,
		failed = task_daily.failed + excluded.failed, timed_out = task_daily.timed_out + excluded.timed_out,
		duration_sum = task_daily.duration_sum + excluded.duration_sum,
		value_sum = task_daily.value_sum + excluded.value_sum, cost_sum = task_daily.cost_sum + excluded.cost_sum`
)

// taskTypes lists the task types (task.Types).
var taskTypes = []string{"spec", "impl", "test", "review", "heal", "code-review", "merge", "deploy", "verify", "reflect"}

type route struct{ executor, tier, model, template string }

// defaultRoutes is routing.Default() decided for every type.
var defaultRoutes = func() map[string]route {
	claude := map[string]string{"fast": "claude-haiku-4-5", "balanced": "claude-sonnet-4-5", "strong": "claude-opus-4-1"}
	codex := map[string]string{"fast": "gpt-5-mini", "balanced": "gpt-5-codex", "strong": "gpt-5"}
	const claudeCmd, codexCmd = "claude -p {{direction}} --model {{model}}", "codex exec --model {{model}} {{direction}}"
	mk := func(executor, tier string) route {
		if executor == "claude" {
			return route{executor, tier, claude[tier], claudeCmd}
		}
		return route{executor, tier, codex[tier], codexCmd}
	}
	return map[string]route{
		"spec": mk("claude", "strong"), "impl": mk("codex", "balanced"), "test": mk("codex", "balanced"),
		"review": mk("claude", "balanced"), "heal": mk("claude", "balanced"), "code-review": mk("claude", "balanced"),
		"merge": mk("codex", "fast"), "deploy": mk("codex", "fast"), "verify": mk("claude", "fast"),
		"reflect": mk("claude", "strong"),
	}
}()

// command is routing.Command: the template filled, the direction quoted
// as one POSIX shell word.
func command(rt route, id, typ, direction string) string {
	quoted := "'" + strings.ReplaceAll(direction, "'", `'\''`) + "'"
	return strings.NewReplacer("{{direction}}", quoted, "{{model}}", rt.model, "{{task_id}}", id,
		"{{task_type}}", typ, "{{tier}}", rt.tier).Replace(rt.template)
}

// CreateTaskRequest is POST /api/agent/tasks' body.
type CreateTaskRequest struct {
	Direction string         `json:"direction"`
	TaskType  string         `json:"task_type"`
	Context   map[string]any `json:"context"`
}

// contextString is usecase.contextString: an optional non-blank string of
// at most maxLen characters.
func contextString(c map[string]any, key string, maxLen int) (string, []FieldError) {
	v, ok := c[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	switch {
	case !ok:
		return "", []FieldError{field("context."+key, "must be a string")}
	case strings.TrimSpace(s) == "":
		return "", []FieldError{field("context."+key, "must not be blank")}
	case utf8.RuneCountInString(s) > maxLen:
		return "", []FieldError{field("context."+key, "must be at most %d characters", maxLen)}
	}
	return s, nil
}

// CreateTask is POST /api/agent/tasks; the route answers it with 201
// Created.
func (core *Core) CreateTask(ctx context.Context, req CreateTaskRequest) (Task, error) {
	// usecase.validateNew
	var fields []FieldError
	switch d := strings.TrimSpace(req.Direction); {
	case d == "":
		fields = append(fields, field("direction", "is required"))
	case utf8.RuneCountInString(req.Direction) > maxDirection:
		fields = append(fields, field("direction", "must be at most %d characters", maxDirection))
	}
	if !slices.Contains(taskTypes, req.TaskType) {
		fields = append(fields, field("task_type", "must be one of %s", strings.Join(taskTypes, ", ")))
	}
	c := req.Context
	if c == nil {
		c = map[string]any{}
	}
	ideaID, e := contextString(c, "idea_id", maxIdeaRef)
	fields = append(fields, e...)
	variant, e := contextString(c, "prompt_variant", maxVariant)
	fields = append(fields, e...)
	raw, jerr := json.Marshal(c)
	switch {
	case jerr != nil:
		fields = append(fields, field("context", "must be a JSON object"))
	case len(raw) > maxContext:
		fields = append(fields, field("context", "must be at most %d bytes of JSON", maxContext))
	}
	if err := collect(fields); err != nil {
		return Task{}, err
	}
	rt := defaultRoutes[req.TaskType]

	at := now()
	t := taskRow{
		ID: newID(), Direction: req.Direction, Type: req.TaskType, Status: "pending",
		Model: rt.model, Executor: rt.executor, Tier: rt.tier, Context: string(raw),
		IdeaID: nullString(ideaID), PromptVariant: nullString(variant),
		CreatedAt: micros(at), UpdatedAt: micros(at),
	}
	t.Command = command(rt, t.ID, t.Type, t.Direction)

	b := &pgx.Batch{}
	if variant == "" {
		b.Queue(sqlArms)
	}
	b.Queue("BEGIN")
	b.Queue(sqlInsertTask, t.ID, t.Direction, t.Type, t.Status, t.Model, t.Executor, t.Tier, t.Command, t.Context,
		t.IdeaID, t.PromptVariant, t.Output, t.ProgressPct, t.CurrentStep, t.DecisionPrompt, nil, nil,
		nil, 0, nil, 0, nil, nil, nil, t.CreatedAt, t.UpdatedAt, nil, nil)
	b.Queue(sqlAddCount, t.Status, t.Type, 1)
	b.Queue(sqlAddDaily, dayKey(at), t.Type, t.Model, t.Executor, 1, 0, 0, 0, 0.0, 0.0, 0.0)
	b.Queue("COMMIT")
	err := core.run(ctx, b, func(br pgx.BatchResults) error {
		if variant == "" {
			rows, err := br.Query()
			if err != nil {
				return fmt.Errorf("read prompt variants: %w", err)
			}
			for rows.Next() {
				var (
					v                   string
					samples, firstZeros int
					sumValue, sumCost   float64
				)
				if err := rows.Scan(&v, &samples, &sumValue, &sumCost, &firstZeros); err != nil {
					rows.Close()
					return fmt.Errorf("read prompt variants: %w", err)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("read prompt variants: %w", err)
			}
		}
		for range 5 {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("create task: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return Task{}, err
	}
	return taskOut(t), nil
}

// ---------------------------------------------------------------------------
// 5. PATCH /api/agent/tasks/{id}
//
// Mirrors agent handler.UpdateTask → usecase.App.Update (usecase/update.go):
// Patch.validate, then one transaction: sqlstore.Tasks.Lock (SELECT … FOR
// UPDATE), the rule (usecase.App.apply, task.Claim, finish),
// sqlstore.Tasks.Save and usecase.App.changed: the task_counts deltas and,
// when the task finishes, sqlstore.Stats.AddDaily, AddFinished and
// AddDuration, the prompt A/B outcome (recordOutcome) and the idea outbox
// row (sqlstore.Outbox.Enqueue).
//
// One round trip: BEGIN, Foundry's Lock SELECT, one data-modifying CTE
// statement, COMMIT. Foundry decides the write in Go from the locked row;
// here the CTE's UPDATE carries the rule's precondition in its WHERE (claim:
// status = 'pending'; complete: not finished and not another worker's), the
// patch's optional fields as COALESCE($n, column), and the derived writes
// (counter deltas in (status, type) order, rollups, histogram bucket,
// outcome, outbox row) read the UPDATE's RETURNING, so they happen exactly
// when the task row changed. Go then applies Foundry's rule to the locked
// row to build the answer (or the 409/422) from the same facts. Deliberate
// differences: Save's SET list names only the columns the transition
// changes (the others keep their values, as Foundry rewrites them
// unchanged); the prompt arm's read-modify-write (LockArm + Record +
// SaveArm) is one upsert computing abtest.Arm.Record in SQL; the duration
// bucket (metrics.BucketOf) is computed with SQL's LN; the lease is
// Foundry's default (usecase.DefaultLease, 5 min).
//
// Supported: status "running" with worker_id (the claim, pending →
// running) and status "completed". A repeated claim by the worker that holds
// the task (Foundry's lease renewal) takes one more autocommit UPDATE.
// Other patches (no status, pending, failed, timed_out, needs_decision)
// answer 501: the benchmark does not send them.

const leaseSeconds = 300 // usecase.DefaultLease

const sqlLockTask = `SELECT ` + taskColumns + ` FROM agent.tasks WHERE id = $1 FOR UPDATE`

const sqlClaimTask = `WITH saved AS (
	UPDATE agent.tasks SET status = 'running', output = COALESCE($2, output), progress_pct = COALESCE($3, progress_pct),
		current_step = COALESCE($4, current_step), decision_prompt = COALESCE($5, decision_prompt),
		worker_id = $6, lease_seconds = $7, lease_expires_at = $8, attempts = attempts + 1,
		value_score = COALESCE($9, value_score), resource_cost = COALESCE($10, resource_cost),
		updated_at = $11, started_at = $11
	WHERE id = $1 AND status = 'pending'
	RETURNING task_type)
INSERT INTO agent.task_counts (status, task_type, n)
SELECT d.status, s.task_type, d.n FROM saved s CROSS JOIN (VALUES ('pending', -1), ('running', 1)) AS d (status, n)
ORDER BY d.status
ON CONFLICT (status, task_type) DO UPDATE SET n = task_counts.n + excluded.n`

const sqlCompleteTask = `WITH cur AS (SELECT id, status FROM agent.tasks WHERE id = $1),
saved AS (
	UPDATE agent.tasks t SET status = 'completed', output = COALESCE($2, t.output), progress_pct = COALESCE(CAST($3 AS DOUBLE PRECISION), 100),
		current_step = COALESCE($4, t.current_step), decision_prompt = COALESCE($5, t.decision_prompt),
		worker_id = COALESCE($6, t.worker_id), lease_expires_at = NULL,
		value_score = COALESCE($7, t.value_score), resource_cost = COALESCE($8, t.resource_cost),
		duration_seconds = GREATEST(CAST($9 - COALESCE(t.started_at, t.created_at) AS DOUBLE PRECISION) / 1000000, 0),
		updated_at = $9, completed_at = $9
	FROM cur
	WHERE t.id = cur.id AND cur.status IN ('pending', 'running', 'needs_decision')
		AND NOT (cur.status = 'running' AND CAST($6 AS TEXT) IS NOT NULL AND t.worker_id IS DISTINCT FROM CAST($6 AS TEXT))
	RETURNING t.task_type, t.model, t.executor, t.duration_seconds, t.value_score, t.resource_cost, t.prompt_variant,
		t.idea_id, cur.status AS old_status),
counted AS (
	INSERT INTO agent.task_counts (status, task_type, n)
	SELECT d.status, s.task_type, d.n FROM saved s CROSS JOIN LATERAL (VALUES (s.old_status, -1), ('completed', 1)) AS d (status, n)
	ORDER BY d.status
	ON CONFLICT (status, task_type) DO UPDATE SET n = task_counts.n + excluded.n),
daily AS (
	INSERT INTO agent.task_daily (day, task_type, model, executor, created, completed, failed, timed_out,
		duration_sum, value_sum, cost_sum)
	SELECT CAST($10 AS BIGINT), s.task_type, s.model, s.executor, 0, 1, 0, 0, COALESCE(s.duration_seconds, 0), COALESCE(s.value_score, 0),
		COALESCE(s.resource_cost, 0) FROM saved s
	ON CONFLICT (day, task_type, model, executor) DO UPDATE SET
		created = task_daily.created + excluded.created, completed = task_daily.completed + excluded.completed,
		failed = task_daily.failed + excluded.failed, timed_out = task_daily.timed_out + excluded.timed_out,
		duration_sum = task_daily.duration_sum + excluded.duration_sum,
		value_sum = task_daily.value_sum + excluded.value_sum, cost_sum = task_daily.cost_sum + excluded.cost_sum),
finished AS (
	INSERT INTO agent.task_finished_hourly (hour, completed, failed) SELECT CAST($11 AS BIGINT), 1, 0 FROM saved
	ON CONFLICT (hour) DO UPDATE SET completed = task_finished_hourly.completed + excluded.completed,
		failed = task_finished_hourly.failed + excluded.failed),
durations AS (
	INSERT INTO agent.task_durations (day, bucket, n)
	SELECT CAST($10 AS BIGINT), CASE WHEN s.duration_seconds > 0.001
		THEN GREATEST(1, CAST(CEIL(LN(s.duration_seconds / 0.001) / LN(1.02)) AS INTEGER)) ELSE 0 END, 1
	FROM saved s WHERE s.duration_seconds IS NOT NULL
	ON CONFLICT (day, bucket) DO UPDATE SET n = task_durations.n + 1),
outcome AS (
	INSERT INTO agent.prompt_outcomes (task_id, variant, value_score, resource_cost, created_at)
	SELECT $1, s.prompt_variant, COALESCE(s.value_score, 1), COALESCE(s.resource_cost, 0), $9
	FROM saved s WHERE s.prompt_variant IS NOT NULL
	ON CONFLICT (task_id) DO NOTHING
	RETURNING variant, value_score, resource_cost),
arm AS (
	INSERT INTO agent.prompt_variants (variant, samples, sum_value, sum_cost, first_zeros, updated_at)
	SELECT o.variant, 1, o.value_score, o.resource_cost, CASE WHEN o.value_score = 0 THEN 1 ELSE 0 END, $9 FROM outcome o
	ON CONFLICT (variant) DO UPDATE SET samples = prompt_variants.samples + 1,
		sum_value = prompt_variants.sum_value + excluded.sum_value, sum_cost = prompt_variants.sum_cost + excluded.sum_cost,
		first_zeros = prompt_variants.first_zeros + CASE WHEN prompt_variants.samples < 3 AND excluded.sum_value = 0 THEN 1 ELSE 0 END,
		updated_at = excluded.updated_at),
outbox AS (
	INSERT INTO agent.idea_outbox (task_id, idea_id, task_type, created_at, delivered_at, attempts, last_error, next_attempt_at)
	SELECT $1, s.idea_id, s.task_type, $9, NULL, 0, '', $9 FROM saved s WHERE s.idea_id IS NOT NULL
	ON CONFLICT (task_id) DO NOTHING)
SELECT s.duration_seconds FROM saved s`

// sqlRenewLease is Foundry's Save of a running task renewed by its worker,
// guarded so it writes only while the worker still holds the task.
const sqlRenewLease = `UPDATE agent.tasks SET output = COALESCE($2, output), progress_pct = COALESCE($3, progress_pct),
	current_step = COALESCE($4, current_step), decision_prompt = COALESCE($5, decision_prompt),
	value_score = COALESCE($6, value_score), resource_cost = COALESCE($7, resource_cost),
	lease_expires_at = $8, updated_at = $9
	WHERE id = $1 AND status = 'running' AND worker_id = $10`

// TaskPatch is PATCH /api/agent/tasks/{id}'s body.
type TaskPatch struct {
	ID             string   `json:"id"`
	Status         *string  `json:"status"`
	Output         *string  `json:"output"`
	ProgressPct    *float64 `json:"progress_pct"`
	CurrentStep    *string  `json:"current_step"`
	DecisionPrompt *string  `json:"decision_prompt"`
	ErrorSummary   *string  `json:"error_summary"`
	ErrorCategory  *string  `json:"error_category"`
	WorkerID       *string  `json:"worker_id"`
	ValueScore     *float64 `json:"value_score"`
	ResourceCost   *float64 `json:"resource_cost"`
}

var taskStatuses = []string{"pending", "running", "completed", "failed", "timed_out", "needs_decision"}

func finished(status string) bool {
	return status == "completed" || status == "failed" || status == "timed_out"
}

// validate is usecase.Patch.validate.
func (p TaskPatch) validate() error {
	if p.Status == nil && p.Output == nil && p.ProgressPct == nil && p.CurrentStep == nil && p.DecisionPrompt == nil &&
		p.ErrorSummary == nil && p.ErrorCategory == nil && p.WorkerID == nil && p.ValueScore == nil && p.ResourceCost == nil {
		return fail(http.StatusBadRequest, "empty update: give at least one field to change")
	}
	var fields []FieldError
	if p.Status != nil && !slices.Contains(taskStatuses, *p.Status) {
		fields = append(fields, field("status", "must be one of pending, running, completed, failed, timed_out, needs_decision"))
	}
	if p.ProgressPct != nil && (math.IsNaN(*p.ProgressPct) || *p.ProgressPct < 0 || *p.ProgressPct > 100) {
		fields = append(fields, field("progress_pct", "must be between 0 and 100"))
	}
	for _, m := range []struct {
		name string
		v    *float64
	}{{"value_score", p.ValueScore}, {"resource_cost", p.ResourceCost}} {
		if m.v != nil && (math.IsNaN(*m.v) || math.IsInf(*m.v, 0) || *m.v < 0) {
			fields = append(fields, field(m.name, "must be a number at least 0"))
		}
	}
	if c := p.ErrorCategory; c != nil && *c != "" && !slices.Contains(
		[]string{"timeout", "executor_crash", "provider_error", "validation_failure", "unknown"}, *c) {
		fields = append(fields, field("error_category",
			"must be one of timeout, executor_crash, provider_error, validation_failure, unknown"))
	}
	if p.WorkerID != nil {
		switch w := strings.TrimSpace(*p.WorkerID); {
		case w == "":
			fields = append(fields, field("worker_id", "must not be blank"))
		case utf8.RuneCountInString(w) > maxWorkerID:
			fields = append(fields, field("worker_id", "must be at most %d characters", maxWorkerID))
		}
	}
	if p.CurrentStep != nil && utf8.RuneCountInString(*p.CurrentStep) > maxStep {
		fields = append(fields, field("current_step", "must be at most %d characters", maxStep))
	}
	if p.DecisionPrompt != nil && utf8.RuneCountInString(*p.DecisionPrompt) > maxDecision {
		fields = append(fields, field("decision_prompt", "must be at most %d characters", maxDecision))
	}
	return collect(fields)
}

// unchanged is usecase.Patch.unchanged: every field the patch names already
// has its value (a repeated PATCH of a finished task).
func (p TaskPatch) unchanged(t taskRow) bool {
	eqS := func(v *string, cur string) bool { return v == nil || *v == cur }
	eqF := func(v *float64, cur float64) bool { return v == nil || *v == cur }
	eqP := func(v, cur *float64) bool { return v == nil || (cur != nil && *v == *cur) }
	worker := p.WorkerID
	if worker != nil {
		w := strings.TrimSpace(*worker)
		worker = &w
	}
	return eqS(p.Status, t.Status) && eqS(p.Output, t.Output) && eqF(p.ProgressPct, t.ProgressPct) &&
		eqS(p.CurrentStep, t.CurrentStep) && eqS(p.DecisionPrompt, t.DecisionPrompt) &&
		eqS(p.ErrorSummary, deref(t.ErrorSummary)) && eqS(p.ErrorCategory, deref(t.ErrorCategory)) &&
		eqS(worker, deref(t.WorkerID)) && eqP(p.ValueScore, t.ValueScore) && eqP(p.ResourceCost, t.ResourceCost)
}

// write says which statement a patch's outcome needs.
type write int

const (
	writeNone write = iota
	writeClaim
	writeComplete
	writeRenew
)

// apply is usecase.App.apply for the claim and the completion: cur changed
// by p at at, which write it takes, or why not.
func (p TaskPatch) apply(cur taskRow, at time.Time) (taskRow, write, error) {
	if finished(cur.Status) {
		if p.unchanged(cur) {
			return cur, writeNone, nil
		}
		return cur, writeNone, fail(http.StatusConflict, "task %s is %s: a finished task does not change", cur.ID, cur.Status)
	}
	target := *p.Status
	worker := ""
	if p.WorkerID != nil {
		worker = strings.TrimSpace(*p.WorkerID)
	}
	if cur.Status == "running" && p.WorkerID != nil && worker != deref(cur.WorkerID) {
		return cur, writeNone, fail(http.StatusConflict, "task already claimed by another worker")
	}
	if p.ErrorSummary != nil || p.ErrorCategory != nil {
		return cur, writeNone, invalid(field("error_summary", "is set only when the task fails or times out (status failed or timed_out)"))
	}
	next := cur
	if p.Output != nil {
		next.Output = *p.Output
	}
	if p.ProgressPct != nil {
		next.ProgressPct = *p.ProgressPct
	}
	if p.CurrentStep != nil {
		next.CurrentStep = *p.CurrentStep
	}
	if p.DecisionPrompt != nil {
		next.DecisionPrompt = *p.DecisionPrompt
	}
	if p.ValueScore != nil {
		next.ValueScore = p.ValueScore
	}
	if p.ResourceCost != nil {
		next.ResourceCost = p.ResourceCost
	}
	us := micros(at)
	w := writeNone
	switch target {
	case "running": // task.Claim, then claimed()
		switch {
		case worker == "":
			return cur, writeNone, invalid(field("worker_id", "is required to move a task to running"))
		case cur.Status == "running": // the same worker: a renewal
			w = writeRenew
		case cur.Status != "pending":
			return cur, writeNone, fail(http.StatusConflict, "a %s task cannot be claimed", cur.Status)
		default:
			w = writeClaim
			next.WorkerID = &worker
			next.Attempts++
			next.StartedAt = &us
			next.LeaseSeconds = leaseSeconds
		}
		lease := int64(next.LeaseSeconds)
		if lease <= 0 {
			lease = leaseSeconds
		}
		exp := us + lease*microScale
		next.LeaseExpiresAt = &exp
	case "completed": // finish()
		w = writeComplete
		if p.WorkerID != nil {
			next.WorkerID = &worker
		}
		if p.ProgressPct == nil {
			next.ProgressPct = 100
		}
		start := cur.CreatedAt
		if cur.StartedAt != nil {
			start = *cur.StartedAt
		}
		d := float64(max(us-start, 0)) / microScale
		next.Duration = &d
		next.CompletedAt = &us
		next.LeaseExpiresAt = nil
	}
	next.Status = target
	next.UpdatedAt = us
	return next, w, nil
}

// UpdateTask is PATCH /api/agent/tasks/{id} with the patch p.
func (core *Core) UpdateTask(ctx context.Context, id string, p TaskPatch) (Task, error) {
	if err := p.validate(); err != nil {
		return Task{}, err
	}
	if p.Status == nil || (*p.Status != "running" && *p.Status != "completed") {
		return Task{}, fail(http.StatusNotImplemented,
			"the bare baseline implements only status running (claim) and completed")
	}
	at := now()
	us := micros(at)
	var worker *string
	if p.WorkerID != nil {
		wk := strings.TrimSpace(*p.WorkerID)
		worker = &wk
	}
	// The write is queued only when the request itself allows it; otherwise
	// the rule refuses it whatever the row says (as apply would) and the
	// batch only reads the row.
	kind := writeNone
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sqlLockTask, id)
	if p.ErrorSummary == nil && p.ErrorCategory == nil {
		switch {
		case *p.Status == "running" && worker != nil:
			kind = writeClaim
			b.Queue(sqlClaimTask, id, p.Output, p.ProgressPct, p.CurrentStep, p.DecisionPrompt, *worker, leaseSeconds,
				us+leaseSeconds*microScale, p.ValueScore, p.ResourceCost, us)
		case *p.Status == "completed":
			kind = writeComplete
			b.Queue(sqlCompleteTask, id, p.Output, p.ProgressPct, p.CurrentStep, p.DecisionPrompt, worker,
				p.ValueScore, p.ResourceCost, us, dayKey(at), micros(at.Truncate(time.Hour)))
		}
	}
	b.Queue("COMMIT")

	var (
		cur      taskRow
		found    bool
		written  bool
		duration *float64
	)
	err := core.run(ctx, b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		var err error
		cur, err = scanTask(br.QueryRow())
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("read task %s: %w", id, err)
		default:
			found = true
		}
		switch kind {
		case writeClaim:
			tag, err := br.Exec()
			if err != nil {
				return fmt.Errorf("update task %s: %w", id, err)
			}
			written = tag.RowsAffected() > 0
		case writeComplete:
			rows, err := br.Query()
			if err != nil {
				return fmt.Errorf("update task %s: %w", id, err)
			}
			for rows.Next() {
				written = true
				if err := rows.Scan(&duration); err != nil {
					rows.Close()
					return fmt.Errorf("update task %s: %w", id, err)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("update task %s: %w", id, err)
			}
		}
		_, err = br.Exec()
		return err
	})
	if err != nil {
		return Task{}, err
	}
	if !found {
		return Task{}, fail(http.StatusNotFound, "task %s not found", id)
	}
	next, want, err := p.apply(cur, at)
	switch {
	case err != nil && written:
		err = fmt.Errorf("task %s: the rule refused a write the database made", id)
	case err == nil && want == writeRenew:
		_, err = core.pool.Exec(ctx, sqlRenewLease, id, p.Output, p.ProgressPct, p.CurrentStep, p.DecisionPrompt,
			p.ValueScore, p.ResourceCost, *next.LeaseExpiresAt, next.UpdatedAt, *worker)
	case err == nil && want != writeNone && (want != kind || !written):
		err = fmt.Errorf("task %s: the %s task was not written", id, cur.Status)
	}
	if err != nil {
		return Task{}, err
	}
	if want == writeComplete && duration != nil {
		next.Duration = duration // the stored value
	}
	return taskOut(next), nil
}

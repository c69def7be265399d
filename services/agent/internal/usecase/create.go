package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/prompt"
	"github.com/foundryhq/foundry/services/agent/internal/routing"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// Limits of a task's fields.
const (
	MaxDirection   = 20000
	MaxContext     = 64 << 10
	MaxIdeaID      = 200
	MaxVariant     = 100
	MaxWorkerID    = 200
	MaxCurrentStep = 1000
	MaxDecision    = 20000
	// MaxArtifact bounds a task's artifact in bytes (64 KiB): a text or a
	// URL, carried into the next stage's context and prompt.
	MaxArtifact = 64 << 10
)

// NewTask is a create request.
type NewTask struct {
	Direction string
	Type      string
	// Context is the free-form JSON object (nil: {}). idea_id links the
	// task to an idea; prompt_variant picks an A/B variant.
	Context map[string]any
	// ClaimedBy, when set, creates the task already claimed by that worker
	// for Lease (the pipeline loop running a task itself): no other worker
	// can take it between its creation and its run.
	ClaimedBy string
	Lease     time.Duration
	// Loop marks a task the pipeline loop opens for context.idea_id
	// (required then). At most one such task per idea is open at a time,
	// which the schema enforces: a second one is refused with an error
	// wrapping store.ErrLoopTaskOpen, so two replicas that both believe
	// they lead cannot open two tasks for one idea. Tasks created through
	// the API are not bound by it.
	Loop bool
	// Key, when not nil, creates the task at most once per Idempotency-Key:
	// a retry answers the task the first request created.
	Key *idempotency.Request
}

// Create queues a task: status pending, routed to an executor, tier and
// model for its type, with the suggested command; the prompt variant is
// context.prompt_variant when given, otherwise one chosen by Thompson
// sampling among the known variants (none when no variant is known).
func (a *App) Create(ctx context.Context, in NewTask) (store.Task, error) {
	typ, ideaID, variant, rawContext, err := validateNew(in)
	if err != nil {
		return store.Task{}, err
	}
	source := store.SourceAPI
	if in.Loop {
		if ideaID == "" {
			return store.Task{}, fault.Validation(fault.Field("context.idea_id", "is required for a task the pipeline loop opens"))
		}
		source = store.SourceLoop
	}
	route, ok := a.cfg.Routing.Decide(string(typ))
	if !ok {
		return store.Task{}, fault.Validation(fault.Field("task_type", "has no route"))
	}
	pr, err := a.choosePrompt(ctx, typ, variant)
	if err != nil {
		return store.Task{}, wrap("choose a prompt", err)
	}
	now := a.now()
	t := store.Task{
		ID: a.cfg.NewID(), Direction: in.Direction, Type: typ, Status: task.Pending,
		Model: route.Model, Executor: route.Executor, Tier: route.Tier,
		Context: rawContext, IdeaID: ideaID, PromptVariant: pr.Variant, PromptVersion: pr.Version, Source: source,
		MaxAttempts: a.cfg.Retries.Of(typ).MaxAttempts, CreatedAt: now, UpdatedAt: now,
	}
	t.Prompt = prompt.Render(pr.Template, promptVars(in, typ, ideaID))
	t.Command = routing.Command(route.Template, routing.Vars{
		TaskID: t.ID, TaskType: string(t.Type), Direction: t.Direction, Prompt: t.Prompt, Model: t.Model, Tier: t.Tier,
	})
	if in.ClaimedBy != "" {
		t = claimed(t, in.ClaimedBy, "", min(max(in.Lease, time.Second), MaxLeaseSeconds*time.Second), now)
	}
	var out store.Task
	err = a.keyed.Do(ctx, in.Key, &out, nil, func(r Repos) error {
		out = t
		// The task, its counters and its rollup in one trip that also
		// ends the transaction (its COMMIT rides along on Postgres, so the
		// counter row every create updates is locked for no round trip
		// after). A refused insert fails the batch, and the counters after
		// it never run.
		var b database.Batch
		r.Tasks.QueueInsert(&b, t)
		r.Stats.QueueAddCounts(&b, []store.Count{{Status: t.Status, Type: t.Type, N: 1}})
		r.Stats.QueueAddDaily(&b, store.Daily{Day: now, Type: t.Type, Model: t.Model, Executor: t.Executor, Created: 1})
		b.Final()
		return r.Send(ctx, &b)
	})
	if database.IsUniqueViolation(err) {
		err = a.read().Tasks.Refused(ctx, t) // which rule, now the transaction is gone
	}
	if err != nil {
		return store.Task{}, wrap("create task", err)
	}
	if out.ID != t.ID {
		return out, nil // a retry: the first request created the task and logged it
	}
	if t.Status == task.Running {
		a.claims.Inc() // created claimed (the pipeline loop running it itself)
	}
	fields := []zap.Field{zap.String("task_id", t.ID), zap.String("task_type", string(t.Type)), zap.String("executor", t.Executor),
		zap.String("model", t.Model)}
	if pr.Variant != "" {
		fields = append(fields, zap.String("prompt_variant", pr.Variant), zap.Int("prompt_version", pr.Version),
			zap.String("prompt_variant_source", pr.Source))
	}
	a.log.Info("task created", fields...)
	return t, nil
}

// validateNew checks a create request and returns its type, the context's
// idea_id and prompt_variant, and the context as JSON text.
func validateNew(in NewTask) (typ task.Type, ideaID, variant, raw string, err error) {
	var errs []fault.FieldError
	switch d := strings.TrimSpace(in.Direction); {
	case d == "":
		errs = append(errs, fault.Field("direction", "is required"))
	case utf8.RuneCountInString(in.Direction) > MaxDirection:
		errs = append(errs, fault.Field("direction", "must be at most %d characters", MaxDirection))
	}
	typ, ok := task.ParseType(in.Type)
	if !ok {
		names := make([]string, len(task.Types))
		for i, t := range task.Types {
			names[i] = string(t)
		}
		errs = append(errs, fault.Field("task_type", "must be one of %s", strings.Join(names, ", ")))
	}
	c := in.Context
	if c == nil {
		c = map[string]any{}
	}
	ideaID, e := contextString(c, "idea_id", MaxIdeaID)
	if e != nil {
		errs = append(errs, *e)
	}
	variant, e = contextString(c, "prompt_variant", MaxVariant)
	if e != nil {
		errs = append(errs, *e)
	}
	b, jerr := json.Marshal(c)
	switch {
	case jerr != nil:
		errs = append(errs, fault.Field("context", "must be a JSON object"))
	case len(b) > MaxContext:
		errs = append(errs, fault.Field("context", "must be at most %d bytes of JSON", MaxContext))
	}
	if len(errs) > 0 {
		return "", "", "", "", fault.Validation(errs...)
	}
	return typ, ideaID, variant, string(b), nil
}

// contextString reads an optional string member of the context: absent or
// null is "", anything but a non-blank string of at most max characters is
// a field error.
func contextString(c map[string]any, key string, maxLen int) (string, *fault.FieldError) {
	v, ok := c[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	switch {
	case !ok:
		e := fault.Field("context."+key, "must be a string")
		return "", &e
	case strings.TrimSpace(s) == "":
		e := fault.Field("context."+key, "must not be blank")
		return "", &e
	case utf8.RuneCountInString(s) > maxLen:
		e := fault.Field("context."+key, "must be at most %d characters", maxLen)
		return "", &e
	}
	return s, nil
}

// arms returns every known variant's record: the recorded ones and the
// configured ones not recorded yet (with no samples), by name.
func (a *App) arms(ctx context.Context) ([]abtest.Arm, error) {
	arms, err := a.read().Prompts.Arms(ctx)
	if err != nil {
		return nil, err
	}
	for _, v := range a.cfg.Variants {
		if !slices.ContainsFunc(arms, func(x abtest.Arm) bool { return x.Variant == v }) {
			arms = append(arms, abtest.Arm{Variant: v})
		}
	}
	return abtest.Sorted(arms), nil
}

// Get returns a task.
func (a *App) Get(ctx context.Context, id string) (store.Task, error) {
	t, err := a.read().Tasks.Get(ctx, id)
	if err != nil {
		return store.Task{}, notFound(err, id)
	}
	return t, nil
}

// promptVars are what a new task's prompt is rendered with: its
// direction, and from its context the idea (the pipeline loop's tasks
// carry idea {name, description}, stage and the earlier stages' outputs,
// previous [{task_type, output, artifact}]; a client's may too).
func promptVars(in NewTask, typ task.Type, ideaID string) prompt.Vars {
	v := prompt.Vars{TaskType: string(typ), Direction: in.Direction, IdeaID: ideaID}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	if idea, ok := in.Context["idea"].(map[string]any); ok {
		v.IdeaName, v.IdeaDesc = str(idea, "name"), str(idea, "description")
	}
	v.Stage = str(in.Context, "stage")
	prev, _ := in.Context["previous"].([]any)
	for _, p := range prev {
		if m, ok := p.(map[string]any); ok {
			v.Previous = append(v.Previous, prompt.Output{TaskType: str(m, "task_type"), Output: str(m, "output"), Artifact: str(m, "artifact")})
		}
	}
	return v
}

// Attempts returns the task's attempts that did not complete, first
// first (none for an unknown task).
func (a *App) Attempts(ctx context.Context, id string) ([]store.Attempt, error) {
	out, err := a.read().Tasks.Attempts(ctx, id)
	return out, wrap("read the attempts of task "+id, err)
}

// notFound turns the store's ErrNotFound into the task's 404.
func notFound(err error, id string) error {
	if isNotFound(err) {
		return fault.New(fault.NotFound, "task %s not found", id)
	}
	return fmt.Errorf("read task %s: %w", id, err)
}

// ErrNotAdoptable is Adopt's answer for a task that is no longer a
// pending loop task: a worker claimed it, or it finished, since the loop
// looked.
var ErrNotAdoptable = errors.New("the task is no longer a pending loop task")

// Adopt takes over a pending loop task no pass runs (PendingLoopTasks),
// or a failed one whose retry is due, for a pass: claimed by worker for
// lease when the loop runs it itself, as Create does for its own, or
// pending when a worker is to run it.
// An error wrapping ErrNotAdoptable when it is no longer pending.
func (a *App) Adopt(ctx context.Context, id, worker string, lease time.Duration) (store.Task, error) {
	var out store.Task
	err := a.tx(ctx, func(r Repos) error {
		cur, err := r.Tasks.Lock(ctx, id)
		if err != nil {
			return notFound(err, id)
		}
		now := a.now()
		due := cur.Status == task.Failed && !cur.NextAttemptAt.IsZero() && !cur.NextAttemptAt.After(now)
		if cur.Source != store.SourceLoop || (cur.Status != task.Pending && !due) {
			return fmt.Errorf("adopt task %s (%s): %w", id, cur.Status, ErrNotAdoptable)
		}
		out = cur
		if due {
			// Its retry, which the reaper would make a moment later.
			out = reopened(cur, now)
		}
		if worker != "" {
			out = claimed(out, worker, "", min(max(lease, time.Second), MaxLeaseSeconds*time.Second), now)
			out.UpdatedAt = now
		}
		if out.Status == cur.Status {
			return nil // pending, left to a worker
		}
		var (
			b      database.Batch
			queued bool
		)
		r.Tasks.QueueSave(&b, out)
		if err := a.changed(ctx, r, &b, cur, out, true, &queued); err != nil {
			return err
		}
		b.Final()
		return r.Send(ctx, &b)
	})
	if err != nil {
		return store.Task{}, wrap("adopt task "+id, err)
	}
	return out, nil
}

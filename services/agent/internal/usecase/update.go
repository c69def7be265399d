package usecase

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// Patch is a PATCH of a task: nil fields are absent.
type Patch struct {
	Status         *string
	Output         *string
	Artifact       *string
	ProgressPct    *float64
	CurrentStep    *string
	DecisionPrompt *string
	ErrorSummary   *string
	ErrorCategory  *string
	WorkerID       *string
	ValueScore     *float64
	ResourceCost   *float64
	// TokensIn, TokensOut and CostUSD are the run's usage.
	TokensIn, TokensOut *int64
	CostUSD             *float64
	// By is who sends the patch (task.Reporter.CheckReport); the zero
	// value is Foundry itself.
	By task.Reporter
	// Stopped marks the failure of a run the pipeline loop cut short
	// itself (its lease lost, the process stopping): the idea's task did
	// not fail, so it does not count against the idea's backoff. Only the
	// loop sets it; the API has no such field.
	Stopped bool
}

// Empty reports whether the patch names no field.
func (p Patch) Empty() bool {
	return p.Status == nil && p.Output == nil && p.Artifact == nil && p.ProgressPct == nil && p.CurrentStep == nil && p.DecisionPrompt == nil &&
		p.ErrorSummary == nil && p.ErrorCategory == nil && p.WorkerID == nil && p.ValueScore == nil && p.ResourceCost == nil &&
		p.TokensIn == nil && p.TokensOut == nil && p.CostUSD == nil
}

// validate checks each field on its own (the rules between fields and the
// task's state are apply's).
func (p Patch) validate() error {
	if p.Empty() {
		return fault.New(fault.Rejected, "empty update: give at least one field to change")
	}
	var errs []fault.FieldError
	if p.Status != nil {
		// discarded and cancelled are reached by the retry policy and the
		// operators' cancel, never set by a PATCH.
		if s, ok := task.ParseStatus(*p.Status); !ok || s == task.Discarded || s == task.Cancelled {
			errs = append(errs, fault.Field("status", "must be one of pending, running, completed, failed, timed_out, needs_decision"))
		}
	}
	if p.ProgressPct != nil && (math.IsNaN(*p.ProgressPct) || *p.ProgressPct < 0 || *p.ProgressPct > 100) {
		errs = append(errs, fault.Field("progress_pct", "must be between 0 and 100"))
	}
	for _, m := range []struct {
		name string
		v    *float64
	}{{"value_score", p.ValueScore}, {"resource_cost", p.ResourceCost}, {"cost_usd", p.CostUSD}} {
		if m.v != nil && (math.IsNaN(*m.v) || *m.v < 0 || *m.v > task.MaxMeasure) {
			errs = append(errs, fault.Field(m.name, "must be a number from 0 to %g", float64(task.MaxMeasure)))
		}
	}
	for _, m := range []struct {
		name string
		v    *int64
	}{{"tokens_in", p.TokensIn}, {"tokens_out", p.TokensOut}} {
		if m.v != nil && (*m.v < 0 || *m.v > task.MaxTokens) {
			errs = append(errs, fault.Field(m.name, "must be between 0 and %d", int64(task.MaxTokens)))
		}
	}
	if p.ErrorCategory != nil && *p.ErrorCategory != "" && !task.ValidCategory(*p.ErrorCategory) {
		errs = append(errs, fault.Field("error_category",
			"must be one of timeout, executor_crash, provider_error, validation_failure, unknown"))
	}
	if p.WorkerID != nil {
		switch w := strings.TrimSpace(*p.WorkerID); {
		case w == "":
			errs = append(errs, fault.Field("worker_id", "must not be blank"))
		case utf8.RuneCountInString(w) > MaxWorkerID:
			errs = append(errs, fault.Field("worker_id", "must be at most %d characters", MaxWorkerID))
		}
	}
	if p.CurrentStep != nil && utf8.RuneCountInString(*p.CurrentStep) > MaxCurrentStep {
		errs = append(errs, fault.Field("current_step", "must be at most %d characters", MaxCurrentStep))
	}
	if p.DecisionPrompt != nil && utf8.RuneCountInString(*p.DecisionPrompt) > MaxDecision {
		errs = append(errs, fault.Field("decision_prompt", "must be at most %d characters", MaxDecision))
	}
	if p.Artifact != nil && len(*p.Artifact) > MaxArtifact {
		errs = append(errs, fault.Field("artifact", "must be at most %d bytes: a text or a URL to what is larger", MaxArtifact))
	}
	if len(errs) > 0 {
		return fault.Validation(errs...)
	}
	return nil
}

// unchanged reports whether every field the patch names already has the
// value it gives (a repeated PATCH).
func (p Patch) unchanged(t store.Task) bool {
	eqS := func(v *string, cur string) bool { return v == nil || *v == cur }
	eqF := func(v *float64, cur float64) bool { return v == nil || *v == cur }
	eqP := func(v, cur *float64) bool { return v == nil || (cur != nil && *v == *cur) }
	eqI := func(v, cur *int64) bool { return v == nil || (cur != nil && *v == *cur) }
	worker := p.WorkerID
	if worker != nil {
		w := strings.TrimSpace(*worker)
		worker = &w
	}
	status := p.Status
	if status != nil && *status == string(task.Failed) && t.Status == task.Discarded {
		status = nil // the failure of a last attempt, sent again
	}
	return eqS(status, string(t.Status)) && eqS(p.Output, t.Output) && eqS(p.Artifact, t.Artifact) && eqF(p.ProgressPct, t.ProgressPct) &&
		eqS(p.CurrentStep, t.CurrentStep) && eqS(p.DecisionPrompt, t.DecisionPrompt) &&
		eqS(p.ErrorSummary, t.ErrorSummary) && eqS(p.ErrorCategory, t.ErrorCategory) && eqS(worker, t.WorkerID) &&
		eqP(p.ValueScore, t.ValueScore) && eqP(p.ResourceCost, t.ResourceCost) &&
		eqI(p.TokensIn, t.TokensIn) && eqI(p.TokensOut, t.TokensOut) && (p.CostUSD == nil || eqP(p.CostUSD, t.CostUSD))
}

// apply is the update rule: the task cur changed by p at now, or why not.
//
//   - A finished task (completed, failed, timed_out) does not change: a
//     PATCH that repeats its values answers it unchanged, any other is a
//     conflict.
//   - A running task belongs to its worker: a PATCH naming another
//     worker_id is a conflict. Any PATCH of a running task renews its
//     lease (the heartbeat).
//   - status running claims the task (task.Claim: a worker_id is required;
//     a second worker is a conflict; the same worker renews).
//   - status pending releases the claim; needs_decision keeps the worker
//     but drops the lease.
//   - completed, failed and timed_out finish the task: completed_at and
//     duration_seconds (from started_at, or created_at when it never ran)
//     are set, and a completed task's progress becomes 100 unless given.
//     failed needs error_summary or output (task.Diagnose fills the
//     missing summary and category); timed_out defaults to the timeout
//     category. error_summary and error_category are refused with any
//     other status.
//   - failed is one attempt's failure: with attempts left (the task
//     type's task.RetryPolicy) the task stays failed until
//     next_attempt_at, when Reap puts it back in the queue; the last
//     attempt's failure discards it instead.
func (a *App) apply(cur store.Task, p Patch, lease time.Duration, now time.Time) (store.Task, error) {
	claims := p.Status != nil && task.Status(*p.Status) == task.Running && cur.Status != task.Running
	if err := p.By.CheckReport(cur.ClaimedBy, claims); err != nil {
		return cur, err
	}
	if cur.Status.Finished() {
		if p.unchanged(cur) {
			return cur, nil
		}
		return cur, fault.New(fault.Conflict, "task %s is %s: a finished task does not change", cur.ID, cur.Status)
	}
	next := cur
	target := cur.Status
	if p.Status != nil {
		target = task.Status(*p.Status)
	}
	worker := ""
	if p.WorkerID != nil {
		worker = strings.TrimSpace(*p.WorkerID)
	}
	if cur.Status == task.Running && p.WorkerID != nil && worker != cur.WorkerID {
		return cur, fault.New(fault.Conflict, "task already claimed by another worker")
	}
	if cur.Status == task.Running && p.WorkerID == nil && p.By.ID != "" && !p.By.Operator {
		// A fleet may share one worker token, so the credential alone does
		// not say which of its workers holds the task: without this, a
		// PATCH naming no worker completed another worker's task.
		return cur, fault.Validation(fault.Field("worker_id",
			"is required of a worker reporting on a running task: name the worker that claimed it (%s)", cur.WorkerID))
	}
	if (p.ErrorSummary != nil || p.ErrorCategory != nil) && target != task.Failed && target != task.TimedOut {
		return cur, fault.Validation(fault.Field("error_summary", "is set only when the task fails or times out (status failed or timed_out)"))
	}

	if p.Output != nil {
		next.Output = *p.Output
	}
	if p.Artifact != nil {
		next.Artifact = *p.Artifact
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
	if p.TokensIn != nil {
		next.TokensIn = p.TokensIn
	}
	if p.TokensOut != nil {
		next.TokensOut = p.TokensOut
	}
	if p.CostUSD != nil {
		next.CostUSD = p.CostUSD
	}

	switch target {
	case task.Running:
		if p.Status != nil {
			if err := task.Claim(cur.Status, cur.WorkerID, worker); err != nil {
				return cur, err
			}
		}
		if cur.Status != task.Running {
			next = claimed(next, worker, p.By.ID, lease, now)
		}
		next.LeaseExpiresAt = now.Add(leaseOf(next, lease))
	case task.Pending:
		if p.WorkerID != nil {
			return cur, fault.Validation(fault.Field("worker_id", "is set by claiming the task (status running)"))
		}
		next.WorkerID, next.ClaimedBy, next.LeaseSeconds, next.LeaseExpiresAt = "", "", 0, time.Time{}
	case task.NeedsDecision:
		if p.WorkerID != nil {
			next.WorkerID = worker
		}
		next.LeaseExpiresAt = time.Time{}
	case task.Completed, task.Failed, task.TimedOut:
		if p.WorkerID != nil {
			next.WorkerID = worker
		}
		if err := finish(&next, cur, target, p, now); err != nil {
			return cur, err
		}
		a.priced(&next)
		if target == task.Failed {
			target = a.afterFailure(&next, now, p.Stopped)
		}
	}
	next.Status = target
	next.UpdatedAt = now
	return next, nil
}

// priced completes a finishing task's usage: a cost estimated from its
// tokens at its model's price when its executor reported tokens and no
// cost, and that cost as the A/B resource_cost when none was given, so
// a variant's ROI weighs what its tasks really cost.
func (a *App) priced(t *store.Task) {
	if t.CostUSD == nil && (t.TokensIn != nil || t.TokensOut != nil) {
		if usd, ok := a.cfg.Prices.Estimate(t.Model, deref(t.TokensIn), deref(t.TokensOut)); ok {
			t.CostUSD = &usd
		}
	}
	if t.ResourceCost == nil && t.CostUSD != nil {
		cost := *t.CostUSD
		t.ResourceCost = &cost
	}
}

func deref(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

// afterFailure applies t's retry policy to its failed attempt at now: the
// time of its retry, or, on its last attempt, discarded with the reason.
// A task failed before any claim failed its first attempt. A run the loop
// stopped itself (Patch.Stopped) is retried at once: nothing went wrong
// with the task that a wait would help.
func (a *App) afterFailure(t *store.Task, now time.Time, stopped bool) task.Status {
	attempt, most := max(t.Attempts, 1), a.maxAttempts(*t)
	if wait, ok := a.cfg.Retries.Of(t.Type).Retries(attempt, most, a.jitter()); ok {
		if stopped {
			wait = 0
		}
		t.NextAttemptAt = now.Add(wait).Truncate(time.Microsecond)
		return task.Failed
	}
	t.NextAttemptAt = time.Time{}
	t.StatusReason = fmt.Sprintf("attempt %d of %d failed: %s", attempt, most, t.ErrorSummary)
	return task.Discarded
}

// claimed is t claimed by worker, with the credential by, at now:
// running, one more attempt, started now, with a lease.
func claimed(t store.Task, worker, by string, lease time.Duration, now time.Time) store.Task {
	t.Status = task.Running
	t.WorkerID = worker
	t.ClaimedBy = by
	t.Attempts++
	t.StartedAt = now
	t.LeaseSeconds = int(lease / time.Second)
	t.LeaseExpiresAt = now.Add(lease)
	return t
}

// leaseOf is the lease a running task's renewals use: the one it was
// claimed with.
func leaseOf(t store.Task, def time.Duration) time.Duration {
	if t.LeaseSeconds > 0 {
		return time.Duration(t.LeaseSeconds) * time.Second
	}
	return def
}

// finish ends next (a copy of cur) with status target.
func finish(next *store.Task, cur store.Task, target task.Status, p Patch, now time.Time) error {
	summary, category := "", ""
	if p.ErrorSummary != nil {
		summary = *p.ErrorSummary
	}
	if p.ErrorCategory != nil {
		category = *p.ErrorCategory
	}
	switch target {
	case task.Failed:
		d, err := task.Diagnose(summary, category, next.Output)
		if err != nil {
			return err
		}
		next.ErrorSummary, next.ErrorCategory = d.Summary, d.Category
	case task.TimedOut:
		if category == "" {
			category = task.CategoryTimeout
		}
		d, err := task.Diagnose(summary, category, next.Output)
		if err != nil {
			d = task.Diagnosis{Summary: "timed out", Category: category}
		}
		next.ErrorSummary, next.ErrorCategory = d.Summary, d.Category
	case task.Completed:
		if p.ProgressPct == nil {
			next.ProgressPct = 100
		}
	}
	next.Duration = ranFor(cur, now)
	next.CompletedAt = now
	next.LeaseExpiresAt = time.Time{}
	return nil
}

// ranFor is a task's duration_seconds when it finishes at now: from its
// start, or its creation when it never ran.
func ranFor(t store.Task, now time.Time) *float64 {
	start := t.StartedAt
	if start.IsZero() {
		start = t.CreatedAt
	}
	d := max(now.Sub(start), 0).Seconds()
	return &d
}

// Update applies a PATCH to a task in one transaction: the task row, the
// counters, and on finishing the rollup, the failure counts, the prompt
// A/B outcome and (a completed task of an idea) the outbox row.
func (a *App) Update(ctx context.Context, id string, p Patch) (store.Task, error) {
	if err := p.validate(); err != nil {
		return store.Task{}, err
	}
	var (
		out                     store.Task
		queued, took, failedNow bool
	)
	err := a.tx(ctx, func(r Repos) error {
		took, failedNow = false, false
		cur, err := r.Tasks.Lock(ctx, id)
		if err != nil {
			return notFound(err, id)
		}
		now := a.now()
		next, err := a.apply(cur, p, a.cfg.Lease, now)
		if err != nil {
			return err
		}
		out = next
		if cur.Status.Finished() {
			return nil // an unchanged repeat: nothing to write
		}
		// A claim through a PATCH (status running from any other).
		took = cur.Status != task.Running && next.Status == task.Running
		failedNow = next.Status == task.Failed || next.Status == task.Discarded
		// The task and everything derived from it, in one batch.
		var b database.Batch
		r.Tasks.QueueSave(&b, next)
		if err := a.changed(ctx, r, &b, cur, next, !p.Stopped, &queued); err != nil {
			return err
		}
		// The last trip, COMMIT included: the counter rows it moves are
		// locked for no round trip after (database.Batch.Final).
		b.Final()
		return r.Send(ctx, &b)
	})
	if err != nil {
		return store.Task{}, wrap("update task "+id, err)
	}
	if took {
		a.claims.Inc()
	}
	if queued {
		a.signal()
	}
	if failedNow {
		if out.Status == task.Discarded {
			a.discards.Inc()
		} else {
			a.retries.Inc()
		}
	}
	return out, nil
}

// changed keeps everything derived from a task in step with its change
// from cur to next, in the same transaction: the status counters; and when
// the task finishes, the rollups, the duration histogram, the failure
// counts, a loop task's idea failures (its backoff; ideaFailed false for
// a run the loop stopped itself), the prompt A/B
// outcome (every finished task with a variant records one: value_score,
// or 1 when a completed task gave none; 0 for a failure or timeout), and
// for a completed task of an idea the outbox row of its advancement. The
// writes that need no answer are queued into b, which the caller sends
// with its own (one round trip on Postgres); the prompt outcome, which
// reads its arm, runs at once. Once b is sent, queued says whether an
// outbox row was queued. An attempt that did not complete is recorded
// (store.Attempt); a cancelled task records nothing more.
func (a *App) changed(ctx context.Context, r Repos, b *database.Batch, cur, next store.Task, ideaFailed bool, queued *bool) error {
	*queued = false
	if cur.Status != next.Status {
		r.Stats.QueueAddCounts(b, []store.Count{
			{Status: cur.Status, Type: cur.Type, N: -1}, {Status: next.Status, Type: next.Type, N: 1},
		})
	}
	if cur.Status.Finished() || !next.Status.Finished() {
		return nil
	}
	if next.Status != task.Completed {
		summary := next.ErrorSummary
		if next.Status == task.Cancelled {
			summary = next.StatusReason
		}
		r.Tasks.QueueAddAttempt(b, store.Attempt{TaskID: next.ID, Attempt: max(next.Attempts, 1), Status: next.Status,
			Summary: summary, Category: next.ErrorCategory, WorkerID: next.WorkerID, StartedAt: next.StartedAt,
			FinishedAt: next.CompletedAt})
	}
	if next.Status == task.Cancelled {
		return nil // an operator's choice: no run's outcome, no idea's failure
	}
	d := store.Daily{Day: next.CompletedAt, Type: next.Type, Model: next.Model, Executor: next.Executor}
	var f store.Finished
	switch next.Status {
	case task.Completed:
		d.Completed, f.Completed = 1, 1
	case task.Failed, task.Discarded:
		d.Failed, f.Failed = 1, 1
	default:
		d.TimedOut, f.Failed = 1, 1
	}
	if next.Duration != nil {
		d.DurationSum = *next.Duration
	}
	if next.ValueScore != nil {
		d.ValueSum = *next.ValueScore
	}
	if next.ResourceCost != nil {
		d.CostSum = *next.ResourceCost
	}
	if next.TokensIn != nil || next.TokensOut != nil || next.CostUSD != nil {
		d.UsageTasks, d.TokensIn, d.TokensOut = 1, deref(next.TokensIn), deref(next.TokensOut)
		if next.CostUSD != nil {
			d.CostUSD = *next.CostUSD
		}
	}
	r.Stats.QueueAddDaily(b, d)
	r.Stats.QueueAddFinished(b, next.CompletedAt, f)
	if next.Duration != nil {
		r.Stats.QueueAddDuration(b, next.CompletedAt, metrics.BucketOf(*next.Duration))
	}
	if next.Status == task.Failed || next.Status == task.Discarded {
		r.Stats.QueueAddFailure(b, next.ErrorCategory, strings.TrimSpace(next.ErrorSummary) != "")
	}
	// A variant's outcome is its task's, once: a failure to be retried is
	// not one yet.
	if next.PromptVariant != "" && next.NextAttemptAt.IsZero() {
		if err := a.recordOutcome(ctx, r, next); err != nil {
			return err
		}
	}
	if next.Source == store.SourceLoop && next.IdeaID != "" {
		// What the loop's backoff of the idea reads (loop.Backoff).
		if next.Status == task.Completed {
			r.Stats.QueueIdeaSucceeded(b, next.IdeaID)
			// What the idea's later stages are handed (StageOutputs), kept
			// past the task's retention.
			r.Tasks.QueueStageOutput(b, next.IdeaID, store.StageOutput{TaskID: next.ID, Type: next.Type,
				Output: next.Output, Artifact: next.Artifact, CompletedAt: next.CompletedAt}, MaxStageOutputs)
		} else if ideaFailed {
			r.Stats.QueueIdeaFailed(b, next.IdeaID, next.CompletedAt, next.ErrorSummary)
		}
	}
	if next.Status == task.Completed && next.IdeaID != "" {
		r.Outbox.QueueEnqueue(b, store.OutboxItem{
			TaskID: next.ID, IdeaID: next.IdeaID, TaskType: next.Type, CreatedAt: next.CompletedAt, NextAttemptAt: next.CompletedAt,
		}, queued)
	}
	return nil
}

// recordOutcome stores a finished task's prompt A/B outcome and adds it to
// its variant's record (abtest.Arm.Record), once per task.
func (a *App) recordOutcome(ctx context.Context, r Repos, t store.Task) error {
	value := 0.0
	if t.Status == task.Completed {
		value = 1
		if t.ValueScore != nil {
			value = *t.ValueScore
		}
	}
	cost := 0.0
	if t.ResourceCost != nil {
		cost = *t.ResourceCost
	}
	added, err := r.Prompts.RecordOutcome(ctx, store.Outcome{
		TaskID: t.ID, Variant: t.PromptVariant, ValueScore: value, ResourceCost: cost, CreatedAt: t.CompletedAt,
	})
	if err != nil || !added {
		return err
	}
	arm, err := r.Prompts.LockArm(ctx, t.PromptVariant)
	if err != nil {
		return err
	}
	arm.Record(value, cost, t.CompletedAt)
	return r.Prompts.SaveArm(ctx, arm, t.CompletedAt)
}

// Claim hands worker the oldest pending task of the types (any type when
// none is given) with a lease of leaseSeconds (the configured lease when
// nil); ok is false when no pending task matched. Concurrent claims never
// hand out one task twice. With a key, a retry answers what the first
// request answered (the task it claimed, or none) and claims nothing more:
// without one, a worker that lost the answer would hold a task it does not
// know about until the lease ran out. The task records the credential by
// claimed it with: only that credential (or an operator) updates it then.
func (a *App) Claim(ctx context.Context, by task.Reporter, worker string, types []string, leaseSeconds *int, key *idempotency.Request) (store.Task, bool, error) {
	var errs []fault.FieldError
	worker = strings.TrimSpace(worker)
	switch {
	case worker == "":
		errs = append(errs, fault.Field("worker_id", "is required"))
	case utf8.RuneCountInString(worker) > MaxWorkerID:
		errs = append(errs, fault.Field("worker_id", "must be at most %d characters", MaxWorkerID))
	}
	var want []task.Type
	for _, s := range types {
		t, ok := task.ParseType(s)
		if !ok {
			errs = append(errs, fault.Field("task_types", "%q is not a task type", s))
			continue
		}
		if !containsType(want, t) {
			want = append(want, t)
		}
	}
	lease := a.cfg.Lease
	if leaseSeconds != nil {
		if *leaseSeconds < 1 || *leaseSeconds > MaxLeaseSeconds {
			errs = append(errs, fault.Field("lease_seconds", "must be between 1 and %d", MaxLeaseSeconds))
		}
		lease = time.Duration(*leaseSeconds) * time.Second
	}
	if len(errs) > 0 {
		return store.Task{}, false, fault.Validation(errs...)
	}
	var (
		out claim
		// took is set by a claim this call made (not by an answer
		// replayed for its Idempotency-Key).
		took bool
	)
	err := a.keyed.Do(ctx, key, &out, nil, func(r Repos) error {
		out, took = claim{}, false
		cur, err := r.Tasks.NextPending(ctx, want)
		if isNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := task.Claim(cur.Status, cur.WorkerID, worker); err != nil {
			return err
		}
		now := a.now()
		next := claimed(cur, worker, by.ID, lease, now)
		next.UpdatedAt = now
		var (
			b      database.Batch
			queued bool
		)
		r.Tasks.QueueSave(&b, next)
		if err := a.changed(ctx, r, &b, cur, next, true, &queued); err != nil {
			return err
		}
		b.Final() // as Update's
		if err := r.Send(ctx, &b); err != nil {
			return err
		}
		out, took = claim{Task: next, Found: true}, true
		return nil
	})
	if err != nil {
		return store.Task{}, false, wrap("claim a task", err)
	}
	if took {
		a.claims.Inc()
	}
	return out.Task, out.Found, nil
}

// claim is Claim's answer, as an idempotency record keeps it.
type claim struct {
	Task  store.Task
	Found bool
}

// MaxLeaseSeconds bounds a claim's lease (a day).
const MaxLeaseSeconds = 86400

func containsType(ts []task.Type, t task.Type) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// Reaped is what one Reap changed.
type Reaped struct {
	// Requeued and TimedOut are the expired leases: back to pending, or
	// timed out on their last attempt.
	Requeued, TimedOut int
	// Retried are the failed tasks whose retry came due, back to pending.
	Retried int
}

// RetryBatch bounds the retries one Reap makes due; the rest wait for the
// next (the reaper runs every few seconds).
const RetryBatch = 500

// Reap returns every running task whose lease expired to pending, or
// times it out on its last attempt, puts the failed tasks whose retry is
// due back in the queue, and keeps the counters (and for a timeout the
// rollup and the A/B outcome) and the attempts' records in step, in one
// transaction. Every replica may run it at any time: each change is one
// UPDATE whose condition a second reaper finds false.
func (a *App) Reap(ctx context.Context) (Reaped, error) {
	var out Reaped
	err := a.tx(ctx, func(r Repos) error {
		out = Reaped{}
		now := a.now()
		summary := "the worker's lease expired on its last attempt"
		reaped, err := r.Tasks.Reap(ctx, now, a.cfg.MaxAttempts, summary)
		if err != nil {
			return err
		}
		var (
			b      database.Batch
			queued bool // a reaped task never completes: nothing is queued
		)
		for _, next := range reaped {
			cur := next
			cur.Status = task.Running
			if next.Status == task.TimedOut {
				out.TimedOut++
			} else {
				out.Requeued++
				r.Tasks.QueueAddAttempt(&b, store.Attempt{TaskID: next.ID, Attempt: max(next.Attempts, 1), Status: task.Pending,
					Summary: "the worker's lease expired: the task went back to the queue", Category: task.CategoryTimeout,
					StartedAt: next.StartedAt, FinishedAt: now})
			}
			if err := a.changed(ctx, r, &b, cur, next, true, &queued); err != nil {
				return err
			}
		}
		retried, err := r.Tasks.Retry(ctx, now, RetryBatch)
		if err != nil {
			return err
		}
		for _, next := range retried {
			cur := next
			cur.Status = task.Failed
			out.Retried++
			if err := a.changed(ctx, r, &b, cur, next, true, &queued); err != nil {
				return err
			}
		}
		return r.Send(ctx, &b)
	})
	if err != nil {
		return Reaped{}, wrap("reap expired leases and due retries", err)
	}
	a.reaps.WithLabelValues(string(task.Pending)).Add(float64(out.Requeued))
	a.reaps.WithLabelValues(string(task.TimedOut)).Add(float64(out.TimedOut))
	return out, nil
}

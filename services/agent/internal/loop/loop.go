// Package loop is the pipeline loop: on the one replica that holds its
// lease, every interval it picks the highest-ROI idea that is not complete
// and has no open task, derives the task type from the idea's stage,
// creates the task, runs it through an executor and, on success, advances
// the idea. Its dependencies are interfaces, so the loop's decisions are
// tested without a database, a portfolio or a subprocess.
package loop

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/executor"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/periodic"
)

// Candidate is an idea the loop may work on, best first as the portfolio
// ranks them (its free-energy score is the ROI estimate).
type Candidate struct {
	IdeaID   string
	Name     string
	Score    float64
	Stage    string
	NextType string
}

// Portfolio is what the loop needs of the portfolio (its gRPC API).
type Portfolio interface {
	// Candidates returns active ideas not yet complete, best score first.
	Candidates(ctx context.Context, limit int) ([]Candidate, error)
	// Stage returns an idea's current stage.
	Stage(ctx context.Context, ideaID string) (string, error)
}

// Tasks is what the loop needs of the agent's own use cases.
type Tasks interface {
	// OpenIdeas reports which of the ideas have an open task (pending,
	// running or needs_decision): the loop leaves those alone.
	OpenIdeas(ctx context.Context, ideaIDs []string) (map[string]bool, error)
	// Create creates a routed task of taskType for the idea.
	Create(ctx context.Context, taskType, direction, ideaID string) (executor.Task, error)
	// Finish records an executor's result on the task: completed or
	// failed (a completion writes the idea's advancement to the outbox in
	// the same transaction).
	Finish(ctx context.Context, taskID string, r executor.Result) error
	// Advance delivers the task's advancement now (idempotent: the outbox
	// delivers it anyway), so the loop can report the idea's new stage.
	Advance(ctx context.Context, taskID string) error
}

// Outcomes of one pass.
const (
	Advanced   = "advanced"
	TaskFailed = "task_failed"
	Planned    = "planned"
	Idle       = "idle"
	Errored    = "error"
)

// Iteration is what one pass did.
type Iteration struct {
	Outcome     string
	IdeaID      string
	Score       float64
	StageBefore string
	TaskType    string
	TaskID      string
	StageAfter  string
	Detail      string
	StartedAt   time.Time
	FinishedAt  time.Time
}

// Recorder keeps iterations, so the loop's status survives restarts and
// any replica can report it.
type Recorder interface {
	Record(ctx context.Context, it Iteration) error
}

// Loop runs passes.
type Loop struct {
	Portfolio Portfolio
	Tasks     Tasks
	Executor  executor.Executor
	Recorder  Recorder
	Clock     clock.Clock
	Log       *zap.Logger
	// Candidates is how many ideas a pass considers (20).
	Candidates int
	// Lead reports whether this replica leads (takes or renews the lease).
	// Pass calls it before a pass and every RenewEvery during one, so a
	// long pass (a slow executor) keeps the lease, and a replica that dies
	// loses it within one lease length.
	Lead       func(ctx context.Context) (bool, error)
	RenewEvery time.Duration
	// OnPass is called after every recorded pass (metrics).
	OnPass func(it Iteration)

	// mu lets one pass run at a time in this process: the background loop
	// and a pass asked for through the API share it.
	mu sync.Mutex
}

// ErrNotLeader is Pass's answer on a replica that does not hold the lease.
var ErrNotLeader = errors.New("another replica leads the pipeline loop")

// Pass runs one pass as the leader: it waits for any pass this process is
// running, takes or renews the lease (ErrNotLeader when another replica
// holds it), and renews it while the pass runs. A dry run needs no lease.
func (l *Loop) Pass(ctx context.Context, dryRun bool) (Iteration, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if dryRun || l.Lead == nil {
		return l.Once(ctx, dryRun)
	}
	ok, err := l.Lead(ctx)
	if err != nil {
		return Iteration{}, fmt.Errorf("take the loop's lease: %w", err)
	}
	if !ok {
		return Iteration{}, ErrNotLeader
	}
	renewCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.renew(renewCtx)
	}()
	defer func() { stop(); <-done }()
	return l.Once(ctx, false)
}

// renew renews the lease every RenewEvery until ctx ends.
func (l *Loop) renew(ctx context.Context) {
	every := l.RenewEvery
	if every <= 0 {
		every = 10 * time.Second
	}
	periodic.After(ctx, every, func() {
		if ok, err := l.Lead(ctx); (err != nil || !ok) && ctx.Err() == nil {
			l.Log.Warn("pipeline loop: could not renew the lease during a pass", zap.Bool("held", ok), zap.Error(err))
		}
	})
}

// Once runs one pass. With dryRun it picks the candidate and reports the
// planned task without creating or running it (and records nothing).
func (l *Loop) Once(ctx context.Context, dryRun bool) (Iteration, error) {
	it := Iteration{StartedAt: l.Clock.Now().UTC()}
	finish := func(outcome, detail string) (Iteration, error) {
		it.Outcome, it.Detail, it.FinishedAt = outcome, detail, l.Clock.Now().UTC()
		if dryRun {
			return it, nil
		}
		if l.Recorder != nil {
			if err := l.Recorder.Record(ctx, it); err != nil {
				return it, fmt.Errorf("record the loop pass: %w", err)
			}
		}
		if l.OnPass != nil {
			l.OnPass(it)
		}
		return it, nil
	}
	limit := l.Candidates
	if limit <= 0 {
		limit = 20
	}
	cands, err := l.Portfolio.Candidates(ctx, limit)
	if err != nil {
		return finish(Errored, "list candidates: "+err.Error())
	}
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.IdeaID
	}
	open, err := l.Tasks.OpenIdeas(ctx, ids)
	if err != nil {
		return finish(Errored, "find open tasks: "+err.Error())
	}
	var pick *Candidate
	for i := range cands {
		if cands[i].NextType != "" && !open[cands[i].IdeaID] {
			pick = &cands[i]
			break
		}
	}
	if pick == nil {
		return finish(Idle, fmt.Sprintf("no eligible idea among %d candidates (complete, or a task is already open)", len(cands)))
	}
	it.IdeaID, it.Score, it.StageBefore, it.TaskType = pick.IdeaID, pick.Score, pick.Stage, pick.NextType
	if dryRun {
		return finish(Planned, fmt.Sprintf("would create a %s task for idea %s at stage %s", pick.NextType, pick.IdeaID, pick.Stage))
	}
	direction := fmt.Sprintf("Move idea %q (%s) on from stage %s: %s task.", pick.Name, pick.IdeaID, pick.Stage, pick.NextType)
	t, err := l.Tasks.Create(ctx, pick.NextType, direction, pick.IdeaID)
	if err != nil {
		return finish(Errored, "create the task: "+err.Error())
	}
	it.TaskID = t.ID
	res, runErr := l.Executor.Run(ctx, t)
	if runErr != nil {
		if ctx.Err() != nil {
			return it, ctx.Err()
		}
		res = executor.Result{Summary: "executor " + l.Executor.Name() + ": " + runErr.Error(), Category: "executor_crash",
			Output: runErr.Error()}
	}
	if !res.Finished {
		if err := l.Tasks.Finish(ctx, t.ID, res); err != nil {
			return finish(Errored, "record the task's result: "+err.Error())
		}
	}
	if !res.Succeeded {
		it.StageAfter = pick.Stage
		return finish(TaskFailed, res.Summary)
	}
	if err := l.Tasks.Advance(ctx, t.ID); err != nil {
		// The outbox delivers it later; the pass itself succeeded.
		l.Log.Warn("pipeline loop: advancing the idea now failed; the outbox retries", zap.String("task_id", t.ID), zap.Error(err))
	}
	stage, err := l.Portfolio.Stage(ctx, pick.IdeaID)
	if err != nil {
		stage = ""
	}
	it.StageAfter = stage
	return finish(Advanced, fmt.Sprintf("%s task completed; idea at %s", pick.NextType, stage))
}

// Run runs a pass every interval while this replica leads, until ctx ends.
// A failing pass is logged and recorded; the loop goes on.
func (l *Loop) Run(ctx context.Context, interval time.Duration) {
	leading := false
	periodic.Run(ctx, interval, func() {
		it, err := l.Pass(ctx, false)
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, ErrNotLeader):
			if leading {
				l.Log.Info("pipeline loop: another replica leads now")
			}
			leading = false
		case err != nil && it.StartedAt.IsZero():
			l.Log.Warn("pipeline loop: lease", zap.Error(err))
			leading = false
		default:
			if !leading {
				l.Log.Info("pipeline loop: this replica leads")
			}
			leading = true
			switch {
			case err != nil:
				l.Log.Warn("pipeline loop: pass failed", zap.Error(err))
			case it.Outcome != Idle:
				l.Log.Info("pipeline loop: pass", zap.String("outcome", it.Outcome), zap.String("idea_id", it.IdeaID),
					zap.String("task_type", it.TaskType), zap.String("task_id", it.TaskID), zap.String("detail", it.Detail))
			}
		}
	})
}

// Package loop is the pipeline loop: on the one replica that holds its
// lease, every interval it picks the highest-ROI idea that is not complete,
// has no open task and is not backing off after failed tasks, derives the task type from the idea's stage,
// creates the task, runs it through an executor and, on success, advances
// the idea. A pass stops the moment a renewal of the lease fails or finds
// it taken. Its dependencies are interfaces, so the loop's decisions are
// tested without a database, a portfolio or a subprocess.
package loop

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/executor"
	"github.com/foundryhq/foundry/services/agent/internal/task"
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
	// The idea's own words and values: what its task is to achieve and
	// be judged by.
	Description    string
	PotentialValue float64
	EstimatedCost  float64
	Confidence     float64
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
	// Create creates a routed task of c.NextType for the idea c, its
	// context carrying the idea and its earlier stages' outputs; an error
	// wrapping ErrAlreadyOpen when the idea already has an open task the
	// loop opened (another replica opened it since OpenIdeas looked).
	Create(ctx context.Context, c Candidate, direction string) (executor.Task, error)
	// Orphans returns, for those of the ideas that have one, their open
	// loop task that no pass runs: pending, left by a pass that a restart
	// or a lost lease ended, or by a switch of executor.
	Orphans(ctx context.Context, ideaIDs []string) (map[string]string, error)
	// Adopt takes an orphan over for this pass; an error wrapping
	// ErrAlreadyOpen when it is no longer one (a worker claimed it).
	Adopt(ctx context.Context, taskID string) (executor.Task, error)
	// Finish records an executor's result on the task: completed or
	// failed (a completion writes the idea's advancement to the outbox in
	// the same transaction).
	Finish(ctx context.Context, taskID string, r executor.Result) error
	// Advance delivers the task's advancement now (idempotent: the outbox
	// delivers it anyway), so the loop can report the idea's new stage.
	Advance(ctx context.Context, taskID string) error
	// Failures reports, for those of the ideas whose loop tasks failed
	// since their last success, how many in a row and when the last did.
	Failures(ctx context.Context, ideaIDs []string) (map[string]Failures, error)
	// Abandon is told that the pass stopped before the task's run ended
	// (this replica lost the lease, or is shutting down); r is what the
	// run left (its output so far), failed, with the reason as its
	// summary. A task the loop runs itself should be failed with it, so
	// its idea is free for the next leader instead of blocked by a task
	// nobody runs; a task left to an external worker stays the worker's.
	Abandon(ctx context.Context, taskID string, r executor.Result) error
}

// Failures is how an idea's loop tasks have been failing: Count in a row
// since the last success, the last at LastAt.
type Failures struct {
	Count  int
	LastAt time.Time
}

// Backoff is how long the loop leaves an idea alone after its tasks
// failed: Base after the first failure, doubled for each one after, at
// most Max. Without it, one idea whose task fails every time (a provider
// answering 429) kept the top of the ranking and took every pass: 8
// failures in 14 s while every other idea starved.
type Backoff struct {
	Base time.Duration
	Max  time.Duration
}

// DefaultBackoff leaves a failing idea a minute, then 2, 4, … up to an
// hour.
var DefaultBackoff = Backoff{Base: time.Minute, Max: time.Hour}

// Wait is how long after its last failure an idea that failed n times in
// a row waits (0 for none).
func (b Backoff) Wait(n int) time.Duration {
	if n <= 0 || b.Base <= 0 {
		return 0
	}
	w := b.Base
	for i := 1; i < n && w < b.Max; i++ {
		w *= 2
	}
	return min(w, b.Max)
}

// ErrAlreadyOpen is what Tasks.Create's error wraps when the idea already
// has an open task the loop opened: the schema lets one in, so a replica
// that still believes it leads after another took over cannot open a
// second.
var ErrAlreadyOpen = errors.New("the idea already has an open task")

// Outcomes of one pass.
const (
	Advanced   = "advanced"
	TaskFailed = "task_failed"
	Planned    = "planned"
	Idle       = "idle"
	Errored    = "error"
	// Running is no pass's end: a run-once answered before its pass ended
	// shows it so.
	Running = "running"
)

// Iteration is what one pass did.
type Iteration struct {
	// ID names a real pass from its start (a run-once answered before the
	// pass ends gives it, and the recorded pass keeps it); "" on a dry run.
	ID          string
	Outcome     string
	IdeaID      string
	Score       float64
	StageBefore string
	TaskType    string
	TaskID      string
	StageAfter  string
	// Adopted is true when the pass ran a task an earlier pass left
	// (Tasks.Orphans) rather than opening one.
	Adopted bool
	// BackingOff counts the candidates the pass left alone because their
	// tasks kept failing (Backoff); it is not stored with the pass.
	BackingOff int
	Detail     string
	StartedAt  time.Time
	FinishedAt time.Time
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
	// Backoff is how long an idea whose tasks failed is left alone (the
	// service's default is DefaultBackoff; zero: not at all).
	Backoff Backoff
	// Lead reports whether this replica leads (takes or renews the lease
	// for Lease). Pass calls it before a pass and every RenewEvery during
	// one, so a long pass (a slow executor) keeps the lease, and a replica
	// that dies loses it within one lease length. A renewal during a pass
	// that fails or finds the lease taken stops the pass at once (its
	// context is cancelled), and so does one that has not answered when
	// the lease may have expired: this replica may no longer lead, and
	// another may already run a pass.
	Lead func(ctx context.Context) (bool, error)
	// Lease is how long a take or renewal holds the lease (3 ×
	// RenewEvery when zero): the lease lasts at least that long after the
	// call was sent, since the database dates it when it arrives.
	Lease time.Duration
	// RenewEvery is the time between renewals during a pass (10 s); well
	// under Lease, so that a slow renewal still answers in time.
	RenewEvery time.Duration
	// OnPass is called after every recorded pass (metrics).
	OnPass func(it Iteration)

	// mu lets one pass run at a time in this process: the background loop
	// and a pass asked for through the API share it, and neither waits
	// for it (ErrPassRunning).
	mu sync.Mutex
	// current is the real pass this process is running; nil between.
	current atomic.Pointer[Iteration]
}

// ErrPassRunning is Pass's answer while this process runs a real pass.
// A pass asked for meanwhile is refused at once, not queued: a queued
// request waited out the running pass (an external worker's may take an
// hour), timed out at the gateway, and then ran a pass for a caller long
// gone.
var ErrPassRunning = errors.New("a pipeline loop pass is already running")

// Current returns the real pass this process is running, as it started
// (its id and start), and whether there is one.
func (l *Loop) Current() (Iteration, bool) {
	if it := l.current.Load(); it != nil {
		return *it, true
	}
	return Iteration{}, false
}

// ErrNotLeader is Pass's answer on a replica that does not hold the lease.
var ErrNotLeader = errors.New("another replica leads the pipeline loop")

// ErrLeaseLost is what Pass's error wraps when the pass was stopped
// because a renewal of the lease failed, found it taken, or did not answer
// before the lease may have expired.
var ErrLeaseLost = errors.New("lost the pipeline loop's lease")

// settleTimeout bounds the writes a pass makes after its context may have
// been cancelled: a run's result, an abandoned task, the pass's record.
const settleTimeout = 10 * time.Second

// Pass runs one pass as the leader: ErrPassRunning at once while this
// process runs one (a dry run only reads, and runs beside it), otherwise
// it takes or renews the lease (ErrNotLeader when another replica holds
// it), and renews it while the pass runs. The pass runs under its
// own context, cancelled the moment a renewal fails or finds the lease
// taken, or once the lease may have expired without a renewal answering;
// it then stops where it is (a running command is killed, see Once) and
// Pass returns an error wrapping ErrLeaseLost. A lost renewal that only
// logged would leave a pass that may run a command for ten minutes going
// on as a second leader. A dry run needs no lease.
func (l *Loop) Pass(ctx context.Context, dryRun bool) (Iteration, error) {
	if dryRun {
		return l.Once(ctx, true)
	}
	if !l.mu.TryLock() {
		return Iteration{}, ErrPassRunning
	}
	defer l.mu.Unlock()
	if l.Lead == nil {
		return l.Once(ctx, false)
	}
	sent := time.Now()
	ok, err := l.Lead(ctx)
	if err != nil {
		return Iteration{}, fmt.Errorf("take the loop's lease: %w", err)
	}
	if !ok {
		return Iteration{}, ErrNotLeader
	}
	passCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.renew(passCtx, stop, sent.Add(l.lease()))
	}()
	it, err := l.Once(passCtx, false)
	stop(nil)
	<-done
	return it, err
}

// renewEvery is RenewEvery or its default.
func (l *Loop) renewEvery() time.Duration {
	if l.RenewEvery <= 0 {
		return 10 * time.Second
	}
	return l.RenewEvery
}

// lease is Lease or its default.
func (l *Loop) lease() time.Duration {
	if l.Lease <= 0 {
		return 3 * l.renewEvery()
	}
	return l.Lease
}

// renew renews the lease every RenewEvery until ctx ends, and cancels ctx
// through lost, with a cause wrapping ErrLeaseLost, when a renewal fails
// or finds the lease taken, or when heldUntil (a lease's length after the
// last successful take or renewal was sent) passes before one answers.
// Time here is this process's (monotonic) clock, which only measures how
// long since a call was sent; the lease itself is dated by the database.
func (l *Loop) renew(ctx context.Context, lost context.CancelCauseFunc, heldUntil time.Time) {
	periodic.After(ctx, l.renewEvery(), func() {
		sent := time.Now()
		if !sent.Before(heldUntil) { // this process was paused, or starved
			l.Log.Warn("pipeline loop: the lease may have expired before a renewal; stopping the pass")
			lost(fmt.Errorf("%w: it may have expired before a renewal", ErrLeaseLost))
			return
		}
		// A slow renewal is waited for until the lease it renews may
		// expire: an answer after that could not tell whether another
		// replica led meanwhile.
		rctx, cancel := context.WithDeadline(ctx, heldUntil)
		ok, err := l.Lead(rctx)
		cancel()
		if ctx.Err() != nil {
			return // the pass ended meanwhile; nothing to stop
		}
		switch {
		case err != nil:
			l.Log.Warn("pipeline loop: could not renew the lease; stopping the pass", zap.Error(err))
			lost(fmt.Errorf("%w: renewing it failed: %w", ErrLeaseLost, err))
		case !ok:
			l.Log.Warn("pipeline loop: another replica holds the lease now; stopping the pass")
			lost(fmt.Errorf("%w: another replica holds it", ErrLeaseLost))
		default:
			heldUntil = sent.Add(l.lease())
		}
	})
}

// settling is a context for the writes a pass still owes once its own
// context may be cancelled: it keeps ctx's values, not its cancellation,
// and is bounded by settleTimeout.
func settling(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
}

// Once runs one pass. With dryRun it picks the candidate and reports the
// planned task without creating or running it (and records nothing).
//
// When ctx is cancelled (the lease was lost, the process is stopping) the
// pass stops at its next step: it creates nothing more, a run in progress
// is cut short (the executor kills its command) and its task handed to
// Tasks.Abandon, and the pass is recorded as an error naming the cause,
// which Once returns (context.Cause). A run that ended on its own is
// recorded on its task even so: its result is real, and a task left
// unfinished would keep its idea blocked.
func (l *Loop) Once(ctx context.Context, dryRun bool) (Iteration, error) {
	// Microseconds, as the store keeps them: a run-once answered 202
	// shows the start a later read of the recorded pass returns.
	it := Iteration{StartedAt: l.Clock.Now().UTC().Truncate(time.Microsecond)}
	if !dryRun {
		it.ID = newPassID()
		l.current.Store(&Iteration{ID: it.ID, Outcome: Running, StartedAt: it.StartedAt})
		defer l.current.Store(nil)
		if started, ok := ctx.Value(startedKey{}).(func(Iteration)); ok {
			started(it)
		}
	}
	finish := func(outcome, detail string) (Iteration, error) {
		var stopped error
		if outcome == Errored && ctx.Err() != nil {
			// The step failed because the pass was stopped: say why.
			stopped = context.Cause(ctx)
			detail = "the pass was stopped: " + stopped.Error() + " (" + detail + ")"
		}
		if it.Adopted {
			detail = "ran task " + it.TaskID + ", which an earlier pass left open: " + detail
		}
		it.Outcome, it.Detail, it.FinishedAt = outcome, detail, l.Clock.Now().UTC().Truncate(time.Microsecond)
		if dryRun {
			return it, stopped
		}
		// The record is history, not leadership: it is written even when
		// the pass was stopped, so the status shows what happened.
		rctx, cancel := settling(ctx)
		defer cancel()
		if l.Recorder != nil {
			if err := l.Recorder.Record(rctx, it); err != nil {
				if stopped != nil {
					return it, fmt.Errorf("%w (and recording the pass failed: %w)", stopped, err)
				}
				return it, fmt.Errorf("record the loop pass: %w", err)
			}
		}
		if l.OnPass != nil {
			l.OnPass(it)
		}
		return it, stopped
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
	orphans, err := l.Tasks.Orphans(ctx, ids)
	if err != nil {
		return finish(Errored, "find orphaned tasks: "+err.Error())
	}
	failing, err := l.Tasks.Failures(ctx, ids)
	if err != nil {
		return finish(Errored, "find failing ideas: "+err.Error())
	}
	now := l.Clock.Now()
	var (
		pick       *Candidate
		waiting    int
		soonest    time.Time
		soonestFor string
	)
	// Every candidate is looked at, past the pick too, so the pass counts
	// all those backing off (Iteration.BackingOff).
	for i := range cands {
		c := &cands[i]
		if c.NextType == "" || (open[c.IdeaID] && orphans[c.IdeaID] == "") {
			continue
		}
		if f, ok := failing[c.IdeaID]; ok && l.Backoff.Wait(f.Count) > 0 {
			if until := f.LastAt.Add(l.Backoff.Wait(f.Count)); now.Before(until) {
				waiting++
				if soonest.IsZero() || until.Before(soonest) {
					soonest, soonestFor = until, c.IdeaID
				}
				continue
			}
		}
		if pick == nil {
			pick = c
		}
	}
	it.BackingOff = waiting
	if pick == nil {
		detail := fmt.Sprintf("no eligible idea among %d candidates (complete, or a task is already open)", len(cands))
		if waiting > 0 {
			detail = fmt.Sprintf("no eligible idea among %d candidates: %d backing off after failed tasks (idea %s until %s), the rest "+
				"complete or with a task open", len(cands), waiting, soonestFor, soonest.UTC().Format(time.RFC3339))
		}
		return finish(Idle, detail)
	}
	it.IdeaID, it.Score, it.StageBefore, it.TaskType = pick.IdeaID, pick.Score, pick.Stage, pick.NextType
	if dryRun {
		return finish(Planned, fmt.Sprintf("would create a %s task for idea %s at stage %s", pick.NextType, pick.IdeaID, pick.Stage))
	}
	if ctx.Err() != nil {
		return finish(Errored, "before creating the task")
	}
	var t executor.Task
	if orphan := orphans[pick.IdeaID]; orphan != "" {
		// A task no pass runs would keep its idea blocked for good: this
		// pass runs it instead of opening another.
		t, err = l.Tasks.Adopt(ctx, orphan)
		it.Adopted = err == nil
	} else {
		// The direction is an instruction, so it holds only what Foundry
		// wrote: the idea's name is its creator's text and reaches the
		// agent only as data, in the context's idea (the prompt fences it).
		direction := fmt.Sprintf("Move idea %s on from stage %s: %s task.", pick.IdeaID, pick.Stage, pick.NextType)
		t, err = l.Tasks.Create(ctx, *pick, direction)
	}
	if errors.Is(err, ErrAlreadyOpen) {
		// Another replica opened the idea's task since OpenIdeas looked: it
		// leads now (or led until just now). Nothing for this pass to do,
		// and nothing wrong with this replica.
		return finish(Idle, fmt.Sprintf("idea %s already has an open task: another replica opened it, or a worker claimed it", pick.IdeaID))
	}
	if err != nil {
		return finish(Errored, "create the task: "+err.Error())
	}
	it.TaskID = t.ID
	res, runErr := l.Executor.Run(ctx, t)
	if runErr != nil && ctx.Err() != nil {
		l.abandon(ctx, t, res)
		return finish(Errored, "the "+pick.NextType+" task's run was cut short")
	}
	if runErr != nil {
		res = executor.Result{Summary: "executor " + l.Executor.Name() + ": " + runErr.Error(), Category: "executor_crash",
			Output: runErr.Error()}
	}
	// From here on the run is over: its result is recorded whatever
	// became of the pass's context.
	sctx, cancel := settling(ctx)
	defer cancel()
	if !res.Finished {
		if err := l.Tasks.Finish(sctx, t.ID, res); err != nil {
			return finish(Errored, "record the task's result: "+err.Error())
		}
	}
	if !res.Succeeded {
		it.StageAfter = pick.Stage
		return finish(TaskFailed, res.Summary)
	}
	if err := l.Tasks.Advance(sctx, t.ID); err != nil {
		// The outbox delivers it later; the pass itself succeeded.
		l.Log.Warn("pipeline loop: advancing the idea now failed; the outbox retries", zap.String("task_id", t.ID), zap.Error(err))
	}
	stage, err := l.Portfolio.Stage(sctx, pick.IdeaID)
	if err != nil {
		stage = ""
	}
	it.StageAfter = stage
	return finish(Advanced, fmt.Sprintf("%s task completed; idea at %s", pick.NextType, stage))
}

// abandon hands the task whose run ctx's end cut short to Tasks.Abandon,
// failed with the cause, keeping what the run printed.
func (l *Loop) abandon(ctx context.Context, t executor.Task, res executor.Result) {
	summary := "the pipeline loop stopped the run: " + context.Cause(ctx).Error()
	res.Succeeded, res.Finished, res.Summary, res.Category = false, false, summary, task.CategoryExecutorCrash
	if res.Output == "" {
		res.Output = summary
	} else {
		res.Output += "\n" + summary
	}
	sctx, cancel := settling(ctx)
	defer cancel()
	if err := l.Tasks.Abandon(sctx, t.ID, res); err != nil {
		l.Log.Warn("pipeline loop: could not record the stopped run on its task; the reaper returns it when its lease expires",
			zap.String("task_id", t.ID), zap.Error(err))
	}
}

// Run runs a pass every interval while this replica leads, until ctx ends.
// A failing pass is logged and recorded; the loop goes on.
func (l *Loop) Run(ctx context.Context, interval time.Duration) {
	leading := false
	periodic.Run(ctx, interval, func() {
		it, err := l.Pass(ctx, false)
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, ErrPassRunning):
			// A pass asked for through the API runs: this interval's is it.
		case errors.Is(err, ErrNotLeader):
			if leading {
				l.Log.Info("pipeline loop: another replica leads now")
			}
			leading = false
		case errors.Is(err, ErrLeaseLost):
			// Logged by renew as it happened; the next pass asks again.
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

type startedKey struct{}

// WithStarted returns ctx that makes a real pass run with it call started
// with its iteration (its id and start) before the pass does anything
// else: a caller that will not wait for the end (a run-once answered 202)
// learns which pass to look for.
func WithStarted(ctx context.Context, started func(Iteration)) context.Context {
	return context.WithValue(ctx, startedKey{}, started)
}

// newPassID is a random pass id: 16 bytes, hex.
func newPassID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

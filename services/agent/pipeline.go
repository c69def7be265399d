package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/agent/internal/executor"
	"github.com/foundryhq/foundry/services/agent/internal/handler"
	"github.com/foundryhq/foundry/services/agent/internal/loop"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/lease"
)

// Executors the loop can run tasks with.
const (
	executorExternal = "external"
	executorExec     = "exec"
)

// pipeline is the pipeline loop as the service runs it: the loop, wired to
// the agent's use cases, the portfolio and an executor, plus what the
// status RPC and /metrics report of it.
type pipeline struct {
	loop     *loop.Loop
	uc       *usecase.App
	holder   string
	enabled  bool
	interval time.Duration
	executor string
	running  atomic.Bool
	leading  prometheus.Gauge

	// life ends when the process stops (serve): passes asked for through
	// the API run under it, not under their request, and serve waits for
	// them (asked counts them), so a stop cuts a pass short and records it
	// instead of leaving its task to nobody.
	life   context.Context
	end    context.CancelFunc
	askMu  sync.Mutex
	asked  sync.WaitGroup
	closed bool
}

// pipelineConfig is what newPipeline needs of the settings.
type pipelineConfig struct {
	Enabled         bool
	Interval        time.Duration
	Executor        string
	ExecTimeout     time.Duration
	ExecDir         string
	ExternalTimeout time.Duration
	// RunOnceWait is how long a run-once request waits for its pass
	// before it answers 202 (handler.Handler.RunLoopOnce).
	RunOnceWait time.Duration
	// Backoff is how long the loop leaves a failing idea alone.
	Backoff loop.Backoff
}

func (c pipelineConfig) validate() error {
	var errs []error
	if c.Interval <= 0 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_LOOP_INTERVAL: want a positive duration"))
	}
	if c.Executor != executorExternal && c.Executor != executorExec {
		errs = append(errs, fmt.Errorf("FOUNDRY_AGENT_LOOP_EXECUTOR: want %s or %s, got %q", executorExternal, executorExec, c.Executor))
	}
	if c.Backoff.Base < 0 || c.Backoff.Max < c.Backoff.Base {
		errs = append(errs, errors.New("FOUNDRY_AGENT_LOOP_BACKOFF and FOUNDRY_AGENT_LOOP_BACKOFF_MAX: want 0 (no backoff) or more, "+
			"and a maximum at least the base"))
	}
	if c.ExecTimeout <= 0 || c.ExternalTimeout <= 0 || c.RunOnceWait <= 0 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_EXEC_TIMEOUT, FOUNDRY_AGENT_EXTERNAL_TIMEOUT and FOUNDRY_AGENT_RUN_ONCE_WAIT: want positive durations"))
	}
	return errors.Join(errs...)
}

// loopWorker is the worker id under which the loop claims the tasks it
// runs itself (the exec executor).
const loopWorker = "pipeline-loop"

func newPipeline(cfg pipelineConfig, uc *usecase.App, ideas loop.Portfolio, log *zap.Logger, reg prometheus.Registerer) *pipeline {
	p := &pipeline{uc: uc, holder: lease.HolderID("agent"), enabled: cfg.Enabled, interval: cfg.Interval, executor: cfg.Executor}
	p.life, p.end = context.WithCancel(context.Background())
	tasks := loopTasks{uc: uc}
	var ex executor.Executor
	switch cfg.Executor {
	case executorExec:
		ex = executor.Exec{Timeout: cfg.ExecTimeout, Dir: cfg.ExecDir}
		// The loop runs the task itself: it is created claimed, with a lease
		// outlasting the run, so neither a worker nor the reaper takes it.
		tasks.claimAs, tasks.lease = loopWorker, cfg.ExecTimeout+time.Minute
	default:
		ex = executor.External{Tasks: taskReader{uc: uc}, Timeout: cfg.ExternalTimeout}
	}
	passes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "foundry_agent_loop_passes_total",
		Help: "Pipeline loop passes this replica ran, by outcome (advanced, task_failed, idle, error).",
	}, []string{"outcome"})
	p.leading = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "foundry_agent_loop_leader",
		Help: "1 while this replica holds the pipeline loop's lease.",
	})
	last := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "foundry_agent_loop_last_pass_timestamp_seconds",
		Help: "When this replica's last pipeline loop pass finished (Unix seconds).",
	})
	backingOff := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "foundry_agent_loop_ideas_backing_off",
		Help: "Candidates this replica's last pipeline loop pass left alone because their loop tasks kept failing (the per-idea backoff).",
	})
	// The series exist from the start, so increase() sees a first error.
	for _, o := range []string{loop.Advanced, loop.TaskFailed, loop.Idle, loop.Errored} {
		passes.WithLabelValues(o)
	}
	for _, c := range []prometheus.Collector{passes, p.leading, last, backingOff} {
		reg.MustRegister(c)
	}
	ttl := 3 * cfg.Interval
	p.loop = &loop.Loop{
		Portfolio: ideas, Tasks: tasks, Executor: ex, Clock: clock.Real{}, Log: log, Backoff: cfg.Backoff,
		Recorder: recorder{uc: uc, holder: p.holder},
		Lead: func(ctx context.Context) (bool, error) {
			ok, err := uc.LeadLoop(ctx, p.holder, ttl)
			if ok && err == nil {
				p.leading.Set(1)
			} else {
				p.leading.Set(0)
			}
			return ok, err
		},
		Lease:      ttl,
		RenewEvery: cfg.Interval,
		OnPass: func(it loop.Iteration) {
			passes.WithLabelValues(it.Outcome).Inc()
			last.Set(float64(it.FinishedAt.UnixNano()) / 1e9)
			if it.Outcome != loop.Errored {
				backingOff.Set(float64(it.BackingOff))
			}
		},
	}
	return p
}

// serve runs the loop while it is enabled, until ctx ends; then it gives
// the lease up, so another replica takes over at once, stops the passes
// asked for through the API and waits for them to record how they ended
// (each settles within the loop's settle timeout).
func (p *pipeline) serve(ctx context.Context) {
	if p.enabled {
		p.running.Store(true)
		p.loop.Run(ctx, p.interval)
		p.running.Store(false)
	} else {
		<-ctx.Done()
	}
	p.askMu.Lock()
	p.closed = true
	p.askMu.Unlock()
	p.end()
	p.asked.Wait()
	_ = p.uc.ReleaseLoop(context.WithoutCancel(ctx), p.holder)
	p.leading.Set(0)
}

// Status implements handler.Loop: running is true while the loop runs
// here, or a pass does.
func (p *pipeline) Status(ctx context.Context) (handler.LoopStatus, error) {
	rep, err := p.uc.Loop(ctx)
	if err != nil {
		return handler.LoopStatus{}, err
	}
	_, passing := p.loop.Current()
	return handler.LoopStatus{
		Enabled: p.enabled, Running: p.running.Load() || passing, Interval: p.interval, Executor: p.executor,
		Holder: p.holder, Report: rep,
	}, nil
}

// RunOnce implements handler.Loop. The pass runs to its end even when the
// caller goes away (stopping it is for the lease's loss or the process's
// stop, not a client's disconnect); its record reports it either way. A
// pass while another runs here is a conflict at once, naming it; so is
// a pass stopped because this replica lost the lease, naming the new
// leader.
func (p *pipeline) RunOnce(ctx context.Context, dryRun bool) (loop.Iteration, error) {
	p.askMu.Lock()
	if p.closed {
		p.askMu.Unlock()
		return loop.Iteration{}, fault.New(fault.Unavailable, "the agent is stopping: run the pass on another replica, or after the restart")
	}
	p.asked.Add(1)
	p.askMu.Unlock()
	defer p.asked.Done()
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	defer context.AfterFunc(p.life, cancel)()
	it, err := p.loop.Pass(pctx, dryRun)
	switch {
	case errors.Is(err, loop.ErrPassRunning):
		cur, _ := p.loop.Current()
		return it, fault.New(fault.Conflict, "a pipeline loop pass is already running on this replica (pass %s, since %s): GET /api/agent/loop shows it "+
			"when it ends; a dry run does not wait for it", cur.ID, cur.StartedAt.Format(time.RFC3339))
	case errors.Is(err, loop.ErrNotLeader):
		return it, fault.New(fault.Conflict, "the pipeline loop runs on %s now; a pass runs only where its lease is held", p.leader(ctx))
	case errors.Is(err, loop.ErrLeaseLost):
		return it, fault.New(fault.Conflict, "the pass was stopped: %v; the pipeline loop runs on %s now", err, p.leader(ctx))
	}
	return it, err
}

// leader names the replica holding the loop's lease, for an answer.
func (p *pipeline) leader(ctx context.Context) string {
	rep, err := p.uc.Loop(ctx)
	if err == nil && rep.Leader != "" {
		return rep.Leader
	}
	return "another replica"
}

// loopTasks adapts the use cases to what the loop needs of its tasks.
type loopTasks struct {
	uc *usecase.App
	// claimAs and lease: the loop claims the tasks it runs itself.
	claimAs string
	lease   time.Duration
}

// OpenIdeas implements loop.Tasks.
func (t loopTasks) OpenIdeas(ctx context.Context, ideaIDs []string) (map[string]bool, error) {
	return t.uc.OpenIdeas(ctx, ideaIDs)
}

// Failures implements loop.Tasks.
func (t loopTasks) Failures(ctx context.Context, ideaIDs []string) (map[string]loop.Failures, error) {
	fs, err := t.uc.IdeaFailures(ctx, ideaIDs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]loop.Failures, len(fs))
	for id, f := range fs {
		out[id] = loop.Failures{Count: f.Failures, LastAt: f.LastAt}
	}
	return out, nil
}

// Create implements loop.Tasks: a routed task whose context names the
// idea and the loop as its source, and carries what the task is for: the
// idea (its name, description and values: what to achieve and be judged
// by) and the outputs of its earlier stages' tasks, oldest first, so each
// step builds on the last. Opened as the loop's (one open per idea).
func (t loopTasks) Create(ctx context.Context, c loop.Candidate, direction string) (executor.Task, error) {
	outs, err := t.uc.StageOutputs(ctx, c.IdeaID)
	if err != nil {
		return executor.Task{}, err
	}
	previous := make([]any, len(outs))
	for i, o := range outs {
		p := map[string]any{"task_id": o.TaskID, "task_type": string(o.Type), "output": o.Output,
			"completed_at": o.CompletedAt.UTC().Format(time.RFC3339Nano)}
		if o.Artifact != "" {
			p["artifact"] = o.Artifact
		}
		previous[i] = p
	}
	st, err := t.uc.Create(ctx, usecase.NewTask{
		Direction: direction, Type: c.NextType, Context: map[string]any{
			"idea_id": c.IdeaID, "source": "pipeline_loop", "stage": c.Stage, "previous": previous,
			"idea": map[string]any{"name": c.Name, "description": c.Description, "potential_value": c.PotentialValue,
				"estimated_cost": c.EstimatedCost, "confidence": c.Confidence},
		},
		ClaimedBy: t.claimAs, Lease: t.lease, Loop: true,
	})
	if errors.Is(err, store.ErrLoopTaskOpen) {
		return executor.Task{}, fmt.Errorf("%w: %w", loop.ErrAlreadyOpen, err)
	}
	if err != nil {
		return executor.Task{}, err
	}
	return executorTask(st), nil
}

func executorTask(st store.Task) executor.Task {
	return executor.Task{ID: st.ID, Type: string(st.Type), Direction: st.Direction, Command: st.Command, Model: st.Model,
		IdeaID: st.IdeaID, Prompt: st.Prompt}
}

// Orphans implements loop.Tasks: the ideas' pending loop tasks. The loop
// runs one pass at a time across replicas, and its own runs are claimed
// (exec) or waited on by the pass that opened them (external), so a
// pending one the pass finds is one nobody drives.
func (t loopTasks) Orphans(ctx context.Context, ideaIDs []string) (map[string]string, error) {
	return t.uc.PendingLoopTasks(ctx, ideaIDs)
}

// Adopt implements loop.Tasks: claimed as the loop's own when it runs
// it here, as it is when a worker is to.
func (t loopTasks) Adopt(ctx context.Context, taskID string) (executor.Task, error) {
	st, err := t.uc.Adopt(ctx, taskID, t.claimAs, t.lease)
	if errors.Is(err, usecase.ErrNotAdoptable) {
		return executor.Task{}, fmt.Errorf("%w: %w", loop.ErrAlreadyOpen, err)
	}
	if err != nil {
		return executor.Task{}, err
	}
	return executorTask(st), nil
}

// Finish implements loop.Tasks: completed, or failed with the executor's
// diagnosis (timed_out when it ran out of time).
func (t loopTasks) Finish(ctx context.Context, taskID string, r executor.Result) error {
	return t.finish(ctx, taskID, r, false)
}

// finish records r on the task; stopped says the loop cut the run short
// itself, which is no failure of the idea's (usecase.Patch.Stopped).
func (t loopTasks) finish(ctx context.Context, taskID string, r executor.Result, stopped bool) error {
	status, output := string(task.Completed), r.Output
	rep := r.Report
	p := usecase.Patch{Status: &status, Output: &output, Stopped: stopped, ValueScore: rep.ValueScore,
		ResourceCost: rep.ResourceCost, TokensIn: rep.TokensIn, TokensOut: rep.TokensOut, CostUSD: rep.CostUSD, Artifact: rep.Artifact}
	if t.claimAs != "" {
		p.WorkerID = &t.claimAs
	}
	if !r.Succeeded {
		status = string(task.Failed)
		if r.Category == task.CategoryTimeout {
			status = string(task.TimedOut)
		}
		summary, category := r.Summary, r.Category
		if summary == "" {
			summary = "the executor reported a failure without a summary"
		}
		p.ErrorSummary = &summary
		if category != "" {
			p.ErrorCategory = &category
		}
	}
	_, err := t.uc.Update(ctx, taskID, p)
	if fault.KindOf(err) == fault.Invalid && rep != (executor.Report{}) {
		// The command's own report is what failed validation (a negative
		// cost, say); the outcome it had must land all the same, or the
		// idea's task would stay open with nobody to finish it.
		output += "\nfoundry: the command's result file was ignored: " + err.Error()
		p.ValueScore, p.ResourceCost, p.TokensIn, p.TokensOut, p.CostUSD, p.Artifact = nil, nil, nil, nil, nil, nil
		_, err = t.uc.Update(ctx, taskID, p)
	}
	return err
}

// Advance implements loop.Tasks.
func (t loopTasks) Advance(ctx context.Context, taskID string) error {
	return t.uc.DeliverTask(ctx, taskID)
}

// Abandon implements loop.Tasks: a task the loop claimed to run itself
// (the exec executor) is failed with r, since its command was killed and
// nothing else would ever run it; a task left to an external worker is
// left to it (the worker may well finish it, and the idea stays open
// until then).
func (t loopTasks) Abandon(ctx context.Context, taskID string, r executor.Result) error {
	if t.claimAs == "" {
		return nil
	}
	return t.finish(ctx, taskID, r, true)
}

// taskReader lets the external executor read a task's state.
type taskReader struct{ uc *usecase.App }

// TaskStatus implements executor.Reader.
func (r taskReader) TaskStatus(ctx context.Context, id string) (executor.Status, error) {
	t, err := r.uc.Get(ctx, id)
	if err != nil {
		return executor.Status{}, err
	}
	s := executor.Status{Status: string(t.Status), Output: t.Output, Summary: t.ErrorSummary, Category: t.ErrorCategory}
	if t.Duration != nil {
		s.Duration = time.Duration(*t.Duration * float64(time.Second))
	}
	return s, nil
}

// recorder keeps the loop's passes in the agent's schema.
type recorder struct {
	uc     *usecase.App
	holder string
}

// Record implements loop.Recorder.
func (r recorder) Record(ctx context.Context, it loop.Iteration) error {
	return r.uc.RecordLoopPass(ctx, store.LoopPass{Holder: r.holder, Iteration: it})
}

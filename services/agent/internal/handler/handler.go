// Package handler implements the agent service's gRPC API: it maps proto
// messages to the use cases and the pipeline loop and back, and nothing
// more.
package handler

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	"github.com/foundryhq/foundry/services/agent/internal/loop"
	"github.com/foundryhq/foundry/services/agent/internal/metrics"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/paging"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// Handler serves foundry.agent.v1.AgentService.
type Handler struct {
	agentv1.UnimplementedAgentServiceServer

	uc          *usecase.App
	loop        Loop
	runOnceWait time.Duration
}

// Loop is the pipeline loop as the service runs it.
type Loop interface {
	Status(ctx context.Context) (LoopStatus, error)
	// RunOnce runs one pass now (fault.Conflict while another replica
	// leads).
	RunOnce(ctx context.Context, dryRun bool) (loop.Iteration, error)
}

// LoopStatus is this replica's loop configuration and the stored report.
type LoopStatus struct {
	Enabled  bool
	Running  bool
	Interval time.Duration
	Executor string
	// Holder names this replica in the loop's lease.
	Holder string
	Report usecase.LoopReport
}

// New returns a Handler over the use cases and the loop; runOnceWait is how
// long a run-once waits for its pass before answering 202.
func New(uc *usecase.App, l Loop, runOnceWait time.Duration) *Handler {
	return &Handler{uc: uc, loop: l, runOnceWait: runOnceWait}
}

func optTime(t time.Time) *wrapperspb.StringValue {
	if t.IsZero() {
		return nil
	}
	return wrapperspb.String(wire.Time(t))
}

func optFloat(f *float64) *wrapperspb.DoubleValue {
	if f == nil {
		return nil
	}
	return wrapperspb.Double(*f)
}

func optInt(v *int32) *int {
	if v == nil {
		return nil
	}
	i := int(*v)
	return &i
}

// contextOf decodes a stored context (a JSON object).
func contextOf(raw string) (*structpb.Struct, error) {
	m := map[string]any{}
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &m); err != nil {
			return nil, fmt.Errorf("decode task context: %w", err)
		}
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil, fmt.Errorf("task context: %w", err)
	}
	return s, nil
}

func toProto(t store.Task) (*agentv1.AgentTask, error) {
	c, err := contextOf(t.Context)
	if err != nil {
		return nil, err
	}
	return &agentv1.AgentTask{
		Id: t.ID, TaskId: t.ID, Direction: t.Direction, TaskType: string(t.Type), Status: status(t.Status),
		Model: t.Model, Executor: t.Executor, Command: t.Command, Tier: t.Tier,
		Output: t.Output, ProgressPct: t.ProgressPct, CurrentStep: t.CurrentStep, DecisionPrompt: t.DecisionPrompt,
		ErrorSummary: wire.OptString(t.ErrorSummary), ErrorCategory: wire.OptString(t.ErrorCategory),
		Context: c, WorkerId: wire.OptString(t.WorkerID), PromptVariant: wire.OptString(t.PromptVariant),
		ValueScore: optFloat(t.ValueScore), ResourceCost: optFloat(t.ResourceCost), DurationSeconds: optFloat(t.Duration),
		CreatedAt: wire.Time(t.CreatedAt), UpdatedAt: wire.Time(t.UpdatedAt),
		StartedAt: optTime(t.StartedAt), CompletedAt: optTime(t.CompletedAt),
		Attempts: int32(t.Attempts), LeaseExpiresAt: optTime(t.LeaseExpiresAt),
		MaxAttempts: int32(t.MaxAttempts), NextAttemptAt: optTime(t.NextAttemptAt), StatusReason: wire.OptString(t.StatusReason),
		TokensIn: optInt32(t.TokensIn), TokensOut: optInt32(t.TokensOut), CostUsd: optFloat(t.CostUSD),
		PromptVersion: optVersion(t.PromptVersion), Prompt: t.Prompt, Artifact: wire.OptString(t.Artifact),
	}, nil
}

func optInt32(v *int64) *wrapperspb.Int32Value {
	if v == nil {
		return nil
	}
	return wrapperspb.Int32(int32(*v))
}

func optInt64(v *int32) *int64 {
	if v == nil {
		return nil
	}
	n := int64(*v)
	return &n
}

func toItem(t store.Task) *agentv1.AgentTaskListItem {
	return &agentv1.AgentTaskListItem{
		Id: t.ID, TaskId: t.ID, Direction: t.Direction, TaskType: string(t.Type), Status: status(t.Status),
		Model: t.Model, Executor: t.Executor, ProgressPct: t.ProgressPct, DecisionPrompt: t.DecisionPrompt,
		ErrorSummary: wire.OptString(t.ErrorSummary), ErrorCategory: wire.OptString(t.ErrorCategory),
		CreatedAt: wire.Time(t.CreatedAt), UpdatedAt: wire.Time(t.UpdatedAt),
		Attempts: int32(t.Attempts), MaxAttempts: int32(t.MaxAttempts), NextAttemptAt: optTime(t.NextAttemptAt),
		StatusReason: wire.OptString(t.StatusReason),
	}
}

func toItems(ts []store.Task) []*agentv1.AgentTaskListItem {
	out := make([]*agentv1.AgentTaskListItem, len(ts))
	for i, t := range ts {
		out[i] = toItem(t)
	}
	return out
}

// CreateTask implements AgentService.CreateTask: 201 with the task.
func (h *Handler) CreateTask(ctx context.Context, req *agentv1.CreateTaskRequest) (*agentv1.CreateTaskResponse, error) {
	var c map[string]any
	if req.GetContext() != nil {
		c = req.GetContext().AsMap()
	}
	// Tasks have no owner, so the key is the credential's that sent it
	// (the Stripe rule: a key is the account's): one caller's key never
	// answers another's create with a task that caller made.
	key, err := idempotency.FromContext(ctx, "task", authz.FromContext(ctx).Actor(), req)
	if err != nil {
		return nil, err
	}
	t, err := h.uc.Create(ctx, usecase.NewTask{Direction: req.GetDirection(), Type: req.GetTaskType(), Context: c, Key: key})
	if err != nil {
		return nil, err
	}
	p, err := toProto(t)
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &agentv1.CreateTaskResponse{Task: p}, nil
}

// ListTasks implements AgentService.ListTasks.
func (h *Handler) ListTasks(ctx context.Context, req *agentv1.ListTasksRequest) (*agentv1.ListTasksResponse, error) {
	page, err := h.uc.List(ctx, usecase.ListQuery{Status: wire.Word(agentv1.TaskStatus_name, req.GetStatus()), Type: req.GetTaskType(), IdeaID: req.GetIdeaId(),
		Limit: optInt(req.Limit), Offset: int(req.GetOffset()), Cursor: req.GetCursor()})
	if err != nil {
		return nil, err
	}
	return &agentv1.ListTasksResponse{Tasks: toItems(page.Tasks),
		Pagination: paging.ByCursor(page.Limit, page.Offset, page.Total, len(page.Tasks), page.Next)}, nil
}

// GetTask implements AgentService.GetTask.
func (h *Handler) GetTask(ctx context.Context, req *agentv1.GetTaskRequest) (*agentv1.GetTaskResponse, error) {
	t, err := h.uc.Get(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	p, err := toProto(t)
	if err != nil {
		return nil, err
	}
	attempts, err := h.uc.Attempts(ctx, t.ID)
	if err != nil {
		return nil, err
	}
	p.AttemptErrors = make([]*agentv1.TaskAttempt, len(attempts))
	for i, a := range attempts {
		p.AttemptErrors[i] = &agentv1.TaskAttempt{Attempt: int32(a.Attempt), Status: status(a.Status),
			ErrorSummary: a.Summary, ErrorCategory: a.Category, WorkerId: wire.OptString(a.WorkerID),
			StartedAt: optTime(a.StartedAt), FinishedAt: wire.Time(a.FinishedAt)}
	}
	return &agentv1.GetTaskResponse{Task: p}, nil
}

// UpdateTask implements AgentService.UpdateTask.
func (h *Handler) UpdateTask(ctx context.Context, req *agentv1.UpdateTaskRequest) (*agentv1.UpdateTaskResponse, error) {
	t, err := h.uc.Update(ctx, req.GetId(), usecase.Patch{
		Status: wire.OptionalWord(agentv1.TaskStatus_name, req.Status), Output: req.Output, Artifact: req.Artifact, ProgressPct: req.ProgressPct, CurrentStep: req.CurrentStep,
		DecisionPrompt: req.DecisionPrompt, ErrorSummary: req.ErrorSummary, ErrorCategory: req.ErrorCategory,
		WorkerID: req.WorkerId, ValueScore: req.ValueScore, ResourceCost: req.ResourceCost,
		TokensIn: optInt64(req.TokensIn), TokensOut: optInt64(req.TokensOut), CostUSD: req.CostUsd,
		By: reporter(ctx),
	})
	if err != nil {
		return nil, err
	}
	p, err := toProto(t)
	if err != nil {
		return nil, err
	}
	return &agentv1.UpdateTaskResponse{Task: p}, nil
}

// ListAttentionTasks implements AgentService.ListAttentionTasks.
func (h *Handler) ListAttentionTasks(ctx context.Context, req *agentv1.ListAttentionTasksRequest) (*agentv1.ListAttentionTasksResponse, error) {
	page, err := h.uc.Attention(ctx, optInt(req.Limit), int(req.GetOffset()))
	if err != nil {
		return nil, err
	}
	return &agentv1.ListAttentionTasksResponse{Tasks: toItems(page.Tasks),
		Pagination: paging.Of(page.Limit, page.Offset, page.Total, len(page.Tasks), "")}, nil
}

// CountTasks implements AgentService.CountTasks.
func (h *Handler) CountTasks(ctx context.Context, _ *agentv1.CountTasksRequest) (*agentv1.CountTasksResponse, error) {
	c, err := h.uc.Count(ctx)
	if err != nil {
		return nil, err
	}
	by := make(map[string]int64, len(c.ByStatus))
	for s, n := range c.ByStatus {
		by[string(s)] = int64(n)
	}
	return &agentv1.CountTasksResponse{Total: int64(c.Total), ByStatus: by}, nil
}

// reporter is the caller as the task rules see it: its credential's id,
// and whether it is an operator (administrators included).
func reporter(ctx context.Context) task.Reporter {
	p := authz.FromContext(ctx)
	return task.Reporter{ID: p.ID, Operator: p.Is(authz.Operator)}
}

// ClaimTask implements AgentService.ClaimTask: 200 with the claimed task,
// or with a null task when none is pending.
func (h *Handler) ClaimTask(ctx context.Context, req *agentv1.ClaimTaskRequest) (*agentv1.ClaimTaskResponse, error) {
	// The key is scoped by the credential and the worker id, so two
	// workers' keys never meet, nor do two credentials'.
	by := reporter(ctx)
	key, err := idempotency.FromContext(ctx, "claim", by.ID+"/"+strings.TrimSpace(req.GetWorkerId()), req)
	if err != nil {
		return nil, err
	}
	t, ok, err := h.uc.Claim(ctx, by, req.GetWorkerId(), req.GetTaskTypes(), optInt(req.LeaseSeconds), key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return &agentv1.ClaimTaskResponse{}, nil
	}
	p, err := toProto(t)
	if err != nil {
		return nil, err
	}
	return &agentv1.ClaimTaskResponse{Task: p}, nil
}

// GetPipelineStatus implements AgentService.GetPipelineStatus.
func (h *Handler) GetPipelineStatus(ctx context.Context, _ *agentv1.GetPipelineStatusRequest) (*agentv1.GetPipelineStatusResponse, error) {
	s, err := h.uc.PipelineStatus(ctx)
	if err != nil {
		return nil, err
	}
	out := &agentv1.GetPipelineStatusResponse{
		Pending: int64(s.Counts.ByStatus[task.Pending]), Running: int64(s.Counts.ByStatus[task.Running]),
		Completed: int64(s.Counts.ByStatus[task.Completed]), Failed: int64(s.Counts.ByStatus[task.Failed]),
		NeedsDecision: int64(s.Counts.ByStatus[task.NeedsDecision]), TimedOut: int64(s.Counts.ByStatus[task.TimedOut]),
		Discarded: int64(s.Counts.ByStatus[task.Discarded]), Cancelled: int64(s.Counts.ByStatus[task.Cancelled]),
		Total: int64(s.Counts.Total), SuccessRate: optFloat(s.SuccessRate),
		Attention: &agentv1.PipelineAttention{Stuck: s.Flags.Stuck, RepeatedFailures: s.Flags.RepeatedFailures,
			LowSuccessRate: s.Flags.LowSuccessRate, Flags: s.Flags.Names},
		GeneratedAt: wire.Time(s.GeneratedAt),
	}
	if s.LongestPending != nil {
		out.LongestPendingSeconds = wrapperspb.Double(s.LongestPending.Seconds())
	}
	return out, nil
}

func bucket(r metrics.Rate) *agentv1.RateBucket {
	return &agentv1.RateBucket{Completed: int64(r.Completed), Failed: int64(r.Failed), Rate: r.Value()}
}

func buckets(m map[string]metrics.Rate) map[string]*agentv1.RateBucket {
	out := make(map[string]*agentv1.RateBucket, len(m))
	for k, r := range m {
		out[k] = bucket(r)
	}
	return out
}

func counts(m map[string]int) map[string]int64 {
	out := make(map[string]int64, len(m))
	for k, n := range m {
		out[k] = int64(n)
	}
	return out
}

func spentByModel(m map[string]usecase.Spent) map[string]*agentv1.ModelUsage {
	out := make(map[string]*agentv1.ModelUsage, len(m))
	for model, s := range m {
		out[model] = &agentv1.ModelUsage{Tasks: s.Tasks, TokensIn: float64(s.TokensIn), TokensOut: float64(s.TokensOut),
			CostUsd: s.CostUSD}
	}
	return out
}

// GetMetrics implements AgentService.GetMetrics.
func (h *Handler) GetMetrics(ctx context.Context, req *agentv1.GetMetricsRequest) (*agentv1.GetMetricsResponse, error) {
	m, err := h.uc.Metrics(ctx, optInt(req.WindowDays))
	if err != nil {
		return nil, err
	}
	return &agentv1.GetMetricsResponse{
		ExecutionTime: &agentv1.ExecutionTime{P50Seconds: optFloat(m.P50), P95Seconds: optFloat(m.P95), SampleCount: int64(m.Samples),
			Exact: m.Exact},
		SuccessRate: &agentv1.SuccessRate{Overall: bucket(m.Overall), ByTaskType: buckets(m.ByType), ByModel: buckets(m.ByModel),
			ByExecutor: buckets(m.ByExecutor)},
		Usage: &agentv1.UsageSummary{
			TasksCreated: int64(m.Usage.TasksCreated), TasksFinished: int64(m.Usage.TasksFinished),
			TotalDurationSeconds: wire.Amount(m.Usage.DurationSeconds), TotalResourceCost: wire.Amount(m.Usage.ResourceCost),
			TotalValueScore: wire.Amount(m.Usage.ValueScore), TasksByModel: counts(m.Usage.ByModel), TasksByExecutor: counts(m.Usage.ByExecutor),
			TokensIn: float64(m.Usage.Spent.TokensIn), TokensOut: float64(m.Usage.Spent.TokensOut), CostUsd: m.Usage.Spent.CostUSD,
			TasksWithUsage: m.Usage.Spent.Tasks, UsageByModel: spentByModel(m.Usage.SpentByModel),
		},
		WindowDays:  int32(m.WindowDays),
		WindowStart: wire.Time(m.Since),
	}, nil
}

// GetPromptABStats implements AgentService.GetPromptABStats.
func (h *Handler) GetPromptABStats(ctx context.Context, _ *agentv1.GetPromptABStatsRequest) (*agentv1.GetPromptABStatsResponse, error) {
	vs, err := h.uc.PromptABStats(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*agentv1.VariantStats, len(vs))
	for i, v := range vs {
		out[i] = &agentv1.VariantStats{
			Variant: v.Arm.Variant, Samples: int64(v.Arm.Samples), TotalValue: v.Arm.SumValue, TotalCost: v.Arm.SumCost,
			Roi: wrapperspb.Double(v.ROI), SelectionProbability: v.Probability, Blocked: v.Blocked, Exploring: v.Exploring,
			TaskType: string(v.TaskType), Version: int32(v.Version), Probe: string(v.Arm.Probe),
		}
	}
	return &agentv1.GetPromptABStatsResponse{Variants: out}, nil
}

// GetDiagnosticsCompleteness implements AgentService.GetDiagnosticsCompleteness.
func (h *Handler) GetDiagnosticsCompleteness(ctx context.Context, _ *agentv1.GetDiagnosticsCompletenessRequest) (*agentv1.GetDiagnosticsCompletenessResponse, error) {
	d, err := h.uc.Diagnostics(ctx)
	if err != nil {
		return nil, err
	}
	return &agentv1.GetDiagnosticsCompletenessResponse{TotalFailed: int64(d.TotalFailed), WithDiagnostics: int64(d.WithDiagnostics),
		MissingPct: d.MissingPct, ByCategory: counts(d.ByCategory)}, nil
}

// GetLoopStatus implements AgentService.GetLoopStatus.
func (h *Handler) GetLoopStatus(ctx context.Context, _ *agentv1.GetLoopStatusRequest) (*agentv1.GetLoopStatusResponse, error) {
	st, err := h.loop.Status(ctx)
	if err != nil {
		return nil, err
	}
	resp := &agentv1.GetLoopStatusResponse{
		Enabled: st.Enabled, Running: st.Running, IntervalSeconds: st.Interval.Seconds(), Executor: st.Executor,
		Replica: st.Holder, Leader: wire.OptString(st.Report.Leader), PassesByOutcome: map[string]int64{},
	}
	for _, o := range []string{loop.Advanced, loop.TaskFailed, loop.Idle, loop.Errored} {
		resp.PassesByOutcome[o] = 0
	}
	for o, n := range st.Report.Counts {
		resp.PassesByOutcome[o] = n
		resp.Iterations += n
	}
	if p := st.Report.Latest; p != nil {
		resp.LastRunAt = optTime(p.FinishedAt)
		resp.LastIteration = iterationProto(p.Iteration)
	}
	return resp, nil
}

// RunLoopOnce implements AgentService.RunLoopOnce: a real pass creates a
// task and may run a command, so its policy asks for an operator; a dry
// run only reads.
//
// A real pass may run for minutes (an exec command), longer than a REST
// request may take, so it runs on by itself: when it has not finished
// within the handler's RunOnceWait, the answer is 202 with the pass as it
// started (its id, outcome "running"), and the client polls
// GET /api/agent/loop until last_iteration has that id.
func (h *Handler) RunLoopOnce(ctx context.Context, req *agentv1.RunLoopOnceRequest) (*agentv1.RunLoopOnceResponse, error) {
	if req.GetDryRun() {
		it, err := h.loop.RunOnce(ctx, true)
		if err != nil {
			return nil, err
		}
		return &agentv1.RunLoopOnceResponse{Iteration: iterationProto(it)}, nil
	}
	type result struct {
		it  loop.Iteration
		err error
	}
	started, done := make(chan loop.Iteration, 1), make(chan result, 1)
	pctx := loop.WithStarted(context.WithoutCancel(ctx), func(it loop.Iteration) { started <- it })
	go func() {
		it, err := h.loop.RunOnce(pctx, false)
		done <- result{it, err}
	}()
	finished := func(r result) (*agentv1.RunLoopOnceResponse, error) {
		if r.err != nil {
			return nil, r.err
		}
		return &agentv1.RunLoopOnceResponse{Iteration: iterationProto(r.it)}, nil
	}
	select {
	case r := <-done: // refused (another replica leads) or over at once
		return finished(r)
	case it := <-started:
		wait := time.NewTimer(h.runOnceWait)
		defer wait.Stop()
		select {
		case r := <-done:
			return finished(r)
		case <-wait.C:
			it.Outcome = loop.Running
			rpcmeta.SetHTTPStatus(ctx, http.StatusAccepted)
			return &agentv1.RunLoopOnceResponse{Iteration: iterationProto(it)}, nil
		}
	}
}

// iterationProto is a pass as the API shows it: what a pass did not reach
// (an idle pass's idea) is null.
func iterationProto(it loop.Iteration) *agentv1.LoopIteration {
	out := &agentv1.LoopIteration{
		Outcome: it.Outcome, IdeaId: wire.OptString(it.IdeaID), StageBefore: wire.OptString(it.StageBefore),
		TaskType: wire.OptString(it.TaskType), TaskId: wire.OptString(it.TaskID), StageAfter: wire.OptString(it.StageAfter),
		Detail: it.Detail, StartedAt: wire.Time(it.StartedAt), Id: wire.OptString(it.ID),
	}
	if !it.FinishedAt.IsZero() {
		out.FinishedAt = wire.Time(it.FinishedAt)
	}
	if it.IdeaID != "" {
		out.IdeaScore = wrapperspb.Double(it.Score)
	}
	return out
}

// status is the enum for one of the task statuses (task.Statuses).
func status(s task.Status) agentv1.TaskStatus {
	return wire.Enum[agentv1.TaskStatus](agentv1.TaskStatus_value, s)
}

// GetDailyMetrics implements AgentService.GetDailyMetrics.
func (h *Handler) GetDailyMetrics(ctx context.Context, req *agentv1.GetDailyMetricsRequest) (*agentv1.GetDailyMetricsResponse, error) {
	days, err := h.uc.DailyMetrics(ctx, req.Days)
	if err != nil {
		return nil, err
	}
	out := &agentv1.GetDailyMetricsResponse{Days: make([]*agentv1.DayMetrics, len(days))}
	for i, d := range days {
		m := &agentv1.DayMetrics{Day: d.Day.Format(time.DateOnly), Created: d.Created, Completed: d.Completed,
			Failed: d.Failed, TimedOut: d.TimedOut,
			TokensIn: float64(d.Spent.TokensIn), TokensOut: float64(d.Spent.TokensOut), CostUsd: d.Spent.CostUSD}
		if d.HasRate {
			m.SuccessRate = wrapperspb.Double(d.SuccessRate)
		}
		if d.HasTimes {
			m.P50Seconds, m.P95Seconds = wrapperspb.Double(d.P50), wrapperspb.Double(d.P95)
		}
		out.Days[i] = m
	}
	return out, nil
}

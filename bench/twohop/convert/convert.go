// Package convert maps the two-hop baseline's answers between the shapes
// of their JSON bodies (package sqlcore's) and Foundry's protos, by hand,
// field by field: the back end fills the proto response from what sqlcore
// answers, the front fills the JSON body from the proto response. It also
// carries a sqlcore.Error over gRPC (a status whose code is the HTTP
// status's, as platform/wire maps them, with the bad fields as a
// BadRequest detail) and back.
package convert

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/foundryhq/foundry/bench/bare/sqlcore"
	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// ---------------------------------------------------------------------------
// Errors.

// httpStatusOf is platform/wire's table from gRPC codes to HTTP statuses
// (copied: this module imports no Foundry package but the protos).
var httpStatusOf = map[codes.Code]int{
	codes.OK:                 http.StatusOK,
	codes.InvalidArgument:    http.StatusUnprocessableEntity,
	codes.OutOfRange:         http.StatusUnprocessableEntity,
	codes.FailedPrecondition: http.StatusBadRequest,
	codes.Unauthenticated:    http.StatusUnauthorized,
	codes.PermissionDenied:   http.StatusForbidden,
	codes.NotFound:           http.StatusNotFound,
	codes.AlreadyExists:      http.StatusConflict,
	codes.Aborted:            http.StatusConflict,
	codes.ResourceExhausted:  http.StatusTooManyRequests,
	codes.Unimplemented:      http.StatusNotImplemented,
	codes.Canceled:           499,
	codes.Unavailable:        http.StatusServiceUnavailable,
	codes.DeadlineExceeded:   http.StatusGatewayTimeout,
}

// codeOf is the other way, for the statuses sqlcore answers.
var codeOf = map[int]codes.Code{
	http.StatusUnprocessableEntity: codes.InvalidArgument,
	http.StatusBadRequest:          codes.FailedPrecondition,
	http.StatusUnauthorized:        codes.Unauthenticated,
	http.StatusForbidden:           codes.PermissionDenied,
	http.StatusNotFound:            codes.NotFound,
	http.StatusConflict:            codes.Aborted,
	http.StatusTooManyRequests:     codes.ResourceExhausted,
	http.StatusNotImplemented:      codes.Unimplemented,
	http.StatusServiceUnavailable:  codes.Unavailable,
	http.StatusGatewayTimeout:      codes.DeadlineExceeded,
}

// ToStatus is err as the back end answers it: a *sqlcore.Error as its
// code, detail and fields; a timeout as DeadlineExceeded; anything else as
// Internal, its text left to the back end's log (internal reports whether
// it was).
func ToStatus(err error) (out error, internal bool) {
	var ae *sqlcore.Error
	switch {
	case errors.As(err, &ae):
		code, ok := codeOf[ae.Status]
		if !ok {
			return status.Error(codes.Internal, "internal error"), true
		}
		st := status.New(code, ae.Detail)
		if len(ae.Fields) > 0 {
			br := &errdetails.BadRequest{}
			for _, f := range ae.Fields {
				br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: f.Field, Description: f.Message})
			}
			if withFields, err := st.WithDetails(br); err == nil {
				st = withFields
			}
		}
		return st.Err(), false
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, "the request timed out"), false
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, "canceled"), false
	}
	return status.Error(codes.Internal, "internal error"), true
}

// FromStatus is a call's failure as the front answers it: a *sqlcore.Error
// with the code's HTTP status (httpjson.WriteError writes it).
func FromStatus(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	code, known := httpStatusOf[st.Code()]
	if !known {
		code = http.StatusInternalServerError
	}
	out := &sqlcore.Error{Status: code, Detail: st.Message()}
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out.Fields = append(out.Fields, sqlcore.FieldError{Field: v.GetField(), Message: v.GetDescription()})
			}
		}
	}
	return out
}

// ---------------------------------------------------------------------------
// Wrappers and free JSON.

func strPB(s *string) *wrapperspb.StringValue {
	if s == nil {
		return nil
	}
	return wrapperspb.String(*s)
}

func strOf(v *wrapperspb.StringValue) *string {
	if v == nil {
		return nil
	}
	s := v.GetValue()
	return &s
}

func dblPB(f *float64) *wrapperspb.DoubleValue {
	if f == nil {
		return nil
	}
	return wrapperspb.Double(*f)
}

func dblOf(v *wrapperspb.DoubleValue) *float64 {
	if v == nil {
		return nil
	}
	f := v.GetValue()
	return &f
}

// Struct is free JSON (an object) as a proto Struct; nil stays nil.
func Struct(m map[string]any) (*structpb.Struct, error) {
	if m == nil {
		return nil, nil
	}
	s, err := structpb.NewStruct(m)
	if err != nil {
		return nil, fmt.Errorf("free JSON to a Struct: %w", err)
	}
	return s, nil
}

// ---------------------------------------------------------------------------
// Ideas.

// IdeaPB is an idea as the back end answers it.
func IdeaPB(i sqlcore.Idea) *portfoliov1.Idea {
	return &portfoliov1.Idea{
		Id: i.ID, Name: i.Name, Description: i.Description,
		PotentialValue: i.PotentialValue, EstimatedCost: i.EstimatedCost, ActualValue: i.ActualValue, ActualCost: i.ActualCost,
		Confidence: i.Confidence, ResistanceRisk: i.ResistanceRisk,
		Stage: portfoliov1.Stage(portfoliov1.Stage_value[i.Stage]), ManifestationStatus: i.ManifestationStatus, Tags: i.Tags,
		CostVector: &portfoliov1.CostVector{Compute: i.CostVector.Compute, Infrastructure: i.CostVector.Infrastructure,
			HumanAttention: i.CostVector.HumanAttention},
		ValueVector: &portfoliov1.ValueVector{Adoption: i.ValueVector.Adoption, Lineage: i.ValueVector.Lineage,
			FrictionAvoided: i.ValueVector.FrictionAvoided},
		Score: i.Score, OpenQuestionCount: int32(i.OpenQuestionCount), ParentIdeaId: strPB(i.ParentIdeaID), Archived: i.Archived,
		CreatedAt: i.CreatedAt, UpdatedAt: i.UpdatedAt,
	}
}

// Idea is an idea as the front answers it.
func Idea(p *portfoliov1.Idea) sqlcore.Idea {
	tags := p.GetTags()
	if tags == nil {
		tags = []string{}
	}
	cv, vv := p.GetCostVector(), p.GetValueVector()
	return sqlcore.Idea{
		ID: p.GetId(), Name: p.GetName(), Description: p.GetDescription(),
		PotentialValue: p.GetPotentialValue(), EstimatedCost: p.GetEstimatedCost(), ActualValue: p.GetActualValue(),
		ActualCost: p.GetActualCost(), Confidence: p.GetConfidence(), ResistanceRisk: p.GetResistanceRisk(),
		Stage: p.GetStage().String(), ManifestationStatus: p.GetManifestationStatus(), Tags: tags,
		CostVector: sqlcore.CostVector{Compute: cv.GetCompute(), Infrastructure: cv.GetInfrastructure(),
			HumanAttention: cv.GetHumanAttention()},
		ValueVector: sqlcore.ValueVector{Adoption: vv.GetAdoption(), Lineage: vv.GetLineage(),
			FrictionAvoided: vv.GetFrictionAvoided()},
		Score: p.GetScore(), OpenQuestionCount: int(p.GetOpenQuestionCount()), ParentIdeaID: strOf(p.GetParentIdeaId()),
		Archived: p.GetArchived(), CreatedAt: p.GetCreatedAt(), UpdatedAt: p.GetUpdatedAt(),
	}
}

// IdeaListPB is a page of ideas as the back end answers it.
func IdeaListPB(l sqlcore.IdeaList) *portfoliov1.ListIdeasResponse {
	out := &portfoliov1.ListIdeasResponse{
		Ideas: make([]*portfoliov1.Idea, len(l.Ideas)),
		Summary: &portfoliov1.IdeaSummary{TotalIdeas: int32(l.Summary.TotalIdeas), UnvalidatedIdeas: int32(l.Summary.UnvalidatedIdeas),
			ValidatedIdeas: int32(l.Summary.ValidatedIdeas), TotalPotentialValue: l.Summary.TotalPotentialValue,
			TotalActualValue: l.Summary.TotalActualValue, TotalValueGap: l.Summary.TotalValueGap},
		Pagination: &commonv1.Pagination{Limit: int32(l.Pagination.Limit), Offset: int32(l.Pagination.Offset),
			Total: l.Pagination.Total, HasMore: l.Pagination.HasMore},
	}
	for k, i := range l.Ideas {
		out.Ideas[k] = IdeaPB(i)
	}
	return out
}

// IdeaList is a page of ideas as the front answers it.
func IdeaList(p *portfoliov1.ListIdeasResponse) sqlcore.IdeaList {
	s, pg := p.GetSummary(), p.GetPagination()
	out := sqlcore.IdeaList{
		Ideas: make([]sqlcore.Idea, len(p.GetIdeas())),
		Summary: sqlcore.IdeaSummary{TotalIdeas: int64(s.GetTotalIdeas()), UnvalidatedIdeas: int64(s.GetUnvalidatedIdeas()),
			ValidatedIdeas: int64(s.GetValidatedIdeas()), TotalPotentialValue: s.GetTotalPotentialValue(),
			TotalActualValue: s.GetTotalActualValue(), TotalValueGap: s.GetTotalValueGap()},
		Pagination: sqlcore.Pagination{Limit: int(pg.GetLimit()), Offset: int(pg.GetOffset()), Total: pg.GetTotal(),
			HasMore: pg.GetHasMore()},
	}
	for k, i := range p.GetIdeas() {
		out.Ideas[k] = Idea(i)
	}
	return out
}

// ---------------------------------------------------------------------------
// Contributions.

// ContributionPB is a contribution as the back end answers it.
func ContributionPB(c sqlcore.Contribution) (*ledgerv1.Contribution, error) {
	meta, err := Struct(c.Metadata)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.Contribution{Id: c.ID, ContributorId: c.ContributorID, AssetId: c.AssetID, CostAmount: c.CostAmount,
		CoherenceScore: c.CoherenceScore, Metadata: meta, Source: c.Source, CreatedAt: c.CreatedAt}, nil
}

// Contribution is a contribution as the front answers it.
func Contribution(p *ledgerv1.Contribution) sqlcore.Contribution {
	return sqlcore.Contribution{ID: p.GetId(), ContributorID: p.GetContributorId(), AssetID: p.GetAssetId(),
		CostAmount: p.GetCostAmount(), CoherenceScore: p.GetCoherenceScore(), Metadata: p.GetMetadata().AsMap(),
		Source: p.GetSource(), CreatedAt: p.GetCreatedAt()}
}

// ---------------------------------------------------------------------------
// Agent tasks.

// TaskPB is a task as the back end answers it: its context, stored as
// JSON text, as a Struct.
func TaskPB(t sqlcore.Task) (*agentv1.AgentTask, error) {
	var ctxMap map[string]any
	if err := json.Unmarshal(t.Context, &ctxMap); err != nil {
		return nil, fmt.Errorf("task %s: context: %w", t.ID, err)
	}
	ctx, err := Struct(ctxMap)
	if err != nil {
		return nil, err
	}
	return &agentv1.AgentTask{
		Id: t.ID, TaskId: t.TaskID, Direction: t.Direction, TaskType: t.TaskType,
		Status: agentv1.TaskStatus(agentv1.TaskStatus_value[t.Status]), Model: t.Model, Executor: t.Executor,
		Command: t.Command, Output: t.Output, ProgressPct: t.ProgressPct, CurrentStep: t.CurrentStep,
		DecisionPrompt: t.DecisionPrompt, ErrorSummary: strPB(t.ErrorSummary), ErrorCategory: strPB(t.ErrorCategory),
		Context: ctx, WorkerId: strPB(t.WorkerID), PromptVariant: strPB(t.PromptVariant), ValueScore: dblPB(t.ValueScore),
		ResourceCost: dblPB(t.ResourceCost), DurationSeconds: dblPB(t.DurationSeconds), CreatedAt: t.CreatedAt,
		UpdatedAt: t.UpdatedAt, StartedAt: strPB(t.StartedAt), CompletedAt: strPB(t.CompletedAt), Tier: t.Tier,
		Attempts: int32(t.Attempts), LeaseExpiresAt: strPB(t.LeaseExpiresAt),
	}, nil
}

// Task is a task as the front answers it.
func Task(p *agentv1.AgentTask) (sqlcore.Task, error) {
	ctx, err := json.Marshal(p.GetContext().AsMap())
	if err != nil {
		return sqlcore.Task{}, fmt.Errorf("task %s: context: %w", p.GetId(), err)
	}
	return sqlcore.Task{
		ID: p.GetId(), TaskID: p.GetTaskId(), Direction: p.GetDirection(), TaskType: p.GetTaskType(),
		Status: p.GetStatus().String(), Model: p.GetModel(), Executor: p.GetExecutor(), Command: p.GetCommand(),
		Output: p.GetOutput(), ProgressPct: p.GetProgressPct(), CurrentStep: p.GetCurrentStep(),
		DecisionPrompt: p.GetDecisionPrompt(), ErrorSummary: strOf(p.GetErrorSummary()),
		ErrorCategory: strOf(p.GetErrorCategory()), Context: ctx, WorkerID: strOf(p.GetWorkerId()),
		PromptVariant: strOf(p.GetPromptVariant()), ValueScore: dblOf(p.GetValueScore()),
		ResourceCost: dblOf(p.GetResourceCost()), DurationSeconds: dblOf(p.GetDurationSeconds()),
		CreatedAt: p.GetCreatedAt(), UpdatedAt: p.GetUpdatedAt(), StartedAt: strOf(p.GetStartedAt()),
		CompletedAt: strOf(p.GetCompletedAt()), Tier: p.GetTier(), Attempts: int(p.GetAttempts()),
		LeaseExpiresAt: strOf(p.GetLeaseExpiresAt()),
	}, nil
}

// TaskPatchPB is a PATCH's body as the front sends it. A status that is no
// task status goes as the unspecified one, which the back end refuses with
// the message an unknown word gets.
func TaskPatchPB(id string, p sqlcore.TaskPatch) *agentv1.UpdateTaskRequest {
	out := &agentv1.UpdateTaskRequest{Id: id, Output: p.Output, ProgressPct: p.ProgressPct, CurrentStep: p.CurrentStep,
		DecisionPrompt: p.DecisionPrompt, ErrorSummary: p.ErrorSummary, ErrorCategory: p.ErrorCategory,
		WorkerId: p.WorkerID, ValueScore: p.ValueScore, ResourceCost: p.ResourceCost}
	if p.Status != nil {
		s := agentv1.TaskStatus(agentv1.TaskStatus_value[*p.Status])
		out.Status = &s
	}
	return out
}

// TaskPatch is the PATCH as the back end hands it to sqlcore.
func TaskPatch(r *agentv1.UpdateTaskRequest) sqlcore.TaskPatch {
	out := sqlcore.TaskPatch{Output: r.Output, ProgressPct: r.ProgressPct, CurrentStep: r.CurrentStep,
		DecisionPrompt: r.DecisionPrompt, ErrorSummary: r.ErrorSummary, ErrorCategory: r.ErrorCategory,
		WorkerID: r.WorkerId, ValueScore: r.ValueScore, ResourceCost: r.ResourceCost}
	if r.Status != nil {
		s := r.Status.String()
		out.Status = &s
	}
	return out
}

// PipelinePB is the pipeline's status as the back end answers it.
func PipelinePB(s sqlcore.PipelineStatus) *agentv1.GetPipelineStatusResponse {
	return &agentv1.GetPipelineStatusResponse{
		Pending: s.Pending, Running: s.Running, Completed: s.Completed, Failed: s.Failed,
		NeedsDecision: s.NeedsDecision, TimedOut: s.TimedOut, Total: s.Total,
		LongestPendingSeconds: dblPB(s.LongestPendingSeconds), SuccessRate: dblPB(s.SuccessRate),
		Attention: &agentv1.PipelineAttention{Stuck: s.Attention.Stuck, RepeatedFailures: s.Attention.RepeatedFailures,
			LowSuccessRate: s.Attention.LowSuccessRate, Flags: s.Attention.Flags},
		GeneratedAt: s.GeneratedAt,
	}
}

// Pipeline is the pipeline's status as the front answers it.
func Pipeline(p *agentv1.GetPipelineStatusResponse) sqlcore.PipelineStatus {
	a := p.GetAttention()
	flags := a.GetFlags()
	if flags == nil {
		flags = []string{}
	}
	return sqlcore.PipelineStatus{
		Pending: p.GetPending(), Running: p.GetRunning(), Completed: p.GetCompleted(),
		Failed: p.GetFailed(), NeedsDecision: p.GetNeedsDecision(), TimedOut: p.GetTimedOut(),
		Total: p.GetTotal(), LongestPendingSeconds: dblOf(p.GetLongestPendingSeconds()),
		SuccessRate: dblOf(p.GetSuccessRate()),
		Attention: sqlcore.Attention{Stuck: a.GetStuck(), RepeatedFailures: a.GetRepeatedFailures(),
			LowSuccessRate: a.GetLowSuccessRate(), Flags: flags},
		GeneratedAt: p.GetGeneratedAt(),
	}
}

func ratesPB(m map[string]*sqlcore.Rate) map[string]*agentv1.RateBucket {
	out := make(map[string]*agentv1.RateBucket, len(m))
	for k, r := range m {
		out[k] = &agentv1.RateBucket{Completed: r.Completed, Failed: r.Failed, Rate: r.Rate}
	}
	return out
}

func rates(m map[string]*agentv1.RateBucket) map[string]*sqlcore.Rate {
	out := make(map[string]*sqlcore.Rate, len(m))
	for k, r := range m {
		out[k] = &sqlcore.Rate{Completed: r.GetCompleted(), Failed: r.GetFailed(), Rate: r.GetRate()}
	}
	return out
}

// MetricsPB is the metrics as the back end answers them.
func MetricsPB(m sqlcore.Metrics) *agentv1.GetMetricsResponse {
	et, sr, u := m.ExecutionTime, m.SuccessRate, m.Usage
	return &agentv1.GetMetricsResponse{
		ExecutionTime: &agentv1.ExecutionTime{P50Seconds: dblPB(et.P50Seconds), P95Seconds: dblPB(et.P95Seconds),
			SampleCount: int64(et.SampleCount), Exact: et.Exact},
		SuccessRate: &agentv1.SuccessRate{
			Overall:    &agentv1.RateBucket{Completed: sr.Overall.Completed, Failed: sr.Overall.Failed, Rate: sr.Overall.Rate},
			ByTaskType: ratesPB(sr.ByTaskType), ByModel: ratesPB(sr.ByModel), ByExecutor: ratesPB(sr.ByExecutor)},
		Usage: &agentv1.UsageSummary{TasksCreated: u.TasksCreated, TasksFinished: u.TasksFinished,
			TotalDurationSeconds: u.TotalDurationSeconds, TotalResourceCost: u.TotalResourceCost,
			TotalValueScore: u.TotalValueScore, TasksByModel: u.TasksByModel, TasksByExecutor: u.TasksByExecutor},
		WindowDays: int32(m.WindowDays), WindowStart: m.WindowStart,
	}
}

// Metrics is the metrics as the front answers them.
func Metrics(p *agentv1.GetMetricsResponse) sqlcore.Metrics {
	var m sqlcore.Metrics
	et, sr, u := p.GetExecutionTime(), p.GetSuccessRate(), p.GetUsage()
	m.ExecutionTime.P50Seconds, m.ExecutionTime.P95Seconds = dblOf(et.GetP50Seconds()), dblOf(et.GetP95Seconds())
	m.ExecutionTime.SampleCount, m.ExecutionTime.Exact = int(et.GetSampleCount()), et.GetExact()
	o := sr.GetOverall()
	m.SuccessRate.Overall = sqlcore.Rate{Completed: o.GetCompleted(), Failed: o.GetFailed(), Rate: o.GetRate()}
	m.SuccessRate.ByTaskType, m.SuccessRate.ByModel = rates(sr.GetByTaskType()), rates(sr.GetByModel())
	m.SuccessRate.ByExecutor = rates(sr.GetByExecutor())
	m.Usage.TasksCreated, m.Usage.TasksFinished = u.GetTasksCreated(), u.GetTasksFinished()
	m.Usage.TotalDurationSeconds, m.Usage.TotalResourceCost = u.GetTotalDurationSeconds(), u.GetTotalResourceCost()
	m.Usage.TotalValueScore = u.GetTotalValueScore()
	m.Usage.TasksByModel, m.Usage.TasksByExecutor = u.GetTasksByModel(), u.GetTasksByExecutor()
	m.WindowDays, m.WindowStart = int(p.GetWindowDays()), p.GetWindowStart()
	return m
}

// ---------------------------------------------------------------------------
// Stakes.

// StakePB is a stake as the back end answers it.
func StakePB(s sqlcore.Stake) *ledgerv1.StakeResponse {
	return &ledgerv1.StakeResponse{DryRun: s.DryRun, ContributorId: s.ContributorID, IdeaId: s.IdeaID, AmountCc: s.AmountCC,
		PositionCc: s.PositionCC, AvailableCcAfter: s.AvailableCCAfter, Stage: portfoliov1.Stage(portfoliov1.Stage_value[s.Stage]),
		Projection: &ledgerv1.StakeProjection{LowMultiplier: s.Projection.LowMultiplier,
			HighMultiplier: s.Projection.HighMultiplier, StageUnlockPct: s.Projection.StageUnlockPct}}
}

// Stake is a stake as the front answers it.
func Stake(p *ledgerv1.StakeResponse) sqlcore.Stake {
	out := sqlcore.Stake{DryRun: p.GetDryRun(), ContributorID: p.GetContributorId(), IdeaID: p.GetIdeaId(),
		AmountCC: p.GetAmountCc(), PositionCC: p.GetPositionCc(), AvailableCCAfter: p.GetAvailableCcAfter(),
		Stage: p.GetStage().String()}
	pr := p.GetProjection()
	out.Projection.LowMultiplier, out.Projection.HighMultiplier = pr.GetLowMultiplier(), pr.GetHighMultiplier()
	out.Projection.StageUnlockPct = pr.GetStageUnlockPct()
	return out
}

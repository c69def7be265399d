package handler

import (
	"context"

	"google.golang.org/protobuf/types/known/wrapperspb"

	portfoliointernalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/paging"
	"github.com/foundryhq/foundry/services/platform/wire"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// AdvanceIdea implements PortfolioService.AdvanceIdea: exactly one stage,
// under the idea's lock, so concurrent advances each move it once.
func (h *Handler) AdvanceIdea(ctx context.Context, req *portfoliov1.AdvanceIdeaRequest) (*portfoliov1.AdvanceIdeaResponse, error) {
	i, err := h.app.Advance(ctx, editor(ctx), req.GetIdeaId(), wire.Word(portfoliov1.Stage_name, req.GetStage()))
	if err != nil {
		return nil, err
	}
	return &portfoliov1.AdvanceIdeaResponse{Idea: toProto(i)}, nil
}

// SetIdeaStage implements PortfolioService.SetIdeaStage (operators).
func (h *Handler) SetIdeaStage(ctx context.Context, req *portfoliov1.SetIdeaStageRequest) (*portfoliov1.SetIdeaStageResponse, error) {
	i, err := h.app.SetStage(ctx, editor(ctx), req.GetIdeaId(), wire.Word(portfoliov1.Stage_name, req.GetStage()))
	if err != nil {
		return nil, err
	}
	return &portfoliov1.SetIdeaStageResponse{Idea: toProto(i)}, nil
}

// AdvanceForTask implements PortfolioService.AdvanceForTask: a completed
// task moves its idea at most one stage, and at most once per task id.
func (h *Handler) AdvanceForTask(ctx context.Context, req *portfoliointernalv1.AdvanceForTaskRequest) (*portfoliointernalv1.AdvanceForTaskResponse, error) {
	out, err := h.app.AdvanceForTask(ctx, req.GetIdeaId(), req.GetTaskId(), req.GetTaskType())
	if err != nil {
		return nil, err
	}
	return &portfoliointernalv1.AdvanceForTaskResponse{Idea: toProto(out.Idea), Advanced: out.Moved, PreviousStage: wire.Enum[portfoliov1.Stage](portfoliov1.Stage_value, out.From)}, nil
}

// ListCandidates implements PortfolioService.ListCandidates: active ideas
// not yet complete, best score first, with the task each needs next.
func (h *Handler) ListCandidates(ctx context.Context, req *portfoliointernalv1.ListCandidatesRequest) (*portfoliointernalv1.ListCandidatesResponse, error) {
	ideas, err := h.app.Candidates(ctx, req.Limit)
	if err != nil {
		return nil, err
	}
	resp := &portfoliointernalv1.ListCandidatesResponse{Candidates: make([]*portfoliointernalv1.Candidate, 0, len(ideas))}
	for _, i := range ideas {
		resp.Candidates = append(resp.Candidates, &portfoliointernalv1.Candidate{Idea: toProto(i), NextTaskType: idea.NextTaskType(i.Stage)})
	}
	return resp, nil
}

// ListIdeaStages implements PortfolioService.ListIdeaStages.
func (h *Handler) ListIdeaStages(ctx context.Context, req *portfoliov1.ListIdeaStagesRequest) (*portfoliov1.ListIdeaStagesResponse, error) {
	page, err := h.app.Stages(ctx, req.GetId(), req.Limit, req.GetOffset())
	if err != nil {
		return nil, err
	}
	out := &portfoliov1.ListIdeaStagesResponse{Changes: make([]*portfoliov1.StageChange, len(page.Items)),
		Pagination: paging.Of(page.Limit, page.Offset, page.Total, len(page.Items), "")}
	for i, c := range page.Items {
		p := &portfoliov1.StageChange{To: wire.Enum[portfoliov1.Stage](portfoliov1.Stage_value, c.To), At: wire.Time(c.At),
			By: c.Actor, Reason: c.Reason, ByHandle: wire.OptString(c.ActorHandle)}
		if c.From != "" {
			p.From = wrapperspb.String(string(c.From))
		}
		out.Changes[i] = p
	}
	return out, nil
}

// ListIdeaRevisions implements PortfolioService.ListIdeaRevisions.
func (h *Handler) ListIdeaRevisions(ctx context.Context, req *portfoliov1.ListIdeaRevisionsRequest) (*portfoliov1.ListIdeaRevisionsResponse, error) {
	page, err := h.app.Revisions(ctx, req.GetId(), req.Limit, req.GetOffset())
	if err != nil {
		return nil, err
	}
	out := &portfoliov1.ListIdeaRevisionsResponse{Revisions: make([]*portfoliov1.IdeaRevision, len(page.Items)),
		Pagination: paging.Of(page.Limit, page.Offset, page.Total, len(page.Items), "")}
	for i, r := range page.Items {
		s := r.Steering
		out.Revisions[i] = &portfoliov1.IdeaRevision{Name: s.Name, PotentialValue: s.PotentialValue, EstimatedCost: s.EstimatedCost,
			ActualValue: s.ActualValue, ActualCost: s.ActualCost, Confidence: s.Confidence, ResistanceRisk: s.ResistanceRisk,
			ReviewStatus: string(s.Review), At: wire.Time(r.At), By: r.Actor, ByHandle: wire.OptString(r.ActorHandle), Reason: r.Reason}
	}
	return out, nil
}

// GetStageTimes implements PortfolioService.GetStageTimes: every stage in
// pipeline order, its median and p90 null when it has no stint in the
// window.
func (h *Handler) GetStageTimes(ctx context.Context, req *portfoliov1.GetStageTimesRequest) (*portfoliov1.GetStageTimesResponse, error) {
	res, err := h.app.StageTimes(ctx, req.Days)
	if err != nil {
		return nil, err
	}
	out := &portfoliov1.GetStageTimesResponse{Stages: make([]*portfoliov1.StageTime, len(res.Stages)),
		Since: wire.Time(res.Since), Days: int32(res.Days)}
	for i, s := range res.Stages {
		p := &portfoliov1.StageTime{Stage: wire.Enum[portfoliov1.Stage](portfoliov1.Stage_value, s.Stage), Stints: int32(s.Stints)}
		if s.Stints > 0 {
			p.MedianSeconds, p.P90Seconds = wrapperspb.Double(s.Median.Seconds()), wrapperspb.Double(s.P90.Seconds())
		}
		out.Stages[i] = p
	}
	return out, nil
}

// SetIdeaImpact implements PortfolioInternalService.SetIdeaImpact: the
// ledger's impact totals of an idea, kept when newer than the idea's.
func (h *Handler) SetIdeaImpact(ctx context.Context, req *portfoliointernalv1.SetIdeaImpactRequest) (*portfoliointernalv1.SetIdeaImpactResponse, error) {
	at, err := wire.ParseTime(req.GetLastRecordedAt())
	if err != nil && req.GetLastRecordedAt() != "" {
		return nil, fault.Validation(fault.Field("last_recorded_at", "must be an RFC 3339 time"))
	}
	applied, err := h.app.SetImpact(ctx, usecase.ImpactCmd{IdeaID: req.GetIdeaId(), Impact: idea.Impact{
		Version: req.GetVersion(), UsageRecords: req.GetUsageRecords(), RevenueRecords: req.GetRevenueRecords(),
		EarnedMicros: req.GetEarnedMicros(), RevenueMicros: req.GetRevenueMicros(), PaidMicros: req.GetPaidMicros(), LastAt: at,
	}})
	if err != nil {
		return nil, err
	}
	return &portfoliointernalv1.SetIdeaImpactResponse{Applied: applied}, nil
}

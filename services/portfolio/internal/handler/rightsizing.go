package handler

import (
	"context"

	"google.golang.org/protobuf/types/known/wrapperspb"

	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/wire"
	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// GetRightSizing implements PortfolioService.GetRightSizing.
func (h *Handler) GetRightSizing(ctx context.Context, _ *portfoliov1.GetRightSizingRequest) (*portfoliov1.GetRightSizingResponse, error) {
	an, err := h.app.Analyze(ctx)
	if err != nil {
		return nil, err
	}
	r := an.Report
	resp := &portfoliov1.GetRightSizingResponse{
		Health: &portfoliov1.RightSizingHealth{
			TotalIdeas: int32(r.Health.Total), TooLarge: int32(r.Health.TooLarge), TooSmall: int32(r.Health.TooSmall),
			Overlap: int32(r.Health.Overlap), Healthy: int32(r.Health.Healthy), SuggestionCount: int32(r.Health.Suggestions),
		},
		Signals:     make([]*portfoliov1.IdeaSignals, 0, len(r.Signals)),
		Suggestions: make([]*portfoliov1.RightSizingSuggestion, 0, len(r.Suggestions)),
		GeneratedAt: wire.Time(an.At),
	}
	for _, s := range r.Signals {
		resp.Signals = append(resp.Signals, &portfoliov1.IdeaSignals{
			IdeaId: s.IdeaID, Name: s.Name, TooLarge: s.TooLarge, TooSmall: s.TooSmall, Overlap: s.Overlap,
			OpenQuestionCount: int32(s.OpenQuestionCount), TaskCount: int32(s.TaskCount),
			OverlapWithIds: append([]string{}, s.OverlapWith...),
		})
	}
	for _, s := range r.Suggestions {
		p := &portfoliov1.RightSizingSuggestion{
			SuggestionType: s.Type, IdeaId: s.IdeaID, Confidence: s.Confidence, Rationale: s.Rationale,
			ProposedChildren: childrenProto(s.Children),
		}
		if s.OverlapWithID != "" {
			p.OverlapWithId = wrapperspb.String(s.OverlapWithID)
		}
		resp.Suggestions = append(resp.Suggestions, p)
	}
	return resp, nil
}

func childrenProto(cs []rightsizing.Child) []*portfoliov1.ProposedChild {
	out := make([]*portfoliov1.ProposedChild, 0, len(cs))
	for _, c := range cs {
		out = append(out, &portfoliov1.ProposedChild{Name: c.Name, Description: c.Description})
	}
	return out
}

// ApplyRightSizing implements PortfolioService.ApplyRightSizing. Without an
// explicit dry_run false it only projects the changes; applying them is an
// operator's action (the method's policy).
func (h *Handler) ApplyRightSizing(ctx context.Context, req *portfoliov1.ApplyRightSizingRequest) (*portfoliov1.ApplyRightSizingResponse, error) {
	dryRun := req.DryRun == nil || req.GetDryRun().GetValue()
	cmd := usecase.ApplyCmd{SuggestionType: req.GetSuggestionType(), Action: req.GetAction(), IdeaID: req.GetIdeaId(),
		OverlapWithID: req.GetOverlapWithId(), DryRun: dryRun}
	for _, c := range req.GetProposedChildren() {
		cmd.Children = append(cmd.Children, rightsizing.Child{Name: c.GetName(), Description: c.GetDescription()})
	}
	changes, err := h.app.ApplyRightSizing(ctx, cmd)
	if err != nil {
		return nil, err
	}
	resp := &portfoliov1.ApplyRightSizingResponse{Applied: !dryRun, DryRun: dryRun}
	for _, c := range changes {
		p := &portfoliov1.RightSizingChange{ChangeType: c.Type, IdeaId: c.IdeaID, Detail: c.Detail}
		if c.RelatedID != "" {
			p.RelatedIdeaId = wrapperspb.String(c.RelatedID)
		}
		resp.Changes = append(resp.Changes, p)
	}
	return resp, nil
}

// ListRightSizingHistory implements PortfolioService.ListRightSizingHistory.
func (h *Handler) ListRightSizingHistory(ctx context.Context, req *portfoliov1.ListRightSizingHistoryRequest) (*portfoliov1.ListRightSizingHistoryResponse, error) {
	snaps, err := h.app.History(ctx, req.Days)
	if err != nil {
		return nil, err
	}
	resp := &portfoliov1.ListRightSizingHistoryResponse{Snapshots: make([]*portfoliov1.HealthSnapshot, 0, len(snaps))}
	for _, s := range snaps {
		resp.Snapshots = append(resp.Snapshots, &portfoliov1.HealthSnapshot{
			Id: s.ID, TakenAt: wire.Time(s.TakenAt), TotalIdeas: int32(s.TotalIdeas), TooLarge: int32(s.TooLarge),
			TooSmall: int32(s.TooSmall), Overlap: int32(s.Overlap), Healthy: int32(s.Healthy), SuggestionCount: int32(s.Suggested),
		})
	}
	return resp, nil
}

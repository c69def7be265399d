package handler

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/types/known/wrapperspb"

	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/wire"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// History window bounds, in days.
const (
	defaultHistoryDays = 30
	maxHistoryDays     = 365
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
	if err := validateApply(req); err != nil {
		return nil, err
	}
	parent, err := h.app.Idea(ctx, req.GetIdeaId())
	if err != nil {
		return nil, storeError(err, req.GetIdeaId())
	}
	if parent.Archived {
		return nil, storeError(store.ErrArchived, parent.ID)
	}
	if req.GetSuggestionType() == rightsizing.Split {
		return h.split(ctx, parent, req, dryRun)
	}
	return h.merge(ctx, parent, req.GetOverlapWithId(), dryRun)
}

func validateApply(req *portfoliov1.ApplyRightSizingRequest) error {
	var errs []fault.FieldError
	want := map[string]string{rightsizing.Split: rightsizing.SplitIntoChild, rightsizing.Merge: rightsizing.MergeAndArchive}
	action, known := want[req.GetSuggestionType()]
	switch {
	case !known:
		errs = append(errs, fault.Field("suggestion_type", "must be split or merge"))
	case req.GetAction() != "" && req.GetAction() != action:
		errs = append(errs, fault.Field("action", "a %s applies with %s", req.GetSuggestionType(), action))
	}
	if req.GetIdeaId() == "" {
		errs = append(errs, fault.Field("idea_id", "is required"))
	}
	if req.GetSuggestionType() == rightsizing.Merge {
		switch req.GetOverlapWithId() {
		case "":
			errs = append(errs, fault.Field("overlap_with_id", "is required for a merge"))
		case req.GetIdeaId():
			errs = append(errs, fault.Field("overlap_with_id", "must differ from idea_id"))
		}
	}
	for k, c := range req.GetProposedChildren() {
		if c.GetName() == "" || len(c.GetName()) > idea.MaxNameLen {
			errs = append(errs, fault.Field(fmt.Sprintf("proposed_children[%d].name", k), "must be 1 to %d bytes", idea.MaxNameLen))
		}
	}
	if len(errs) > 0 {
		return fault.Validation(errs...)
	}
	return nil
}

// split creates child ideas of parent: the proposed children of the
// request, or those right-sizing proposes (see usecase.App.ProposeSplit).
func (h *Handler) split(ctx context.Context, parent idea.Idea, req *portfoliov1.ApplyRightSizingRequest, dryRun bool) (*portfoliov1.ApplyRightSizingResponse, error) {
	var proposed []rightsizing.Child
	for _, c := range req.GetProposedChildren() {
		proposed = append(proposed, rightsizing.Child{Name: c.GetName(), Description: c.GetDescription()})
	}
	children, err := h.app.ProposeSplit(ctx, parent, proposed)
	if err != nil {
		return nil, err
	}
	resp := &portfoliov1.ApplyRightSizingResponse{Applied: !dryRun, DryRun: dryRun}
	for _, child := range children {
		resp.Changes = append(resp.Changes,
			change("create_idea", child.ID, "", fmt.Sprintf("create %q", child.Name)),
			change("link_parent", child.ID, parent.ID, fmt.Sprintf("%q is split from %q", child.Name, parent.Name)))
	}
	if dryRun {
		return resp, nil
	}
	if err := h.app.Split(ctx, parent.ID, children); err != nil {
		return nil, storeError(err, parent.ID)
	}
	return resp, nil
}

// merge folds the duplicate into keep: keep gains its tags, the duplicate
// is archived (it leaves the list, the totals and right-sizing).
func (h *Handler) merge(ctx context.Context, keep idea.Idea, foldID string, dryRun bool) (*portfoliov1.ApplyRightSizingResponse, error) {
	fold, err := h.app.Idea(ctx, foldID)
	if err != nil {
		return nil, storeError(err, foldID)
	}
	if fold.Archived {
		return nil, storeError(store.ErrArchived, foldID)
	}
	resp := &portfoliov1.ApplyRightSizingResponse{Applied: !dryRun, DryRun: dryRun, Changes: []*portfoliov1.RightSizingChange{
		change("archive_idea", fold.ID, keep.ID, fmt.Sprintf("archive %q, merged into %q", fold.Name, keep.Name)),
		change("update_idea", keep.ID, fold.ID, fmt.Sprintf("%q gains the tags of %q", keep.Name, fold.Name)),
	}}
	if dryRun {
		return resp, nil
	}
	if _, err := h.app.Merge(ctx, keep.ID, fold.ID); err != nil {
		return nil, storeError(err, keep.ID)
	}
	return resp, nil
}

func change(kind, id, related, detail string) *portfoliov1.RightSizingChange {
	c := &portfoliov1.RightSizingChange{ChangeType: kind, IdeaId: id, Detail: detail}
	if related != "" {
		c.RelatedIdeaId = wrapperspb.String(related)
	}
	return c
}

// ListRightSizingHistory implements PortfolioService.ListRightSizingHistory.
func (h *Handler) ListRightSizingHistory(ctx context.Context, req *portfoliov1.ListRightSizingHistoryRequest) (*portfoliov1.ListRightSizingHistoryResponse, error) {
	days := defaultHistoryDays
	if req.Days != nil {
		if req.GetDays() < 1 || req.GetDays() > maxHistoryDays {
			return nil, fault.Validation(fault.Field("days", "must be between 1 and %d", maxHistoryDays))
		}
		days = int(req.GetDays())
	}
	snaps, err := h.app.History(ctx, days)
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

// Package handler implements the portfolio's gRPC API: it validates
// requests, calls the use cases (package usecase) and maps store errors to
// domain failures.
package handler

import (
	"context"
	"net/http"

	"google.golang.org/protobuf/types/known/structpb"

	portfoliointernalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/paging"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// Handler serves foundry.portfolio.v1.PortfolioService and, for the agent
// service, PortfolioInternalService.
type Handler struct {
	portfoliov1.UnimplementedPortfolioServiceServer
	portfoliointernalv1.UnimplementedPortfolioInternalServiceServer

	app *usecase.App
}

// New returns a Handler over the use cases.
func New(app *usecase.App) *Handler {
	return &Handler{app: app}
}

// editor is the caller as the idea rules see it: an operator (the role
// includes administrators), or a contributor's session.
func editor(ctx context.Context) idea.Editor {
	p := authz.FromContext(ctx)
	ed := idea.Editor{Operator: p.Is(authz.Operator), ContributorID: p.ContributorID, Actor: p.Actor()}
	if p.Kind == authz.Session {
		ed.Handle = p.Name
	}
	return ed
}

// CreateIdea implements PortfolioService.CreateIdea.
func (h *Handler) CreateIdea(ctx context.Context, req *portfoliov1.CreateIdeaRequest) (*portfoliov1.CreateIdeaResponse, error) {
	d := idea.Draft{
		ID: req.GetId(), Name: req.GetName(), Description: req.GetDescription(),
		PotentialValue: req.GetPotentialValue(), EstimatedCost: req.GetEstimatedCost(),
		ActualValue: req.GetActualValue(), ActualCost: req.GetActualCost(),
		Confidence: req.Confidence, ResistanceRisk: req.ResistanceRisk,
		Tags: req.GetTags(), Stage: wire.Word(portfoliov1.Stage_name, req.GetStage()),
	}
	if v := req.GetCostVector(); v != nil {
		d.CostVector = &idea.CostVector{Compute: v.GetCompute(), Infrastructure: v.GetInfrastructure(), HumanAttention: v.GetHumanAttention()}
	}
	if v := req.GetValueVector(); v != nil {
		d.ValueVector = &idea.ValueVector{Adoption: v.GetAdoption(), Lineage: v.GetLineage(), FrictionAvoided: v.GetFrictionAvoided()}
	}
	i, err := h.app.CreateIdea(ctx, editor(ctx), d)
	if err != nil {
		// A generated id cannot be taken, so only a chosen one is named.
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &portfoliov1.CreateIdeaResponse{Idea: toProto(i)}, nil
}

// ListIdeas implements PortfolioService.ListIdeas.
func (h *Handler) ListIdeas(ctx context.Context, req *portfoliov1.ListIdeasRequest) (*portfoliov1.ListIdeasResponse, error) {
	page, err := h.app.ListIdeas(ctx, usecase.ListQuery{OnlyUnvalidated: req.GetOnlyUnvalidated(), Tags: req.GetTags(),
		Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, err
	}
	ideas, total, totals := page.Ideas, page.Total, page.Totals
	resp := &portfoliov1.ListIdeasResponse{
		Ideas: make([]*portfoliov1.Idea, 0, len(ideas)),
		Summary: &portfoliov1.IdeaSummary{
			TotalIdeas: int32(totals.Ideas), ValidatedIdeas: int32(totals.Validated),
			UnvalidatedIdeas:    int32(totals.Ideas - totals.Validated),
			TotalPotentialValue: wire.Amount(totals.PotentialValue), TotalActualValue: wire.Amount(totals.ActualValue),
			TotalValueGap: wire.Amount(totals.PotentialValue - totals.ActualValue),
		},
		Pagination: paging.Of(page.Limit, page.Offset, total, len(ideas), ""),
	}
	for _, i := range ideas {
		resp.Ideas = append(resp.Ideas, toProto(i))
	}
	return resp, nil
}

// GetIdea implements PortfolioService.GetIdea.
func (h *Handler) GetIdea(ctx context.Context, req *portfoliov1.GetIdeaRequest) (*portfoliov1.GetIdeaResponse, error) {
	i, err := h.app.Idea(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	return &portfoliov1.GetIdeaResponse{Idea: toProto(i)}, nil
}

// UpdateIdea implements PortfolioService.UpdateIdea.
func (h *Handler) UpdateIdea(ctx context.Context, req *portfoliov1.UpdateIdeaRequest) (*portfoliov1.UpdateIdeaResponse, error) {
	p := idea.Patch{
		ActualValue: req.ActualValue, ActualCost: req.ActualCost, Confidence: req.Confidence,
		Manifestation: req.ManifestationStatus, Name: req.Name, Description: req.Description,
		PotentialValue: req.PotentialValue, EstimatedCost: req.EstimatedCost,
		Stage:  wire.OptionalWord(portfoliov1.Stage_name, req.Stage),
		Review: req.ReviewStatus,
	}
	if req.GetTags() != nil {
		tags, err := stringList(req.GetTags())
		if err != nil {
			return nil, err
		}
		p.Tags = &tags
	}
	if p.Empty() {
		return nil, fault.New(fault.Rejected, "the patch changes nothing: send at least one field")
	}
	i, err := h.app.UpdateIdea(ctx, editor(ctx), req.GetId(), p)
	if err != nil {
		return nil, err
	}
	return &portfoliov1.UpdateIdeaResponse{Idea: toProto(i)}, nil
}

// stringList reads a JSON array that must hold only strings.
func stringList(l *structpb.ListValue) ([]string, error) {
	out := make([]string, 0, len(l.GetValues()))
	for k, v := range l.GetValues() {
		s, ok := v.GetKind().(*structpb.Value_StringValue)
		if !ok {
			return nil, fault.Validation(fault.Field("tags", "item %d must be a string", k))
		}
		out = append(out, s.StringValue)
	}
	return out, nil
}

// GetStorage implements PortfolioService.GetStorage.
func (h *Handler) GetStorage(ctx context.Context, _ *portfoliov1.GetStorageRequest) (*portfoliov1.GetStorageResponse, error) {
	st, err := h.app.Storage(ctx)
	if err != nil {
		return nil, err
	}
	counts := st.Counts
	resp := &portfoliov1.GetStorageResponse{
		Backend: string(st.Engine), Schema: st.Schema, SchemaVersion: int32(st.SchemaVersion),
		IdeaCount: int32(counts.Ideas), QuestionCount: int32(counts.Questions),
		IdeaTagCount: int32(counts.IdeaTags), HealthSnapshotCount: int32(counts.Snapshots),
	}
	// The connection target (host, database, file path) only for the
	// administrator; anyone else gets the public view.
	if authz.FromContext(ctx).Is(authz.Admin) {
		resp.Database, resp.TargetsShown = st.Target, true
	}
	return resp, nil
}

// GetProgress implements PortfolioService.GetProgress.
func (h *Handler) GetProgress(ctx context.Context, req *portfoliov1.GetProgressRequest) (*portfoliov1.GetProgressResponse, error) {
	p, err := h.app.Progress(ctx, req.Limit, req.GetOffset())
	if err != nil {
		return nil, err
	}
	resp := &portfoliov1.GetProgressResponse{TotalIdeas: int32(p.Total), CompletionPct: p.CompletionPct,
		ByStage: make(map[string]*portfoliov1.StageBucket, len(p.ByStage))}
	for s, b := range p.ByStage {
		resp.ByStage[string(s)] = &portfoliov1.StageBucket{Count: int32(b.Count), IdeaIds: b.IdeaIDs}
	}
	return resp, nil
}

// ListTags implements PortfolioService.ListTags.
func (h *Handler) ListTags(ctx context.Context, _ *portfoliov1.ListTagsRequest) (*portfoliov1.ListTagsResponse, error) {
	tags, err := h.app.Tags(ctx)
	if err != nil {
		return nil, err
	}
	resp := &portfoliov1.ListTagsResponse{Tags: make([]*portfoliov1.TagCount, 0, len(tags))}
	for _, t := range tags {
		resp.Tags = append(resp.Tags, &portfoliov1.TagCount{Tag: t.Tag, IdeaCount: int32(t.Ideas)})
	}
	return resp, nil
}

// SetIdeaTags implements PortfolioService.SetIdeaTags.
func (h *Handler) SetIdeaTags(ctx context.Context, req *portfoliov1.SetIdeaTagsRequest) (*portfoliov1.SetIdeaTagsResponse, error) {
	i, err := h.app.SetTags(ctx, editor(ctx), req.GetId(), append([]string{}, req.GetTags()...))
	if err != nil {
		return nil, err
	}
	return &portfoliov1.SetIdeaTagsResponse{Idea: toProto(i)}, nil
}

// AddQuestion implements PortfolioService.AddQuestion.
func (h *Handler) AddQuestion(ctx context.Context, req *portfoliov1.AddQuestionRequest) (*portfoliov1.AddQuestionResponse, error) {
	q, err := h.app.AddQuestion(ctx, req.GetId(), req.GetQuestion())
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &portfoliov1.AddQuestionResponse{Question: questionProto(q)}, nil
}

// ListQuestions implements PortfolioService.ListQuestions.
func (h *Handler) ListQuestions(ctx context.Context, req *portfoliov1.ListQuestionsRequest) (*portfoliov1.ListQuestionsResponse, error) {
	qs, err := h.app.Questions(ctx, req.GetId())
	if err != nil {
		return nil, err
	}
	resp := &portfoliov1.ListQuestionsResponse{Questions: make([]*portfoliov1.Question, 0, len(qs))}
	for _, q := range qs {
		resp.Questions = append(resp.Questions, questionProto(q))
	}
	return resp, nil
}

func questionProto(q store.Question) *portfoliov1.Question {
	return &portfoliov1.Question{Id: q.ID, IdeaId: q.IdeaID, Question: q.Text, Status: q.Status, CreatedAt: wire.Time(q.CreatedAt)}
}

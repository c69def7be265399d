// Package peer adapts the gRPC clients of other Foundry services to what
// the agent's use cases need of them, mapping their status codes back to
// domain failures.
package peer

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	portfoliointernalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/agent/internal/loop"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// Portfolio advances ideas and lists the loop's candidates through the
// portfolio's gRPC API.
type Portfolio struct {
	client   portfoliov1.PortfolioServiceClient
	internal portfoliointernalv1.PortfolioInternalServiceClient
}

var (
	_ usecase.Ideas  = Portfolio{}
	_ loop.Portfolio = Portfolio{}
)

// NewPortfolio returns the adapter over a connection to the portfolio.
func NewPortfolio(conn grpc.ClientConnInterface) Portfolio {
	return Portfolio{client: portfoliov1.NewPortfolioServiceClient(conn), internal: portfoliointernalv1.NewPortfolioInternalServiceClient(conn)}
}

// AdvanceForTask implements usecase.Ideas: an unknown idea is
// fault.NotFound, an id or type the portfolio refuses fault.Invalid, an
// unreachable portfolio fault.Unavailable; anything else is returned as is
// (all of them but the first two are retried).
func (p Portfolio) AdvanceForTask(ctx context.Context, ideaID, taskType, taskID string) error {
	_, err := p.internal.AdvanceForTask(ctx, &portfoliointernalv1.AdvanceForTaskRequest{IdeaId: ideaID, TaskType: taskType, TaskId: taskID})
	switch status.Code(err) {
	case codes.OK:
		return nil
	case codes.NotFound:
		return fault.New(fault.NotFound, "idea %s not found", ideaID)
	case codes.InvalidArgument:
		return fault.New(fault.Invalid, "the portfolio refused the advancement: %s", status.Convert(err).Message())
	case codes.Unavailable, codes.DeadlineExceeded:
		return fault.New(fault.Unavailable, "the portfolio is not reachable: %s", status.Convert(err).Message())
	}
	return err
}

// Candidates implements loop.Portfolio: the portfolio's ListCandidates
// (active ideas not yet complete, best score first) with the task type each
// one's stage calls for.
func (p Portfolio) Candidates(ctx context.Context, limit int) ([]loop.Candidate, error) {
	n := int32(min(max(limit, 1), 500))
	resp, err := p.internal.ListCandidates(ctx, &portfoliointernalv1.ListCandidatesRequest{Limit: &n})
	if err != nil {
		return nil, fmt.Errorf("list the portfolio's candidates: %w", err)
	}
	out := make([]loop.Candidate, 0, len(resp.GetCandidates()))
	for _, c := range resp.GetCandidates() {
		i := c.GetIdea()
		out = append(out, loop.Candidate{IdeaID: i.GetId(), Name: i.GetName(), Score: i.GetScore(), Stage: stage(i.GetStage()),
			NextType: c.GetNextTaskType(), Description: i.GetDescription(), PotentialValue: i.GetPotentialValue(),
			EstimatedCost: i.GetEstimatedCost(), Confidence: i.GetConfidence()})
	}
	return out, nil
}

// Stage implements loop.Portfolio.
func (p Portfolio) Stage(ctx context.Context, ideaID string) (string, error) {
	resp, err := p.client.GetIdea(ctx, &portfoliov1.GetIdeaRequest{Id: ideaID})
	if err != nil {
		return "", fmt.Errorf("read idea %s: %w", ideaID, err)
	}
	return stage(resp.GetIdea().GetStage()), nil
}

// stage is the word of an idea's stage, as the portfolio's rules name it.
func stage(s portfoliov1.Stage) string { return wire.Word(portfoliov1.Stage_name, s) }

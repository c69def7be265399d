// Package peer adapts the gRPC clients of other Foundry services to what
// the ledger's use cases need of them, mapping their status codes back to
// domain failures.
package peer

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Portfolio looks ideas up through the portfolio's gRPC API.
type Portfolio struct {
	client portfoliov1.PortfolioServiceClient
}

// NewPortfolio returns the adapter over a connection to the portfolio.
func NewPortfolio(conn grpc.ClientConnInterface) Portfolio {
	return Portfolio{client: portfoliov1.NewPortfolioServiceClient(conn)}
}

// Idea implements usecase.Ideas: an unknown idea is fault.NotFound, an
// unreachable portfolio fault.Unavailable (503, retry), and a malformed id
// the portfolio refuses is fault.Invalid.
func (p Portfolio) Idea(ctx context.Context, id string) (usecase.IdeaInfo, error) {
	resp, err := p.client.GetIdea(ctx, &portfoliov1.GetIdeaRequest{Id: id})
	if err != nil {
		switch status.Code(err) {
		case codes.NotFound:
			return usecase.IdeaInfo{}, fault.New(fault.NotFound, "idea %s not found", id)
		case codes.InvalidArgument:
			return usecase.IdeaInfo{}, fault.Validation(fault.Field("idea_id", "is not a valid idea id"))
		case codes.Unavailable, codes.DeadlineExceeded:
			return usecase.IdeaInfo{}, fault.New(fault.Unavailable, "the portfolio is not reachable: try again shortly")
		}
		return usecase.IdeaInfo{}, err
	}
	i := resp.GetIdea()
	return usecase.IdeaInfo{ID: i.GetId(), Stage: i.GetStage(), Confidence: i.GetConfidence()}, nil
}

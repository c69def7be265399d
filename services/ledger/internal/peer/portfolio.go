// Package peer adapts the gRPC clients of other Foundry services to what
// the ledger's use cases need of them, mapping their status codes back to
// domain failures.
package peer

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	portfoliointernalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// Portfolio looks ideas up and tells them their impact through the
// portfolio's gRPC API.
type Portfolio struct {
	client   portfoliov1.PortfolioServiceClient
	internal portfoliointernalv1.PortfolioInternalServiceClient
	cache    *ideaCache
}

var (
	_ usecase.Ideas       = Portfolio{}
	_ usecase.ImpactBoard = Portfolio{}
)

// NewPortfolio returns the adapter over a connection to the portfolio.
func NewPortfolio(conn grpc.ClientConnInterface) Portfolio {
	return Portfolio{client: portfoliov1.NewPortfolioServiceClient(conn), internal: portfoliointernalv1.NewPortfolioInternalServiceClient(conn),
		cache: &ideaCache{ideas: map[string]cachedIdea{}}}
}

// IdeaCacheFor is how long an idea the portfolio found is reused. Every
// stake asks whether its idea exists (and for its stage and confidence,
// for the projection it answers): a call to another service on each
// movement cost as much as the movement itself. Ideas are never deleted,
// so a cached idea exists; its stage and confidence are at most this old.
const IdeaCacheFor = time.Second

// ideaCacheSize bounds the cache; when full it starts again empty.
const ideaCacheSize = 10000

type cachedIdea struct {
	info    usecase.IdeaInfo
	expires time.Time
}

type ideaCache struct {
	mu    sync.Mutex
	ideas map[string]cachedIdea
}

func (c *ideaCache) get(id string, now time.Time) (usecase.IdeaInfo, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.ideas[id]
	if !ok || !now.Before(e.expires) {
		return usecase.IdeaInfo{}, false
	}
	return e.info, true
}

func (c *ideaCache) put(id string, info usecase.IdeaInfo, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.ideas) >= ideaCacheSize {
		clear(c.ideas)
	}
	c.ideas[id] = cachedIdea{info: info, expires: now.Add(IdeaCacheFor)}
}

// Idea implements usecase.Ideas: an unknown idea is fault.NotFound, an
// unreachable portfolio fault.Unavailable (503, retry), and a malformed id
// the portfolio refuses is fault.Invalid.
func (p Portfolio) Idea(ctx context.Context, id string) (usecase.IdeaInfo, error) {
	now := time.Now()
	if info, ok := p.cache.get(id, now); ok {
		return info, nil
	}
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
	info := usecase.IdeaInfo{ID: i.GetId(), Stage: wire.Word(portfoliov1.Stage_name, i.GetStage()), Confidence: i.GetConfidence(),
		Pending: i.GetReviewStatus() == "pending", CreatedBy: i.GetCreatedBy().GetValue()}
	// A pending idea is never kept: an operator's acceptance must let
	// others stake at once, not a cache's lifetime later. An accepted one
	// put back to pending takes stakes for at most IdeaCacheFor more.
	if !info.Pending {
		p.cache.put(id, info, now)
	}
	return info, nil
}

// SetImpact implements usecase.ImpactBoard: an unknown idea is
// fault.NotFound, an unreachable portfolio fault.Unavailable.
func (p Portfolio) SetImpact(ctx context.Context, ideaID string, version int64, t store.ImpactTotals) error {
	_, err := p.internal.SetIdeaImpact(ctx, &portfoliointernalv1.SetIdeaImpactRequest{IdeaId: ideaID, Version: version,
		UsageRecords: int64(t.UsageRecords), RevenueRecords: int64(t.RevenueRecords), EarnedMicros: int64(t.EarnedCC),
		RevenueMicros: int64(t.RevenueUSD), PaidMicros: int64(t.PaidCC), LastRecordedAt: wire.Time(t.LastAt)})
	switch status.Code(err) {
	case codes.OK:
		return nil
	case codes.NotFound:
		return fault.New(fault.NotFound, "idea %s not found", ideaID)
	case codes.Unavailable, codes.DeadlineExceeded:
		return fault.New(fault.Unavailable, "the portfolio is not reachable: %s", status.Convert(err).Message())
	}
	return err
}

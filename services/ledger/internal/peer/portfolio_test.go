package peer

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// countingPortfolio answers GetIdea for idea "i1" (stage from stage,
// review from review, accepted when "") and counts the calls.
type countingPortfolio struct {
	portfoliov1.PortfolioServiceClient
	calls  int
	stage  portfoliov1.Stage
	review string
}

func (c *countingPortfolio) GetIdea(_ context.Context, in *portfoliov1.GetIdeaRequest, _ ...grpc.CallOption) (*portfoliov1.GetIdeaResponse, error) {
	c.calls++
	if in.GetId() != "i1" {
		return nil, status.Error(codes.NotFound, "no such idea")
	}
	review := c.review
	if review == "" {
		review = "accepted"
	}
	return &portfoliov1.GetIdeaResponse{Idea: &portfoliov1.Idea{Id: "i1", Stage: c.stage, Confidence: 0.5, ReviewStatus: review,
		CreatedBy: wrapperspb.String("ada")}}, nil
}

// TestIdeaLookupsAreCachedBriefly: a found idea is asked for once per
// IdeaCacheFor; an unknown one every time (it may be created any moment).
func TestIdeaLookupsAreCachedBriefly(t *testing.T) {
	t.Parallel()
	fake := &countingPortfolio{stage: portfoliov1.Stage_specced}
	p := Portfolio{client: fake, cache: &ideaCache{ideas: map[string]cachedIdea{}}}
	ctx := context.Background()
	for range 3 {
		info, err := p.Idea(ctx, "i1")
		require.NoError(t, err)
		require.Equal(t, usecase.IdeaInfo{ID: "i1", Stage: "specced", Confidence: 0.5, CreatedBy: "ada"}, info)
	}
	require.Equal(t, 1, fake.calls, "found once, then from the cache")

	for range 2 {
		_, err := p.Idea(ctx, "nope")
		fe, ok := fault.As(err)
		require.True(t, ok)
		require.Equal(t, fault.NotFound, fe.Kind)
	}
	require.Equal(t, 3, fake.calls, "a miss is never cached")

	// Past its time the idea is asked for again, and its new stage shows.
	p.cache.mu.Lock()
	e := p.cache.ideas["i1"]
	e.expires = e.expires.Add(-2 * IdeaCacheFor)
	p.cache.ideas["i1"] = e
	p.cache.mu.Unlock()
	fake.stage = portfoliov1.Stage_implementing
	info, err := p.Idea(ctx, "i1")
	require.NoError(t, err)
	require.Equal(t, "implementing", info.Stage)
	require.Equal(t, 4, fake.calls)
}

// TestPendingIdeasAreNeverCached: an operator's acceptance lets others
// stake on an idea at once, so a pending idea is asked for every time.
func TestPendingIdeasAreNeverCached(t *testing.T) {
	t.Parallel()
	fake := &countingPortfolio{stage: portfoliov1.Stage_none, review: "pending"}
	p := Portfolio{client: fake, cache: &ideaCache{ideas: map[string]cachedIdea{}}}
	ctx := context.Background()
	for range 2 {
		info, err := p.Idea(ctx, "i1")
		require.NoError(t, err)
		require.Equal(t, usecase.IdeaInfo{ID: "i1", Stage: "none", Confidence: 0.5, Pending: true, CreatedBy: "ada"}, info)
	}
	require.Equal(t, 2, fake.calls, "asked each time")
	fake.review = "accepted"
	info, err := p.Idea(ctx, "i1")
	require.NoError(t, err)
	require.False(t, info.Pending, "accepted as soon as the portfolio says so")
}

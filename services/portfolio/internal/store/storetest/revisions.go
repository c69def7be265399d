package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// runRevisions is the revisions topic: every change of what steers an
// idea, read back a page at a time, oldest first.
func runRevisions(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()

	t.Run("revisions: an idea's steering in time order, its own only, paged", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.create(t, NewIdea(t, "a", 1, 1), NewIdea(t, "b", 1, 1))
		pending := idea.Steering{Name: "Mine", PotentialValue: 10, EstimatedCost: 5, ActualValue: 0.25, ActualCost: 0.5,
			Confidence: 0.5, ResistanceRisk: 1, Review: idea.Pending}
		claimed := pending
		claimed.PotentialValue, claimed.Confidence, claimed.EstimatedCost = 1e9, 1, 0
		accepted := claimed
		accepted.PotentialValue, accepted.Review = 500, idea.Accepted
		revs := []store.Revision{
			{ID: "r2", IdeaID: "a", Steering: claimed, At: T0.Add(time.Minute), Actor: "ada-id", ActorHandle: "ada", Reason: "update"},
			{ID: "r1", IdeaID: "a", Steering: pending, At: T0, Actor: "ada-id", ActorHandle: "ada", Reason: "created"},
			{ID: "r3", IdeaID: "a", Steering: accepted, At: T0.Add(time.Minute), Actor: "admin", Reason: "update"},
			{ID: "x", IdeaID: "b", Steering: accepted, At: T0, Actor: "admin", Reason: "created"},
		}
		for _, r := range revs {
			require.NoError(t, h.write(func(rs repos) error { return rs.ideas.RecordRevision(ctx, r) }))
		}
		got, total, err := h.read().ideas.Revisions(ctx, "a", 10, 0)
		require.NoError(t, err)
		require.Equal(t, []store.Revision{revs[1], revs[0], revs[2]}, got,
			"by time, then id; every steering field as written; a handle only where one was given")
		require.Equal(t, 3, total)
		got, total, err = h.read().ideas.Revisions(ctx, "a", 1, 1)
		require.NoError(t, err)
		require.Equal(t, []store.Revision{revs[0]}, got, "a page")
		require.Equal(t, 3, total, "the total counts every page")
		past, total, err := h.read().ideas.Revisions(ctx, "a", 10, 3)
		require.NoError(t, err)
		require.NotNil(t, past)
		require.Empty(t, past, "past the end: empty, not nil")
		require.Equal(t, 3, total, "past the end still counts")
		_, _, err = h.read().ideas.Revisions(ctx, "missing", 10, 0)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

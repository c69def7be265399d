package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runDeliveries checks GitHub push deliveries: each is recorded once, by
// its delivery id or else by repository and commit.
func runDeliveries(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("a GitHub delivery creates contributor and asset once; its key is claimed once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		first := GitHubDelivery("d-1", "octocat", "octo/repo", 250_000, base)
		c, err := record(h, first)
		require.NoError(t, err)
		require.Equal(t, first.Asset.ID, c.AssetID)
		require.Equal(t, first.Contribution.ID, c.ID)

		second := GitHubDelivery("d-2", "octocat", "octo/repo", 100_000, base.Add(time.Second))
		c2, err := record(h, second)
		require.NoError(t, err)
		require.Equal(t, first.Asset.ID, c2.AssetID, "the repository's asset is reused")

		s := h.read()
		asset, err := s.attribution.GetAsset(ctx, first.Asset.ID)
		require.NoError(t, err)
		require.Equal(t, "octo/repo", asset.GitHubRepository)
		require.Equal(t, money.Micros(350_000), asset.TotalCost)
		who, err := s.identity.GetContributor(ctx, "github:octocat")
		require.NoError(t, err)
		require.Equal(t, attribution.TrustGitHub, who.TrustLevel)
		stored, err := s.attribution.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, first.Contribution.Metadata, stored.Metadata)
		require.Equal(t, attribution.SourceGitHub, stored.Source)

		again := GitHubDelivery("d-1", "someone-else", "other/repo", 9_000_000, base.Add(time.Hour))
		_, err = record(h, again)
		require.ErrorIs(t, err, store.ErrAlreadyExists, "a redelivery claims nothing")
		orig, err := s.attribution.DeliveryContribution(ctx, again)
		require.NoError(t, err)
		require.Equal(t, stored, orig, "the original, found by the key")
		counts, err := s.attribution.Counts(ctx)
		require.NoError(t, err)
		people, err := s.identity.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"contributions": 2, "assets": 1, "contributors": 1, "github_deliveries": 2},
			map[string]int{"contributions": counts["contributions"], "assets": counts["assets"], "contributors": people["contributors"], "github_deliveries": counts["github_deliveries"]},
			"the redelivery created nothing")
	})

	t.Run("a delivery without an id is claimed once per repository and commit", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		first := CommitDelivery("abc123", "octocat", "octo/repo", 250_000, base)
		c, err := record(h, first)
		require.NoError(t, err)
		require.Equal(t, first.Contribution.ID, c.ID)

		again := CommitDelivery("abc123", "someone-else", "octo/repo", 9_000_000, base.Add(time.Hour))
		_, err = record(h, again)
		require.ErrorIs(t, err, store.ErrAlreadyExists, "the same repository and commit is a redelivery")
		s := h.read().attribution
		stored, err := s.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		orig, err := s.DeliveryContribution(ctx, again)
		require.NoError(t, err)
		require.Equal(t, stored, orig, "the original, found by repository and commit")

		for _, other := range []store.GitHubContribution{
			CommitDelivery("abc123", "octocat", "octo/other", 100_000, base), // another repository
			CommitDelivery("def456", "octocat", "octo/repo", 100_000, base),  // another commit
			GitHubDelivery("d-1", "octocat", "octo/repo", 100_000, base),     // a delivery id is its own key
			GitHubDelivery("d-2", "octocat", "octo/repo", 100_000, base),     // (even for the same commit)
		} {
			_, err := record(h, other)
			require.NoError(t, err, "%s %s %s", other.DeliveryID, other.Asset.GitHubRepository, other.CommitHash)
		}
		counts, err := s.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"contributions": 5, "github_deliveries": 2, "github_commits": 3},
			map[string]int{"contributions": counts["contributions"], "github_deliveries": counts["github_deliveries"], "github_commits": counts["github_commits"]})

		_, err = record(h, CommitDelivery("", "octocat", "octo/repo", 1, base))
		require.Error(t, err, "a delivery with neither key cannot be recorded once")
		require.NotErrorIs(t, err, store.ErrAlreadyExists)
	})
}

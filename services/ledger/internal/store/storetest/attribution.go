package storetest

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

var base = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

func newAsset(typ string, at time.Time) store.Asset {
	return store.Asset{ID: uuid.NewString(), Type: typ, Name: "asset " + typ, Description: "d", CreatedAt: at}
}

// NewContribution is an API contribution of cost by contributorID to assetID.
func NewContribution(contributorID, assetID string, cost money.Micros, at time.Time) store.Contribution {
	return store.Contribution{
		ID: uuid.NewString(), ContributorID: contributorID, AssetID: assetID, Cost: cost,
		Coherence: attribution.CoherenceBase, Metadata: map[string]any{}, Source: attribution.SourceAPI, CreatedAt: at,
	}
}

// Implicit is a contributor created by a contribution (no handle).
func Implicit(id string, at time.Time) store.Contributor {
	return store.Contributor{ID: id, TrustLevel: attribution.TrustImplicit, CreatedAt: at}
}

// add records c by an implicit contributor in one transaction, as the
// contribution use case does: ensure the contributor, then add.
func add(h Harness, c store.Contribution, at time.Time) error {
	ctx := context.Background()
	return h.write(func(r repos) error {
		if err := r.identity.EnsureContributor(ctx, Implicit(c.ContributorID, at)); err != nil {
			return err
		}
		return r.attribution.AddContribution(ctx, c)
	})
}

// contribute records a contribution by an implicit contributor.
func contribute(t *testing.T, h Harness, contributorID, assetID string, cost money.Micros, at time.Time) store.Contribution {
	t.Helper()
	c := NewContribution(contributorID, assetID, cost, at)
	require.NoError(t, add(h, c, at))
	return c
}

func createAsset(t *testing.T, h Harness, at time.Time) store.Asset {
	t.Helper()
	a := newAsset(attribution.TypeCode, at)
	require.NoError(t, h.write(func(r repos) error { return r.attribution.CreateAsset(context.Background(), a) }))
	return a
}

// record records a delivery in its own transaction.
func record(h Harness, g store.GitHubContribution) (store.Contribution, error) {
	var c store.Contribution
	err := h.write(func(r repos) error {
		var err error
		c, err = r.attribution.RecordGitHubContribution(context.Background(), g)
		return err
	})
	return c, err
}

// CommitDelivery is a delivery without an id, recognised by repo and hash.
func CommitDelivery(hash, login, repo string, cost money.Micros, at time.Time) store.GitHubContribution {
	g := GitHubDelivery("", login, repo, cost, at)
	g.CommitHash = hash
	g.Contribution.Metadata = map[string]any{"github": map[string]any{"commit_hash": hash}}
	return g
}

// GitHubDelivery is a push delivery with an id, by login, to repository repo.
func GitHubDelivery(deliveryID, login, repo string, cost money.Micros, at time.Time) store.GitHubContribution {
	c := NewContribution("github:"+login, "", cost, at)
	c.Source = attribution.SourceGitHub
	c.Metadata = map[string]any{"github": map[string]any{"delivery_id": deliveryID}}
	return store.GitHubContribution{
		DeliveryID:   deliveryID,
		Contributor:  store.Contributor{ID: "github:" + login, TrustLevel: attribution.TrustGitHub, CreatedAt: at},
		Asset:        store.Asset{ID: uuid.NewString(), Type: attribution.TypeCode, Name: repo, GitHubRepository: repo, CreatedAt: at},
		Contribution: c,
	}
}

// insertDistribution records d in its own transaction.
func insertDistribution(t *testing.T, h Harness, d store.Distribution) {
	t.Helper()
	require.NoError(t, h.write(func(r repos) error { return r.attribution.InsertDistribution(context.Background(), d) }))
}

func runAttribution(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("assets round-trip and start at zero", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := newAsset(attribution.TypeModel, base.Add(123*time.Microsecond))
		a.TotalCost, a.ContributionCount = 99, 7 // ignored on create
		create := func() error { return h.write(func(r repos) error { return r.attribution.CreateAsset(ctx, a) }) }
		require.NoError(t, create())
		got, err := h.read().attribution.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		a.TotalCost, a.ContributionCount = 0, 0
		require.Equal(t, a, got)

		_, err = h.read().attribution.GetAsset(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, create(), store.ErrAlreadyExists)
	})

	t.Run("assets list newest first, paged", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		var ids []string
		for i := range 5 {
			ids = append(ids, createAsset(t, h, base.Add(time.Duration(i)*time.Second)).ID)
		}
		s := h.read().attribution
		page, err := s.ListAssets(ctx, 2, 0)
		require.NoError(t, err)
		require.Equal(t, []string{ids[4], ids[3]}, assetIDs(page))
		page, err = s.ListAssets(ctx, 2, 4)
		require.NoError(t, err)
		require.Equal(t, []string{ids[0]}, assetIDs(page))
		page, err = s.ListAssets(ctx, 10, 5)
		require.NoError(t, err)
		require.NotNil(t, page, "an empty page is empty, not nil")
		require.Empty(t, page)
	})

	t.Run("a contribution grows the total and round-trips", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		c := NewContribution("someone", a.ID, 1_234_567, base.Add(time.Second))
		c.Coherence = 800
		c.Metadata = map[string]any{"has_docs": true, "n": 2.0, "nested": map[string]any{"k": "v"}}
		require.NoError(t, add(h, c, base))

		s := h.read()
		got, err := s.attribution.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
		asset, err := s.attribution.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(1_234_567), asset.TotalCost)
		require.Equal(t, 1, asset.ContributionCount)
		who, err := s.identity.GetContributor(ctx, "someone")
		require.NoError(t, err)
		require.Equal(t, Implicit("someone", base), who)

		_, err = s.attribution.GetContribution(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("a contribution to an unknown asset: not found, and its transaction writes nothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		err := add(h, NewContribution("ghost", "no-such-asset", 1, base), base)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = h.read().identity.GetContributor(ctx, "ghost")
		require.ErrorIs(t, err, store.ErrNotFound, "the contributor was rolled back")
		counts, err := h.read().attribution.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 0, counts["contributions"])
	})

	t.Run("the asset total has a ceiling and a refused contribution writes nothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		for range 9 {
			contribute(t, h, "big", a.ID, attribution.MaxAmount, base)
		}
		err := add(h, NewContribution("big", a.ID, 1, base), base)
		require.ErrorIs(t, err, store.ErrTotalTooLarge)
		got, err := h.read().attribution.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, attribution.MaxAssetTotal, got.TotalCost)
		require.Equal(t, 9, got.ContributionCount)
		counts, err := h.read().attribution.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 9, counts["contributions"])
	})

	t.Run("contribution lists are ordered by time then id", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		other := createAsset(t, h, base)
		late := contribute(t, h, "amy", a.ID, 1, base.Add(2*time.Second))
		early := contribute(t, h, "bob", a.ID, 2, base.Add(time.Second))
		same1 := contribute(t, h, "amy", a.ID, 3, base.Add(3*time.Second))
		same2 := contribute(t, h, "amy", other.ID, 4, base.Add(3*time.Second))
		if same2.ID < same1.ID {
			same1, same2 = same2, same1
		}

		s := h.read().attribution
		got, err := s.ListAssetContributions(ctx, a.ID, 500, 0)
		require.NoError(t, err)
		var wantAsset []string
		for _, c := range []store.Contribution{early, late, same1, same2} {
			if c.AssetID == a.ID {
				wantAsset = append(wantAsset, c.ID)
			}
		}
		require.Equal(t, wantAsset, contributionIDs(got))

		got, err = s.ListContributorContributions(ctx, "amy", 500, 0)
		require.NoError(t, err)
		require.Equal(t, []string{late.ID, same1.ID, same2.ID}, contributionIDs(got))
		got, err = s.ListContributorContributions(ctx, "amy", 2, 1)
		require.NoError(t, err)
		require.Equal(t, []string{same1.ID, same2.ID}, contributionIDs(got), "paged")
		got, err = s.ListAssetContributions(ctx, a.ID, 1, 0)
		require.NoError(t, err)
		require.Equal(t, wantAsset[:1], contributionIDs(got), "paged")

		_, err = s.ListAssetContributions(ctx, "missing", 500, 0)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.ListContributorContributions(ctx, "missing", 500, 0)
		require.ErrorIs(t, err, store.ErrNotFound)

		empty := createAsset(t, h, base)
		got, err = s.ListAssetContributions(ctx, empty.ID, 500, 0)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
	})

	t.Run("thousands of tenths add up exactly", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		a := createAsset(t, h, base)
		for range 2000 {
			contribute(t, h, "tenths", a.ID, 100_000, base) // 0.1
		}
		got, err := h.read().attribution.GetAsset(context.Background(), a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(200*money.Scale), got.TotalCost)
		require.Equal(t, 200.0, got.TotalCost.Float64())
	})

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

	t.Run("stakes are summed per contributor and coherence", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		contribute(t, h, "A", a.ID, 60*money.Scale, base)
		contribute(t, h, "A", a.ID, 40*money.Scale, base)
		c := NewContribution("B", a.ID, 100*money.Scale, base)
		c.Coherence = attribution.CoherenceMax
		require.NoError(t, add(h, c, base))

		s := h.read().attribution
		stakes, err := s.AssetStakes(ctx, a.ID)
		require.NoError(t, err)
		require.ElementsMatch(t, []attribution.Stake{
			{ContributorID: "A", Cost: 100 * money.Scale, Coherence: attribution.CoherenceBase},
			{ContributorID: "B", Cost: 100 * money.Scale, Coherence: attribution.CoherenceMax},
		}, stakes, "costs are summed per contributor and coherence")

		empty := createAsset(t, h, base)
		stakes, err = s.AssetStakes(ctx, empty.ID)
		require.NoError(t, err)
		require.Empty(t, stakes)
		_, err = s.AssetStakes(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("distributions persist with their payouts in order", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		contribute(t, h, "A", a.ID, 1, base)
		contribute(t, h, "B", a.ID, 1, base)

		d := store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: 100 * money.Scale, CreatedAt: base,
			Payouts: []attribution.Payout{{ContributorID: "B", Amount: 60 * money.Scale}, {ContributorID: "A", Amount: 40 * money.Scale}}}
		insertDistribution(t, h, d)
		s := h.read().attribution
		got, err := s.GetDistribution(ctx, d.ID, 100, 0)
		require.NoError(t, err)
		d.PayoutCount = 2
		require.Equal(t, d, got, "the payout count is the number of payouts")

		empty := createAsset(t, h, base)
		e := store.Distribution{ID: uuid.NewString(), AssetID: empty.ID, Value: 5, CreatedAt: base.Add(time.Second), Payouts: []attribution.Payout{}}
		insertDistribution(t, h, e)
		gotEmpty, err := s.GetDistribution(ctx, e.ID, 100, 0)
		require.NoError(t, err)
		require.Equal(t, []attribution.Payout{}, gotEmpty.Payouts, "read back as empty, not nil")
		require.Equal(t, 0, gotEmpty.PayoutCount)

		second := store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: 0, CreatedAt: base.Add(time.Second),
			Payouts: []attribution.Payout{{ContributorID: "A", Amount: 0}, {ContributorID: "B", Amount: 0}}, PayoutCount: 2}
		insertDistribution(t, h, second)
		list, total, err := s.ListAssetDistributions(ctx, a.ID, 10, 0, 10)
		require.NoError(t, err)
		require.Equal(t, []store.Distribution{d, second}, list)
		require.Equal(t, 2, total)
		list, total, err = s.ListAssetDistributions(ctx, a.ID, 1, 1, 10)
		require.NoError(t, err)
		require.Equal(t, []store.Distribution{second}, list, "a page")
		require.Equal(t, 2, total, "the total counts every page")
		list, total, err = s.ListAssetDistributions(ctx, a.ID, 10, 5, 10)
		require.NoError(t, err)
		require.Equal(t, []store.Distribution{}, list, "past the end: empty, not nil")
		require.Equal(t, 2, total)
		list, total, err = s.ListAssetDistributions(ctx, empty.ID, 10, 0, 10)
		require.NoError(t, err)
		require.Equal(t, []store.Distribution{gotEmpty}, list)
		require.Equal(t, 1, total)

		_, err = s.GetDistribution(ctx, "missing", 100, 0)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, _, err = s.ListAssetDistributions(ctx, "missing", 10, 0, 10)
		require.ErrorIs(t, err, store.ErrNotFound)
		counts, err := s.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, counts["distributions"])
		require.Equal(t, 4, counts["payouts"])
	})

	t.Run("a distribution with more payouts than one insert batch, read back by pages", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		const n = 1234
		d := store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: n * money.Scale, CreatedAt: base, PayoutCount: n}
		for i := range n {
			d.Payouts = append(d.Payouts, attribution.Payout{ContributorID: fmt.Sprintf("p%04d", i), Amount: money.Micros(n - i)})
		}
		require.NoError(t, h.write(func(r repos) error {
			for _, p := range d.Payouts {
				if err := r.identity.EnsureContributor(ctx, Implicit(p.ContributorID, base)); err != nil {
					return err
				}
			}
			return nil
		}))
		insertDistribution(t, h, d)
		s := h.read().attribution
		got, err := s.GetDistribution(ctx, d.ID, 2*n, 0)
		require.NoError(t, err)
		require.Equal(t, n, got.PayoutCount)
		require.Len(t, got.Payouts, n)
		require.Equal(t, d.Payouts, got.Payouts, "order kept")

		// Pages of payouts, in order, with the count of all of them.
		var paged []attribution.Payout
		for offset := 0; offset < n; offset += 500 {
			page, err := s.GetDistribution(ctx, d.ID, 500, offset)
			require.NoError(t, err)
			require.Equal(t, n, page.PayoutCount)
			require.Len(t, page.Payouts, min(500, n-offset), "page at %d", offset)
			paged = append(paged, page.Payouts...)
		}
		require.Equal(t, d.Payouts, paged, "the pages make up the whole list")
		for _, offset := range []int{n, n + 1, math.MaxInt32} {
			past, err := s.GetDistribution(ctx, d.ID, 1000, offset)
			require.NoError(t, err, "offset %d", offset)
			require.Equal(t, []attribution.Payout{}, past.Payouts, "offset %d: empty, not nil", offset)
			require.Equal(t, n, past.PayoutCount)
		}
		list, total, err := s.ListAssetDistributions(ctx, a.ID, 10, 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, total)
		require.Len(t, list, 1)
		require.Equal(t, d.Payouts[:10], list[0].Payouts, "a list carries the first payouts of each")
		require.Equal(t, n, list[0].PayoutCount)
	})
}

func assetIDs(as []store.Asset) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.ID
	}
	return out
}

func contributionIDs(cs []store.Contribution) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

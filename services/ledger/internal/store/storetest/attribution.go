package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
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

func newContribution(contributorID, assetID string, cost money.Micros, at time.Time) store.Contribution {
	return store.Contribution{
		ID: uuid.NewString(), ContributorID: contributorID, AssetID: assetID, Cost: cost,
		Coherence: attribution.CoherenceBase, Metadata: map[string]any{}, Source: attribution.SourceAPI, CreatedAt: at,
	}
}

func implicit(id string, at time.Time) store.Contributor {
	return store.Contributor{ID: id, TrustLevel: attribution.TrustImplicit, CreatedAt: at}
}

// contribute records a contribution by an implicit contributor.
func contribute(t *testing.T, s store.Store, contributorID, assetID string, cost money.Micros, at time.Time) store.Contribution {
	t.Helper()
	c := newContribution(contributorID, assetID, cost, at)
	require.NoError(t, s.CreateContribution(context.Background(), c, implicit(contributorID, at)))
	return c
}

func createAsset(t *testing.T, s store.Store, at time.Time) store.Asset {
	t.Helper()
	a := newAsset(attribution.TypeCode, at)
	require.NoError(t, s.CreateAsset(context.Background(), a))
	return a
}

func githubDelivery(deliveryID, login, repo string, cost money.Micros, at time.Time) store.GitHubContribution {
	c := newContribution("github:"+login, "", cost, at)
	c.Source = attribution.SourceGitHub
	c.Metadata = map[string]any{"github": map[string]any{"delivery_id": deliveryID}}
	return store.GitHubContribution{
		DeliveryID:   deliveryID,
		Contributor:  store.Contributor{ID: "github:" + login, TrustLevel: attribution.TrustGitHub, CreatedAt: at},
		Asset:        store.Asset{ID: uuid.NewString(), Type: attribution.TypeCode, Name: repo, GitHubRepository: repo, CreatedAt: at},
		Contribution: c,
	}
}

func runAttribution(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("assets round-trip and start at zero", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a := newAsset(attribution.TypeModel, base.Add(123*time.Microsecond))
		a.TotalCost, a.ContributionCount = 99, 7 // ignored on create
		require.NoError(t, s.CreateAsset(ctx, a))
		got, err := s.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		a.TotalCost, a.ContributionCount = 0, 0
		require.Equal(t, a, got)

		_, err = s.GetAsset(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, s.CreateAsset(ctx, a), store.ErrAlreadyExists)
	})

	t.Run("assets list newest first, paged", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		var ids []string
		for i := range 5 {
			ids = append(ids, createAsset(t, s, base.Add(time.Duration(i)*time.Second)).ID)
		}
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

	t.Run("a contribution grows the total, creates its contributor, round-trips", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a := createAsset(t, s, base)
		c := newContribution("someone", a.ID, 1_234_567, base.Add(time.Second))
		c.Coherence = 800
		c.Metadata = map[string]any{"has_docs": true, "n": 2.0, "nested": map[string]any{"k": "v"}}
		require.NoError(t, s.CreateContribution(ctx, c, implicit("someone", base)))

		got, err := s.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
		asset, err := s.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(1_234_567), asset.TotalCost)
		require.Equal(t, 1, asset.ContributionCount)
		who, err := s.GetContributor(ctx, "someone")
		require.NoError(t, err)
		require.Equal(t, implicit("someone", base), who)

		_, err = s.GetContribution(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.GetContributor(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("an existing contributor is reused as it is", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		registered := contributor("erin", base)
		require.NoError(t, s.Register(ctx, registered, store.Session{TokenHash: "h", CreatedAt: base}))
		a := createAsset(t, s, base)
		contribute(t, s, registered.ID, a.ID, 5, base)
		got, err := s.GetContributor(ctx, registered.ID)
		require.NoError(t, err)
		require.Equal(t, registered, got, "handle and trust level untouched")
	})

	t.Run("a contribution to an unknown asset writes nothing", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		err := s.CreateContribution(ctx, newContribution("ghost", "no-such-asset", 1, base), implicit("ghost", base))
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.GetContributor(ctx, "ghost")
		require.ErrorIs(t, err, store.ErrNotFound, "the contributor was rolled back")
		counts, err := s.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 0, counts["contributions"])
	})

	t.Run("the asset total has a ceiling and a refused contribution writes nothing", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a := createAsset(t, s, base)
		for range 9 {
			contribute(t, s, "big", a.ID, attribution.MaxAmount, base)
		}
		err := s.CreateContribution(ctx, newContribution("big", a.ID, 1, base), implicit("big", base))
		require.ErrorIs(t, err, store.ErrTotalTooLarge)
		got, err := s.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, attribution.MaxAssetTotal, got.TotalCost)
		require.Equal(t, 9, got.ContributionCount)
	})

	t.Run("contribution lists are ordered by time then id", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a := createAsset(t, s, base)
		other := createAsset(t, s, base)
		late := contribute(t, s, "amy", a.ID, 1, base.Add(2*time.Second))
		early := contribute(t, s, "bob", a.ID, 2, base.Add(time.Second))
		same1 := contribute(t, s, "amy", a.ID, 3, base.Add(3*time.Second))
		same2 := contribute(t, s, "amy", other.ID, 4, base.Add(3*time.Second))
		if same2.ID < same1.ID {
			same1, same2 = same2, same1
		}

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

		empty := createAsset(t, s, base)
		got, err = s.ListAssetContributions(ctx, empty.ID, 500, 0)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
	})

	t.Run("50 concurrent contributions to one asset: exact total, 50 rows", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a := createAsset(t, s, base)
		const n = 50
		rng := rand.New(rand.NewPCG(1, 2))
		costs := make([]money.Micros, n)
		var want money.Micros
		for i := range costs {
			costs[i] = money.Micros(rng.Int64N(10_000_000_000)) // up to 10 000.000000, any micro-unit
			want += costs[i]
		}
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				id := fmt.Sprintf("c%d", i%7) // shared contributors race on creation too
				errs[i] = s.CreateContribution(ctx, newContribution(id, a.ID, costs[i], time.Now().UTC()), implicit(id, base))
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		got, err := s.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, want, got.TotalCost)
		require.Equal(t, n, got.ContributionCount)
		list, err := s.ListAssetContributions(ctx, a.ID, 500, 0)
		require.NoError(t, err)
		require.Len(t, list, n)
		counts, err := s.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 7, counts["contributors"])
	})

	t.Run("thousands of tenths add up exactly", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		a := createAsset(t, s, base)
		for range 2000 {
			contribute(t, s, "tenths", a.ID, 100_000, base) // 0.1
		}
		got, err := s.GetAsset(context.Background(), a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(200*money.Scale), got.TotalCost)
		require.Equal(t, 200.0, got.TotalCost.Float64())
	})

	t.Run("a GitHub delivery creates contributor and asset once", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		first := githubDelivery("d-1", "octocat", "octo/repo", 250_000, base)
		c, dup, err := s.RecordGitHubContribution(ctx, first)
		require.NoError(t, err)
		require.False(t, dup)
		require.Equal(t, first.Asset.ID, c.AssetID)
		require.Equal(t, first.Contribution.ID, c.ID)

		second := githubDelivery("d-2", "octocat", "octo/repo", 100_000, base.Add(time.Second))
		c2, dup, err := s.RecordGitHubContribution(ctx, second)
		require.NoError(t, err)
		require.False(t, dup)
		require.Equal(t, first.Asset.ID, c2.AssetID, "the repository's asset is reused")

		asset, err := s.GetAsset(ctx, first.Asset.ID)
		require.NoError(t, err)
		require.Equal(t, "octo/repo", asset.GitHubRepository)
		require.Equal(t, money.Micros(350_000), asset.TotalCost)
		who, err := s.GetContributor(ctx, "github:octocat")
		require.NoError(t, err)
		require.Equal(t, attribution.TrustGitHub, who.TrustLevel)
		stored, err := s.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, first.Contribution.Metadata, stored.Metadata)
		require.Equal(t, attribution.SourceGitHub, stored.Source)

		again := githubDelivery("d-1", "someone-else", "other/repo", 9_000_000, base.Add(time.Hour))
		orig, dup, err := s.RecordGitHubContribution(ctx, again)
		require.NoError(t, err)
		require.True(t, dup)
		require.Equal(t, stored, orig, "a redelivery returns the original")
		counts, err := s.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"contributions": 2, "assets": 1, "contributors": 1, "github_deliveries": 2},
			map[string]int{"contributions": counts["contributions"], "assets": counts["assets"], "contributors": counts["contributors"], "github_deliveries": counts["github_deliveries"]},
			"the redelivery created nothing")
	})

	t.Run("100 concurrent redeliveries make one contribution", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		const n = 100
		var wg sync.WaitGroup
		results := make([]store.Contribution, n)
		dups := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				results[i], dups[i], errs[i] = s.RecordGitHubContribution(ctx, githubDelivery("same", "octocat", "octo/repo", 250_000, base))
			})
		}
		wg.Wait()
		fresh := 0
		for i := range n {
			require.NoError(t, errs[i])
			if !dups[i] {
				fresh++
			}
			require.Equal(t, results[0].ID, results[i].ID, "every answer names the same contribution")
		}
		require.Equal(t, 1, fresh)
		counts, err := s.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts["contributions"])
		require.Equal(t, 1, counts["assets"])
		assets, err := s.ListAssets(ctx, 10, 0)
		require.NoError(t, err)
		require.Equal(t, money.Micros(250_000), assets[0].TotalCost)
	})

	t.Run("concurrent first deliveries for a new repository make one asset", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		const n = 20
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				_, _, errs[i] = s.RecordGitHubContribution(ctx, githubDelivery(fmt.Sprint("d", i), fmt.Sprint("user", i%3), "new/repo", 100_000, base))
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		assets, err := s.ListAssets(ctx, 10, 0)
		require.NoError(t, err)
		require.Len(t, assets, 1)
		require.Equal(t, money.Micros(n*100_000), assets[0].TotalCost)
		require.Equal(t, n, assets[0].ContributionCount)
	})

	t.Run("distributions split the summed stakes and persist", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a := createAsset(t, s, base)
		contribute(t, s, "A", a.ID, 60*money.Scale, base)
		contribute(t, s, "A", a.ID, 40*money.Scale, base)
		c := newContribution("B", a.ID, 100*money.Scale, base)
		c.Coherence = attribution.CoherenceMax
		require.NoError(t, s.CreateContribution(ctx, c, implicit("B", base)))

		var seen []attribution.Stake
		d, err := s.CreateDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: 100 * money.Scale, CreatedAt: base},
			func(stakes []attribution.Stake) []attribution.Payout {
				seen = stakes
				return attribution.Split(100*money.Scale, stakes)
			})
		require.NoError(t, err)
		require.ElementsMatch(t, []attribution.Stake{
			{ContributorID: "A", Cost: 100 * money.Scale, Coherence: attribution.CoherenceBase},
			{ContributorID: "B", Cost: 100 * money.Scale, Coherence: attribution.CoherenceMax},
		}, seen, "costs are summed per contributor and coherence")
		require.Equal(t, []attribution.Payout{{ContributorID: "B", Amount: 60 * money.Scale}, {ContributorID: "A", Amount: 40 * money.Scale}}, d.Payouts)

		got, err := s.GetDistribution(ctx, d.ID)
		require.NoError(t, err)
		require.Equal(t, d, got)

		empty := createAsset(t, s, base)
		e, err := s.CreateDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: empty.ID, Value: 5, CreatedAt: base.Add(time.Second)},
			func(stakes []attribution.Stake) []attribution.Payout { return attribution.Split(5, stakes) })
		require.NoError(t, err)
		require.Equal(t, []attribution.Payout{}, e.Payouts)
		got, err = s.GetDistribution(ctx, e.ID)
		require.NoError(t, err)
		require.Equal(t, []attribution.Payout{}, got.Payouts, "read back as empty, not nil")

		second, err := s.CreateDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: 0, CreatedAt: base.Add(time.Second)},
			func(stakes []attribution.Stake) []attribution.Payout { return attribution.Split(0, stakes) })
		require.NoError(t, err)
		list, err := s.ListAssetDistributions(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, []store.Distribution{d, second}, list)
		list, err = s.ListAssetDistributions(ctx, empty.ID)
		require.NoError(t, err)
		require.Equal(t, []store.Distribution{got}, list)

		_, err = s.CreateDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: "missing", CreatedAt: base},
			func([]attribution.Stake) []attribution.Payout { return nil })
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.GetDistribution(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = s.ListAssetDistributions(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("a distribution with more payouts than one insert batch", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		a := createAsset(t, s, base)
		const n = 1234
		for i := range n {
			contribute(t, s, fmt.Sprintf("p%04d", i), a.ID, money.Cent, base)
		}
		d, err := s.CreateDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: n * money.Scale, CreatedAt: base},
			func(stakes []attribution.Stake) []attribution.Payout { return attribution.Split(n*money.Scale, stakes) })
		require.NoError(t, err)
		got, err := s.GetDistribution(ctx, d.ID)
		require.NoError(t, err)
		require.Len(t, got.Payouts, n)
		require.Equal(t, d.Payouts, got.Payouts, "order kept")
		for _, p := range got.Payouts {
			require.Equal(t, money.Micros(money.Scale), p.Amount, p.ContributorID)
		}
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

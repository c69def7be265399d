package usecase_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/store/storetest"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// contribute records a contribution by an implicit contributor (or an
// existing one, whose handle the answer carries).
func contribute(t *testing.T, e env, contributorID, assetID string, cost money.Micros, at time.Time) store.Contribution {
	t.Helper()
	c := storetest.NewContribution(contributorID, assetID, cost, at)
	got, err := e.app.AddContribution(context.Background(), c, storetest.Implicit(contributorID, at), nil)
	require.NoError(t, err)
	c.ContributorHandle = got.ContributorHandle // checked where it matters
	require.Equal(t, c, got)
	return got
}

// createAsset creates an asset at the clock's time (t0 unless a test moved it).
func createAsset(t *testing.T, e env) store.Asset {
	t.Helper()
	a, err := e.app.CreateAsset(context.Background(), usecase.CreateAssetCmd{Type: attribution.TypeCode, Name: "asset", Description: "d"})
	require.NoError(t, err)
	return a
}

// contributor reads a contributor straight from the repository (no use
// case reads one alone).
func contributor(t *testing.T, e env, id string) (store.Contributor, error) {
	t.Helper()
	return sqlstore.NewIdentity(e.db).GetContributor(context.Background(), id)
}

func TestContributionCreatesItsContributorAndGrowsTheTotal(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		a := createAsset(t, e)
		c := storetest.NewContribution("someone", a.ID, 1_234_567, t0.Add(time.Second))
		c.Coherence = 800
		c.Metadata = map[string]any{"has_docs": true, "n": 2.0, "nested": map[string]any{"k": "v"}}
		_, err := e.app.AddContribution(ctx, c, storetest.Implicit("someone", t0), nil)
		require.NoError(t, err)

		got, err := e.app.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
		asset, err := e.app.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(1_234_567), asset.TotalCost)
		require.Equal(t, 1, asset.ContributionCount)
		who, err := contributor(t, e, "someone")
		require.NoError(t, err)
		require.Equal(t, storetest.Implicit("someone", t0), who)
		list, err := items(e.app.ListContributorContributions(ctx, "someone", page(10, 0)))
		require.NoError(t, err)
		require.Equal(t, []store.Contribution{c}, list)
		list, err = items(e.app.ListAssetContributions(ctx, a.ID, page(10, 0)))
		require.NoError(t, err)
		require.Equal(t, []store.Contribution{c}, list)
		assets, err := items(e.app.ListAssets(ctx, page(10, 0)))
		require.NoError(t, err)
		require.Equal(t, []store.Asset{asset}, assets)

		_, err = e.app.GetContribution(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = contributor(t, e, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

func TestContributionReusesAnExistingContributor(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		registered := handleOwner("erin", t0)
		require.NoError(t, e.app.Register(ctx, registered, store.Session{TokenHash: "h", CreatedAt: t0}))
		a := createAsset(t, e)
		c := contribute(t, e, registered.ID, a.ID, 5, t0)
		require.Equal(t, "erin", c.ContributorHandle, "the answer names the registered contributor")
		got, err := contributor(t, e, registered.ID)
		require.NoError(t, err)
		require.Equal(t, registered, got, "handle and trust level untouched")
	})
}

func TestContributionRefusedWritesNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		_, err := e.app.AddContribution(ctx, storetest.NewContribution("ghost", "no-such-asset", 1, t0), storetest.Implicit("ghost", t0), nil)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = contributor(t, e, "ghost")
		require.ErrorIs(t, err, store.ErrNotFound, "the contributor was rolled back")
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 0, counts["contributions"])
		require.Equal(t, 0, counts["contributors"])

		a := createAsset(t, e)
		for range 9 {
			contribute(t, e, "big", a.ID, attribution.MaxAmount, t0)
		}
		_, err = e.app.AddContribution(ctx, storetest.NewContribution("bigger", a.ID, 1, t0), storetest.Implicit("bigger", t0), nil)
		require.ErrorIs(t, err, store.ErrTotalTooLarge)
		got, err := e.app.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, attribution.MaxAssetTotal, got.TotalCost)
		require.Equal(t, 9, got.ContributionCount)
		_, err = contributor(t, e, "bigger")
		require.ErrorIs(t, err, store.ErrNotFound, "the contributor was rolled back")
	})
}

func TestConcurrentContributionsToOneAsset(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		a := createAsset(t, e)
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
				_, errs[i] = e.app.AddContribution(ctx, storetest.NewContribution(id, a.ID, costs[i], time.Now().UTC()), storetest.Implicit(id, t0), nil)
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		got, err := e.app.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, want, got.TotalCost, "exact total")
		require.Equal(t, n, got.ContributionCount)
		list, err := items(e.app.ListAssetContributions(ctx, a.ID, page(500, 0)))
		require.NoError(t, err)
		require.Len(t, list, n)
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 7, counts["contributors"])
	})
}

func TestGitHubDeliveryRecordedOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		first := storetest.GitHubDelivery("d-1", "octocat", "octo/repo", 250_000, t0)
		c, dup, err := e.app.RecordGitHubContribution(ctx, first)
		require.NoError(t, err)
		require.False(t, dup)
		require.Equal(t, first.Asset.ID, c.AssetID)
		require.Equal(t, first.Contribution.ID, c.ID)

		second := storetest.GitHubDelivery("d-2", "octocat", "octo/repo", 100_000, t0.Add(time.Second))
		c2, dup, err := e.app.RecordGitHubContribution(ctx, second)
		require.NoError(t, err)
		require.False(t, dup)
		require.Equal(t, first.Asset.ID, c2.AssetID, "the repository's asset is reused")

		asset, err := e.app.GetAsset(ctx, first.Asset.ID)
		require.NoError(t, err)
		require.Equal(t, "octo/repo", asset.GitHubRepository)
		require.Equal(t, money.Micros(350_000), asset.TotalCost)
		who, err := contributor(t, e, "github:octocat")
		require.NoError(t, err)
		require.Equal(t, attribution.TrustGitHub, who.TrustLevel)
		stored, err := e.app.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, first.Contribution.Metadata, stored.Metadata)
		require.Equal(t, attribution.SourceGitHub, stored.Source)

		again := storetest.GitHubDelivery("d-1", "someone-else", "other/repo", 9_000_000, t0.Add(time.Hour))
		orig, dup, err := e.app.RecordGitHubContribution(ctx, again)
		require.NoError(t, err)
		require.True(t, dup)
		require.Equal(t, stored, orig, "a redelivery returns the original")
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"contributions": 2, "assets": 1, "contributors": 1, "github_deliveries": 2},
			map[string]int{"contributions": counts["contributions"], "assets": counts["assets"], "contributors": counts["contributors"], "github_deliveries": counts["github_deliveries"]},
			"the redelivery created nothing")
	})
}

func TestGitHubDeliveryWithoutIDRecordedOncePerCommit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		first := storetest.CommitDelivery("abc123", "octocat", "octo/repo", 250_000, t0)
		c, dup, err := e.app.RecordGitHubContribution(ctx, first)
		require.NoError(t, err)
		require.False(t, dup)
		require.Equal(t, first.Contribution.ID, c.ID)

		again := storetest.CommitDelivery("abc123", "someone-else", "octo/repo", 9_000_000, t0.Add(time.Hour))
		orig, dup, err := e.app.RecordGitHubContribution(ctx, again)
		require.NoError(t, err)
		require.True(t, dup, "the same repository and commit is a redelivery")
		stored, err := e.app.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, stored, orig, "a redelivery returns the original")

		for _, other := range []store.GitHubContribution{
			storetest.CommitDelivery("abc123", "octocat", "octo/other", 100_000, t0), // another repository
			storetest.CommitDelivery("def456", "octocat", "octo/repo", 100_000, t0),  // another commit
			storetest.GitHubDelivery("d-1", "octocat", "octo/repo", 100_000, t0),     // a delivery id is its own key
			storetest.GitHubDelivery("d-2", "octocat", "octo/repo", 100_000, t0),     // (even for the same commit)
		} {
			_, dup, err := e.app.RecordGitHubContribution(ctx, other)
			require.NoError(t, err)
			require.False(t, dup, "%s %s %s", other.DeliveryID, other.Asset.GitHubRepository, other.CommitHash)
		}
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"contributions": 5, "github_deliveries": 2, "github_commits": 3},
			map[string]int{"contributions": counts["contributions"], "github_deliveries": counts["github_deliveries"], "github_commits": counts["github_commits"]})

		_, _, err = e.app.RecordGitHubContribution(ctx, storetest.CommitDelivery("", "octocat", "octo/repo", 1, t0))
		require.Error(t, err, "a delivery with neither key cannot be recorded once")
	})
}

// redeliver sends the delivery made by g concurrently n times and checks
// that exactly one answer recorded it and every answer names it.
func redeliver(t *testing.T, e env, n int, g func() store.GitHubContribution) {
	t.Helper()
	var wg sync.WaitGroup
	results := make([]store.Contribution, n)
	dups := make([]bool, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			results[i], dups[i], errs[i] = e.app.RecordGitHubContribution(context.Background(), g())
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
}

func TestConcurrentRedeliveriesMakeOneContribution(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		redeliver(t, e, 100, func() store.GitHubContribution {
			return storetest.GitHubDelivery("same", "octocat", "octo/repo", 250_000, t0)
		})
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts["contributions"])
		require.Equal(t, 1, counts["assets"])
		assets, err := items(e.app.ListAssets(ctx, page(10, 0)))
		require.NoError(t, err)
		require.Equal(t, money.Micros(250_000), assets[0].TotalCost)
	})
}

func TestConcurrentCommitDeliveriesWithoutIDMakeOneContribution(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		redeliver(t, e, 50, func() store.GitHubContribution {
			return storetest.CommitDelivery("abc123", "octocat", "octo/repo", 250_000, t0)
		})
		assets, err := items(e.app.ListAssets(ctx, page(10, 0)))
		require.NoError(t, err)
		require.Len(t, assets, 1)
		require.Equal(t, money.Micros(250_000), assets[0].TotalCost, "counted once")
		require.Equal(t, 1, assets[0].ContributionCount)
	})
}

func TestConcurrentFirstDeliveriesForANewRepositoryMakeOneAsset(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		const n = 20
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() {
				_, _, errs[i] = e.app.RecordGitHubContribution(ctx, storetest.GitHubDelivery(fmt.Sprint("d", i), fmt.Sprint("user", i%3), "new/repo", 100_000, t0))
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
		assets, err := items(e.app.ListAssets(ctx, page(10, 0)))
		require.NoError(t, err)
		require.Len(t, assets, 1)
		require.Equal(t, money.Micros(n*100_000), assets[0].TotalCost)
		require.Equal(t, n, assets[0].ContributionCount)
	})
}

func TestDistributionsSplitTheSummedStakesAndPersist(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		a := createAsset(t, e)
		contribute(t, e, "A", a.ID, 60*money.Scale, t0)
		contribute(t, e, "A", a.ID, 40*money.Scale, t0)
		c := storetest.NewContribution("B", a.ID, 100*money.Scale, t0)
		c.Coherence = attribution.CoherenceMax
		_, err := e.app.AddContribution(ctx, c, storetest.Implicit("B", t0), nil)
		require.NoError(t, err)

		// A's two contributions are one stake of 100 at base coherence,
		// B's one of 100 at the maximum: B weighs 1.5 times A.
		d, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: 100 * money.Scale, CreatedAt: t0})
		require.NoError(t, err)
		require.Equal(t, []attribution.Payout{{ContributorID: "B", Amount: 60 * money.Scale}, {ContributorID: "A", Amount: 40 * money.Scale}}, d.Payouts)
		require.Equal(t, 2, d.PayoutCount)
		read, err := e.app.GetDistribution(ctx, d.ID, page(100, 0))
		require.NoError(t, err)
		require.Equal(t, usecase.PayoutPage{Distribution: d, Limit: 100}, read)

		empty := createAsset(t, e)
		ed, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: empty.ID, Value: 5, CreatedAt: t0.Add(time.Second)})
		require.NoError(t, err)
		require.Equal(t, []attribution.Payout{}, ed.Payouts)
		read, err = e.app.GetDistribution(ctx, ed.ID, page(100, 0))
		require.NoError(t, err)
		require.Equal(t, []attribution.Payout{}, read.Payouts, "read back as empty, not nil")
		require.Equal(t, 0, read.PayoutCount)
		got := read.Distribution
		read, err = e.app.GetDistribution(ctx, ed.ID, usecase.Page{Offset: 3})
		require.NoError(t, err)
		require.Equal(t, []int{attribution.DefaultPayoutPage, 3}, []int{read.Limit, read.Offset}, "the default page's bounds")

		second, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: 0, CreatedAt: t0.Add(time.Second)})
		require.NoError(t, err)
		list, err := e.app.ListAssetDistributions(ctx, a.ID, page(10, 0))
		require.NoError(t, err)
		require.Equal(t, usecase.DistributionPage{Distributions: []store.Distribution{d, second}, Limit: 10, Total: 2}, list)
		list, err = e.app.ListAssetDistributions(ctx, a.ID, page(1, 1))
		require.NoError(t, err)
		require.Equal(t, []store.Distribution{second}, list.Distributions, "a page")
		require.Equal(t, 2, list.Total, "the total counts every page")
		list, err = e.app.ListAssetDistributions(ctx, a.ID, page(10, 5))
		require.NoError(t, err)
		require.Equal(t, []store.Distribution{}, list.Distributions, "past the end: empty, not nil")
		require.Equal(t, 2, list.Total)
		list, err = e.app.ListAssetDistributions(ctx, empty.ID, usecase.Page{})
		require.NoError(t, err)
		require.Equal(t, usecase.DistributionPage{Distributions: []store.Distribution{got}, Limit: attribution.DefaultDistributionPage, Total: 1},
			list, "the default page")

		_, err = e.app.CreateStoreDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: "missing", CreatedAt: t0})
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = e.app.CreateDistribution(ctx, usecase.CreateDistributionCmd{AssetID: "missing", ValueAmount: 1})
		require.ErrorIs(t, err, store.ErrNotFound, "the command, as the API sends it")
		_, err = e.app.GetDistribution(ctx, "missing", page(100, 0))
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = e.app.ListAssetDistributions(ctx, "missing", page(10, 0))
		require.ErrorIs(t, err, store.ErrNotFound)
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 3, counts["distributions"], "the refused one wrote nothing")
	})
}

// TestCreateDistributionCommand: the command as the API sends it records
// the request's value, at the app's clock, under a new id.
func TestCreateDistributionCommand(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		a := createAsset(t, e)
		contribute(t, e, "A", a.ID, money.Scale, t0)
		e.clock.Advance(time.Minute)
		d, err := e.app.CreateDistribution(ctx, usecase.CreateDistributionCmd{AssetID: a.ID, ValueAmount: 12.5})
		require.NoError(t, err)
		require.NotEmpty(t, d.ID)
		require.Equal(t, money.Micros(12_500_000), d.Value)
		require.Equal(t, t0.Add(time.Minute), d.CreatedAt)
		require.False(t, d.PaidCC)
		require.Equal(t, []attribution.Payout{{ContributorID: "A", Amount: 12_500_000}}, d.Payouts)
		got, err := e.app.GetDistribution(ctx, d.ID, page(100, 0))
		require.NoError(t, err)
		require.Equal(t, d, got.Distribution)
	})
}

func TestDistributionWithMorePayoutsThanOneInsertBatch(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		a := createAsset(t, e)
		const n = 1234
		for i := range n {
			contribute(t, e, fmt.Sprintf("p%04d", i), a.ID, money.Cent, t0)
		}
		d, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: n * money.Scale, CreatedAt: t0})
		require.NoError(t, err)
		require.Equal(t, n, d.PayoutCount)
		for _, p := range d.Payouts {
			require.Equal(t, money.Micros(money.Scale), p.Amount, p.ContributorID)
		}

		// Pages of payouts, in order, with the count of all of them.
		var paged []attribution.Payout
		for offset := 0; offset < n; offset += 500 {
			page, err := e.app.GetDistribution(ctx, d.ID, page(500, offset))
			require.NoError(t, err)
			require.Equal(t, n, page.PayoutCount)
			require.Equal(t, []int{500, offset}, []int{page.Limit, page.Offset}, "the page's bounds")
			require.Len(t, page.Payouts, min(500, n-offset), "page at %d", offset)
			paged = append(paged, page.Payouts...)
		}
		require.Equal(t, d.Payouts, paged, "the pages make up the whole list")
		for _, offset := range []int{n, n + 1, math.MaxInt32} {
			past, err := e.app.GetDistribution(ctx, d.ID, page(1000, offset))
			require.NoError(t, err, "offset %d", offset)
			require.Equal(t, []attribution.Payout{}, past.Payouts, "offset %d: empty, not nil", offset)
			require.Equal(t, n, past.PayoutCount)
		}
		list, err := e.app.ListAssetDistributions(ctx, a.ID, page(10, 0))
		require.NoError(t, err)
		require.Equal(t, 1, list.Total)
		require.Len(t, list.Distributions, 1)
		require.Equal(t, d.Payouts[:attribution.ListedPayouts], list.Distributions[0].Payouts, "a list carries the first payouts of each")
		require.Equal(t, n, list.Distributions[0].PayoutCount)
	})
}

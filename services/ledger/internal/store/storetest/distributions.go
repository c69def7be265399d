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

// runDistributions checks a distribution's input (the asset's stakes) and
// the distributions with their payouts, read back whole or by pages.
func runDistributions(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("claims weigh unless backed only; a review applies once and moves the total", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		claim := NewContribution("A", a.ID, 10*money.Scale, base)
		claim.Status = attribution.StatusClaimed
		require.NoError(t, add(h, claim, base))
		require.NoError(t, add(h, NewContribution("B", a.ID, 20*money.Scale, base), base))
		other := NewContribution("C", a.ID, 5*money.Scale, base)
		other.Status = attribution.StatusClaimed
		require.NoError(t, add(h, other, base))

		s := h.read().attribution
		stakes, err := s.AssetStakes(ctx, a.ID, false)
		require.NoError(t, err)
		require.ElementsMatch(t, []attribution.Stake{
			{ContributorID: "A", Cost: 10 * money.Scale, Coherence: attribution.CoherenceBase, Claimed: true},
			{ContributorID: "B", Cost: 20 * money.Scale, Coherence: attribution.CoherenceBase},
			{ContributorID: "C", Cost: 5 * money.Scale, Coherence: attribution.CoherenceBase, Claimed: true},
		}, stakes, "an unpaid distribution weighs claims, marked")
		stakes, err = s.AssetStakes(ctx, a.ID, true)
		require.NoError(t, err)
		require.Equal(t, []attribution.Stake{{ContributorID: "B", Cost: 20 * money.Scale, Coherence: attribution.CoherenceBase}}, stakes,
			"a paid one only what is backed")

		review := func(id string, r store.Review) (store.Contribution, error) {
			var out store.Contribution
			err := h.write(func(rs repos) error {
				claim, err := rs.attribution.GetContribution(ctx, id)
				if err != nil {
					return err
				}
				out, err = rs.attribution.ReviewContribution(ctx, claim, r)
				return err
			})
			return out, err
		}
		at := base.Add(time.Hour)
		got, err := review(claim.ID, store.Review{Status: attribution.StatusAccepted, Cost: 4 * money.Scale, Coherence: 800,
			Reason: "the diff is smaller than claimed", By: "operator", At: at})
		require.NoError(t, err)
		require.Equal(t, attribution.StatusAccepted, got.Status)
		require.Equal(t, money.Micros(4*money.Scale), got.Cost)
		require.Equal(t, money.Micros(10*money.Scale), got.ClaimedCost, "the claim is kept")
		require.Equal(t, &store.Review{Status: attribution.StatusAccepted, Cost: 4 * money.Scale, Coherence: 800,
			Reason: "the diff is smaller than claimed", By: "operator", At: at}, got.Review)
		back, err := s.GetContribution(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, got, back, "what the review answered is what is stored")
		_, err = review(claim.ID, store.Review{Status: attribution.StatusRejected, Reason: "again", By: "operator", At: at})
		require.ErrorIs(t, err, store.ErrAlreadyExists, "a claim is reviewed once")
		_, err = review(other.ID, store.Review{Status: attribution.StatusRejected, Cost: 5 * money.Scale,
			Coherence: attribution.CoherenceBase, Reason: "no such work", By: "operator", At: at})
		require.NoError(t, err)
		_, err = review("missing", store.Review{Status: attribution.StatusAccepted, By: "operator", At: at})
		require.ErrorIs(t, err, store.ErrNotFound)

		asset, err := s.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(24*money.Scale), asset.TotalCost, "10 → 4 accepted, 20, and 5 rejected (nothing)")
		stakes, err = s.AssetStakes(ctx, a.ID, true)
		require.NoError(t, err)
		require.ElementsMatch(t, []attribution.Stake{
			{ContributorID: "A", Cost: 4 * money.Scale, Coherence: 800},
			{ContributorID: "B", Cost: 20 * money.Scale, Coherence: attribution.CoherenceBase},
		}, stakes, "the accepted claim is backed now; the rejected one weighs nothing")
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
		stakes, err := s.AssetStakes(ctx, a.ID, false)
		require.NoError(t, err)
		require.ElementsMatch(t, []attribution.Stake{
			{ContributorID: "A", Cost: 100 * money.Scale, Coherence: attribution.CoherenceBase},
			{ContributorID: "B", Cost: 100 * money.Scale, Coherence: attribution.CoherenceMax},
		}, stakes, "costs are summed per contributor and coherence")

		empty := createAsset(t, h, base)
		stakes, err = s.AssetStakes(ctx, empty.ID, false)
		require.NoError(t, err)
		require.Empty(t, stakes)
		_, err = s.AssetStakes(ctx, "missing", false)
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("distributions persist with their payouts in order", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		contribute(t, h, "A", a.ID, 1, base)
		contribute(t, h, "B", a.ID, 1, base)

		d := store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: 100 * money.Scale, CreatedAt: base, PaidCC: true,
			Payouts: []attribution.Payout{{ContributorID: "B", Amount: 60 * money.Scale}, {ContributorID: "A", Amount: 40 * money.Scale, Unpaid: true}}}
		insertDistribution(t, h, d)
		s := h.read().attribution
		got, err := s.GetDistribution(ctx, d.ID, 100, 0)
		require.NoError(t, err)
		d.PayoutCount = 2
		require.Equal(t, d, got, "the payout count is the number of payouts; an unpaid payout stays marked")

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

	t.Run("payouts are read back with their payees' handles", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		ada := register(t, h, "ada", base)
		contribute(t, h, ada.ID, a.ID, 2, base)
		contribute(t, h, "someone", a.ID, 1, base)
		d := store.Distribution{ID: uuid.NewString(), AssetID: a.ID, Value: 3 * money.Scale, CreatedAt: base, PayoutCount: 2,
			Payouts: []attribution.Payout{{ContributorID: ada.ID, Amount: 2 * money.Scale}, {ContributorID: "someone", Amount: money.Scale}}}
		insertDistribution(t, h, d)
		s := h.read().attribution
		got, err := s.GetDistribution(ctx, d.ID, 100, 0)
		require.NoError(t, err)
		require.Equal(t, map[string]string{ada.ID: "ada"}, got.Handles, "only the payee who registered")
		got, err = s.GetDistribution(ctx, d.ID, 100, 1)
		require.NoError(t, err)
		require.Nil(t, got.Handles, "a page without a registered payee has none")
		list, _, err := s.ListAssetDistributions(ctx, a.ID, 10, 0, 10)
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, map[string]string{ada.ID: "ada"}, list[0].Handles)
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

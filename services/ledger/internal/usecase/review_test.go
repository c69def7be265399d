package usecase_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/github"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// payouts is a distribution's payouts by contributor: amount and the
// claimed part.
func payouts(d store.Distribution) map[string][2]money.Micros {
	out := map[string][2]money.Micros{}
	for _, p := range d.Payouts {
		out[p.ContributorID] = [2]money.Micros{p.Amount, p.Claimed}
	}
	return out
}

// TestAContributorDoesNotGradeItself: the flags (has_tests,
// has_docs, complexity low) used to raise a contributor's score from 0.5
// to 1.0 and its payout weight by half; now they are kept as the claim and
// change nothing, and a contributor's own contribution is a claim.
func TestAContributorDoesNotGradeItself(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		a := createAsset(t, e)
		flags := map[string]any{"has_tests": true, "has_docs": true, "complexity": "low"}
		flagged, err := e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "ada", AssetID: a.ID,
			CostAmount: f64(10), Metadata: flags}, nil)
		require.NoError(t, err)
		bare, err := e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "bob", AssetID: a.ID,
			CostAmount: f64(10), Metadata: map[string]any{}}, nil)
		require.NoError(t, err)
		require.Equal(t, attribution.CoherenceBase, flagged.Coherence, "the flags are not scored")
		require.Equal(t, bare.Coherence, flagged.Coherence)
		require.Equal(t, flags, flagged.Metadata, "they are kept as the claim")
		require.Equal(t, attribution.StatusClaimed, flagged.Status)

		d, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "d0", AssetID: a.ID, Value: 20 * cc, CreatedAt: t0})
		require.NoError(t, err)
		require.Equal(t, map[string][2]money.Micros{"ada": {10 * cc, 10 * cc}, "bob": {10 * cc, 10 * cc}}, payouts(d),
			"equal payouts, each wholly a claim's")

		op, err := e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "cyd", AssetID: a.ID,
			CostAmount: f64(1), ByOperator: true}, nil)
		require.NoError(t, err)
		require.Equal(t, attribution.StatusAccepted, op.Status, "an operator's record needs no review")
	})
}

// TestClaimsArePaidOnlyOnceAccepted: a distribution paid in CC pays
// accepted and verified contributions only; a claim is paid once an
// operator accepts it (at the corrected cost and the reviewer's score), a
// rejected one never; a review applies once.
func TestClaimsArePaidOnlyOnceAccepted(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		// The payees registered: CC is minted only to those.
		e := setup(t, engine, "ada", "claimer", "done")
		ctx := context.Background()
		// 100 USD mints 9 950 CC: 50 CC of surplus to pay out.
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 100, Reference: "r"}, nil)
		require.NoError(t, err)
		a := createAsset(t, e)
		claim, err := e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "claimer", AssetID: a.ID,
			CostAmount: f64(30)}, nil)
		require.NoError(t, err)
		_, err = e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "done", AssetID: a.ID,
			CostAmount: f64(10), ByOperator: true}, nil)
		require.NoError(t, err)

		paid, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "p1", AssetID: a.ID, Value: 20 * cc, CreatedAt: t0, PaidCC: true})
		require.NoError(t, err)
		require.Equal(t, map[string][2]money.Micros{"done": {20 * cc, 0}}, payouts(paid), "the claim is not paid")
		b, err := e.app.Balances(ctx, "claimer")
		require.NoError(t, err)
		require.Zero(t, b.Available)

		_, err = e.app.ReviewContribution(ctx, usecase.ReviewContributionCmd{ID: claim.ID, Verdict: "accept", CostAmount: f64(20),
			CoherenceScore: f64(0.7), Reason: "the diff is smaller than claimed", Actor: "operator"})
		require.NoError(t, err)
		got, err := e.app.GetContribution(ctx, claim.ID)
		require.NoError(t, err)
		require.Equal(t, attribution.StatusAccepted, got.Status)
		require.Equal(t, money.Micros(20*cc), got.Cost)
		require.Equal(t, money.Micros(30*cc), got.ClaimedCost)
		require.Equal(t, attribution.Coherence(700), got.Coherence)
		require.NotNil(t, got.Review)
		require.Equal(t, "operator", got.Review.By)

		// 20 × (0.5 + 0.7) = 24 against 10 × (0.5 + 0.5) = 10, of 10 CC.
		paid, err = e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "p2", AssetID: a.ID, Value: 10 * cc, CreatedAt: t0, PaidCC: true})
		require.NoError(t, err)
		require.Equal(t, map[string][2]money.Micros{"claimer": {7_060_000, 0}, "done": {2_940_000, 0}}, payouts(paid))
		b, err = e.app.Balances(ctx, "claimer")
		require.NoError(t, err)
		require.Equal(t, money.Micros(7_060_000), b.Available, "paid once accepted")

		_, err = e.app.ReviewContribution(ctx, usecase.ReviewContributionCmd{ID: claim.ID, Verdict: "reject", Reason: "again", Actor: "operator"})
		k, _ := kindOf(t, err)
		require.Equal(t, fault.Conflict, k, "a claim is reviewed once")

		bogus, err := e.app.CreateContribution(ctx, usecase.CreateContributionCmd{ContributorID: "claimer", AssetID: a.ID,
			CostAmount: f64(1000)}, nil)
		require.NoError(t, err)
		_, err = e.app.ReviewContribution(ctx, usecase.ReviewContributionCmd{ID: bogus.ID, Verdict: "reject", Reason: "no such work",
			Actor: "operator"})
		require.NoError(t, err)
		asset, err := e.app.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(30*cc), asset.TotalCost, "20 accepted and 10; the rejected 1 000 counts nothing")
		unpaid, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "u1", AssetID: a.ID, Value: 34 * cc, CreatedAt: t0})
		require.NoError(t, err)
		require.Equal(t, map[string][2]money.Micros{"claimer": {24 * cc, 0}, "done": {10 * cc, 0}}, payouts(unpaid),
			"a rejected claim weighs nothing, even unpaid")

		for _, c := range []struct {
			cmd  usecase.ReviewContributionCmd
			want fault.Kind
		}{
			{usecase.ReviewContributionCmd{ID: "missing", Verdict: "accept", Reason: "r"}, fault.NotFound},
			{usecase.ReviewContributionCmd{ID: bogus.ID, Verdict: "approve", Reason: "r"}, fault.Invalid},
			{usecase.ReviewContributionCmd{ID: bogus.ID, Verdict: "accept"}, fault.Invalid},
			{usecase.ReviewContributionCmd{ID: bogus.ID, Verdict: "reject", Reason: "r", CostAmount: f64(1)}, fault.Invalid},
			{usecase.ReviewContributionCmd{ID: bogus.ID, Verdict: "accept", Reason: "r", CoherenceScore: f64(1.5)}, fault.Invalid},
		} {
			_, err := e.app.ReviewContribution(ctx, c.cmd)
			k, _ := kindOf(t, err)
			require.Equal(t, c.want, k, "%+v", c.cmd)
		}
	})
}

// TestASignedDeliveryIsVerified: a signed GitHub delivery's contribution
// is verified by it and paid in CC without review, scored from the
// delivery's files; an unsigned one is a claim.
func TestASignedDeliveryIsVerified(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 100, Reference: "r"}, nil)
		require.NoError(t, err)
		push := []byte(`{"ref":"refs/heads/main","after":"` + "0123456789abcdef0123456789abcdef01234567" + `",` +
			`"repository":{"full_name":"octo/repo"},"pusher":{"name":"octocat"},` +
			`"commits":[{"id":"0123456789abcdef0123456789abcdef01234567","distinct":true,"added":["main_test.go"],"modified":["README.md"]}]}`)
		d, err := e.app.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: "d-1", Body: push, Signed: true})
		require.NoError(t, err)
		c := d.Contribution
		require.Equal(t, attribution.StatusVerified, c.Status)
		require.Equal(t, attribution.CoherenceMax, c.Coherence, "a test and a doc changed, two files: 0.5 + 0.2 + 0.2 + 0.1")
		require.True(t, github.IsTestPath("main_test.go"))

		paid, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "p1", AssetID: c.AssetID, Value: 5 * cc, CreatedAt: t0, PaidCC: true})
		require.NoError(t, err)
		require.Equal(t, map[string][2]money.Micros{c.ContributorID: {5 * cc, 0}}, payouts(paid), "paid without review")

		unsigned, err := e.app.RecordGitHubDelivery(ctx, usecase.GitHubDeliveryCmd{DeliveryID: "d-2",
			Body: bytes.ReplaceAll(push, []byte("0123456789abcdef"), []byte("fedcba9876543210"))})
		require.NoError(t, err)
		require.Equal(t, attribution.StatusClaimed, unsigned.Contribution.Status, "nothing vouches for an unsigned delivery")
	})
}

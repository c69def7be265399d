package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// claimsPayouts is a distribution's payouts by contributor id.
func claimsPayouts(t *testing.T, r response) map[string]float64 {
	t.Helper()
	requireStatus(t, http.StatusCreated, r)
	out := map[string]float64{}
	for _, p := range r.JSON["payouts"].([]any) {
		p := p.(map[string]any)
		out[p["contributor_id"].(string)] = p["amount"].(float64)
	}
	return out
}

// TestContributionsAreClaimsUntilReviewed, black-box through the
// gateway: a contributor's own flags change nothing about its score or
// its payout; its contribution is a claim, paid in CC only after an
// operator accepts it; a signed GitHub delivery's contribution is paid
// without review.
func TestContributionsAreClaimsUntilReviewed(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 100, "wire-1")) // 50 CC of surplus to pay
		asset := ledgerAsset(t, sys, "CODE")["id"].(string)
		claim := request(t, http.MethodPost, sys.URL("/api/contributions"), map[string]any{"contributor_id": ada.ID, "asset_id": asset,
			"cost_amount": 10, "metadata": map[string]any{"has_tests": true, "has_docs": true, "complexity": "low"}}, ada.auth())
		requireStatus(t, http.StatusCreated, claim)
		require.Equal(t, "claimed", claim.JSON["status"], "%s", claim.Raw)
		require.Equal(t, 0.5, claim.JSON["coherence_score"], "the contributor's own flags are not scored")
		require.Equal(t, true, claim.JSON["metadata"].(map[string]any)["has_tests"], "they are kept as its claim")
		operators := request(t, http.MethodPost, sys.URL("/api/contributions"), map[string]any{"contributor_id": "bob@example.com",
			"asset_id": asset, "cost_amount": 10}, creditAdmin)
		requireStatus(t, http.StatusCreated, operators)
		require.Equal(t, "accepted", operators.JSON["status"])

		unpaid := request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": asset, "value_amount": 20})
		requireStatus(t, http.StatusCreated, unpaid)
		require.ElementsMatch(t, []any{
			map[string]any{"contributor_id": ada.ID, "amount": 10.0, "claimed_amount": 10.0, "contributor_handle": "ada", "unpaid": false},
			map[string]any{"contributor_id": "bob@example.com", "amount": 10.0, "claimed_amount": 0.0, "contributor_handle": nil, "unpaid": false},
		}, unpaid.JSON["payouts"], "unpaid: the spec's formula over everything, the claim's part marked (the flags earned ada nothing more)")

		paid := request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": asset, "value_amount": 20, "pay_cc": true},
			creditAdmin)
		require.Equal(t, map[string]float64{"bob@example.com": 20}, claimsPayouts(t, paid), "paid in CC: the claim is not paid")
		require.Equal(t, 9950.0, creditBalances(t, sys, ada.ID).Available)

		refused := request(t, http.MethodPost, sys.URL("/api/contributions/"+claim.JSON["id"].(string)+"/review"),
			map[string]any{"verdict": "accept", "reason": "mine"}, ada.auth())
		requireStatus(t, http.StatusForbidden, refused)
		rev := request(t, http.MethodPost, sys.URL("/api/contributions/"+claim.JSON["id"].(string)+"/review"),
			map[string]any{"verdict": "accept", "cost_amount": 10, "coherence_score": 0.5, "reason": "checked the diff"}, creditAdmin)
		requireStatus(t, http.StatusOK, rev)
		require.Equal(t, "accepted", rev.JSON["status"], "%s", rev.Raw)
		require.Equal(t, "checked the diff", rev.JSON["review"].(map[string]any)["reason"])
		again := request(t, http.MethodPost, sys.URL("/api/contributions/"+claim.JSON["id"].(string)+"/review"),
			map[string]any{"verdict": "reject", "reason": "changed my mind"}, creditAdmin)
		requireStatus(t, http.StatusConflict, again)

		paid = request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": asset, "value_amount": 20, "pay_cc": true},
			creditAdmin)
		require.Equal(t, map[string]float64{ada.ID: 10, "bob@example.com": 10}, claimsPayouts(t, paid), "accepted: paid")
		require.Equal(t, 9960.0, creditBalances(t, sys, ada.ID).Available)

		// A signed delivery: verified by its evidence, paid without review.
		push := githubFixture(t, "push-with-new-branch.payload.json")
		d := deliverSigned(t, sys, "push", "delivery-claims-1", push)
		requireStatus(t, http.StatusCreated, d)
		require.Equal(t, "verified", d.JSON["status"], "%s", d.Raw)
		paid = request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": d.JSON["asset_id"], "value_amount": 5,
			"pay_cc": true}, creditAdmin)
		require.Equal(t, map[string]float64{d.JSON["contributor_id"].(string): 5}, claimsPayouts(t, paid))
	}, "-github-webhook-secret="+webhookSecret)
}

package e2e_test

import (
	"fmt"
	"math"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// CC accounts belong to the contributor and idea the movement named, not
// to whatever splitting the account's name on ':' gives (ids such as
// github:login, email:addr or "<id>:suffix" contain ':'); and a
// distribution's payouts add up to its value exactly.

// accountsMicros is a JSON amount in micro-units, so sums are exact.
func accountsMicros(x any) int64 {
	f, ok := x.(float64)
	if !ok {
		panic("not a JSON number")
	}
	return int64(math.Round(f * 1e6))
}

// accountsPayouts returns a distribution's payouts as contributor → amount
// in micro-units, and their sum.
func accountsPayouts(t *testing.T, r response) (map[string]int64, int64) {
	t.Helper()
	requireStatus(t, http.StatusCreated, r)
	out := map[string]int64{}
	var sum int64
	for _, p := range r.JSON["payouts"].([]any) {
		p := p.(map[string]any)
		out[p["contributor_id"].(string)] = accountsMicros(p["amount"])
		sum += accountsMicros(p["amount"])
	}
	return out, sum
}

// accountsContribute records a contribution for contributor as an operator
// (the administrator key), which creates a contributor of any id.
func accountsContribute(t *testing.T, sys *allinonetest.System, contributor, asset string, cost float64) {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/contributions"),
		map[string]any{"contributor_id": contributor, "asset_id": asset, "cost_amount": cost}, asAdmin)
	requireStatus(t, http.StatusCreated, r)
	require.Equal(t, contributor, r.JSON["contributor_id"])
}

// TestLedgerAccountsIDsWithColons: ids that hold ':' never alias another
// account: a payout to "<bob>:ghost" is not Bob's (it used to inflate
// Bob's balance, and a withdrawal of what Bob was shown failed), nor is
// one to github:octo a contributor "github"'s. Neither payee ever
// registered, so a distribution paid in CC records their shares unpaid
// and mints nothing for them (no session could move that CC: the issue's
// CC paid to github: and email: ids that could never be moved).
func TestLedgerAccountsIDsWithColons(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		bob := creditRegister(t, sys, "colon_bob")
		// The deposits' spread backs the CC the distribution mints.
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, creditRegister(t, sys, "colon_carol").ID, 1000, "backing"))
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, bob.ID, 10, "bob-1"))
		require.Equal(t, creditBal{Available: 995}, creditBalances(t, sys, bob.ID))

		octo, ghost := "github:octo", bob.ID+":ghost"
		asset := ledgerAsset(t, sys, "CODE")["id"].(string)
		accountsContribute(t, sys, octo, asset, 1)
		accountsContribute(t, sys, ghost, asset, 1)
		before := accountsMicros(creditSupply(t, sys)["total_cc_outstanding"])
		paid := request(t, http.MethodPost, sys.URL("/api/distributions"),
			map[string]any{"asset_id": asset, "value_amount": 100, "pay_cc": true}, asAdmin)
		payouts, sum := accountsPayouts(t, paid)
		require.Equal(t, map[string]int64{octo: 50e6, ghost: 50e6}, payouts, "the shares are recorded as computed")
		require.Equal(t, int64(100e6), sum)
		for _, p := range paid.JSON["payouts"].([]any) {
			require.Equal(t, true, p.(map[string]any)["unpaid"], "%v: never registered, so nothing is minted", p)
		}
		require.Equal(t, before, accountsMicros(creditSupply(t, sys)["total_cc_outstanding"]), "no CC nobody could move")

		require.Equal(t, creditBal{}, creditBalances(t, sys, octo))
		require.Equal(t, creditBal{}, creditBalances(t, sys, ghost))
		require.Equal(t, creditBal{Available: 995}, creditBalances(t, sys, bob.ID), "<bob>:ghost's share is not Bob's")
		requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/cc/balances/github"), nil))

		for _, id := range []string{octo, ghost} {
			require.Empty(t, creditEventKinds(creditHistory(t, sys, id)), id)
			inv := request(t, http.MethodGet, sys.URL("/api/contributors/"+id+"/investments"), nil)
			requireStatus(t, http.StatusOK, inv)
			require.Empty(t, inv.JSON["positions"], id)
		}
		require.Equal(t, []string{"deposit"}, creditEventKinds(creditHistory(t, sys, bob.ID)))

		// Bob withdraws all he is shown; then he has nothing left.
		w := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), map[string]any{"contributor_id": bob.ID, "amount_cc": 995}, bob.auth())
		requireStatus(t, http.StatusOK, w)
		require.Equal(t, creditBal{}, creditBalances(t, sys, bob.ID))

		// A stake by Bob on an idea whose id holds ':' is his, on that idea.
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, bob.ID, 10, "bob-2"))
		const idea = "colon:idea"
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/ideas"),
			map[string]any{"id": idea, "name": "an idea with ':' in its id"}, asAdmin))
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": bob.ID, "idea_id": idea, "amount_cc": 100}, bob.auth()))
		require.Equal(t, creditBal{Available: 895, Staked: 100}, creditBalances(t, sys, bob.ID))
		inv := request(t, http.MethodGet, sys.URL("/api/contributors/"+bob.ID+"/investments"), nil)
		requireStatus(t, http.StatusOK, inv)
		positions := inv.JSON["positions"].([]any)
		require.Len(t, positions, 1)
		require.Equal(t, idea, positions[0].(map[string]any)["idea_id"])
		preview := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea+"/invest-preview"), nil)
		requireStatus(t, http.StatusOK, preview)
		require.Equal(t, 100.0, preview.JSON["total_cc_staked"])
		require.Equal(t, 1.0, preview.JSON["staker_count"])

		c := request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
		requireStatus(t, http.StatusOK, c)
		require.Empty(t, c.JSON["mismatched_accounts"], "every balance matches its journal: %s", c.Raw)
		creditVerify(t, sys, creditAuditTotal(t, sys))
	}, creditFlags...)
}

// TestLedgerAccountsDistributionsAddUp: a distribution's payouts add up to
// its value exactly (largest remainder; the odd cent by contributor id):
// 100 over three equal contributors pays 100.00, not 99.99, and 0.01 over
// two pays 0.01, not 0.02; paid in CC, exactly the value is minted.
func TestLedgerAccountsDistributionsAddUp(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		distribute := func(t *testing.T, asset string, value float64, payCC bool) (map[string]int64, int64) {
			t.Helper()
			return accountsPayouts(t, request(t, http.MethodPost, sys.URL("/api/distributions"),
				map[string]any{"asset_id": asset, "value_amount": value, "pay_cc": payCC}, asAdmin))
		}

		thirds := ledgerAsset(t, sys, "DATA")["id"].(string)
		for _, who := range []string{"split-c", "split-a", "split-b"} {
			accountsContribute(t, sys, who, thirds, 1)
		}
		payouts, sum := distribute(t, thirds, 100, false)
		require.Equal(t, int64(100e6), sum, "100 over three pays 100")
		require.Equal(t, map[string]int64{"split-a": 33_340_000, "split-b": 33_330_000, "split-c": 33_330_000}, payouts)
		payouts, sum = distribute(t, thirds, 0.05, false)
		require.Equal(t, int64(50_000), sum)
		require.Equal(t, map[string]int64{"split-a": 20_000, "split-b": 20_000, "split-c": 10_000}, payouts)

		halves := ledgerAsset(t, sys, "MODEL")["id"].(string)
		for _, who := range []string{"half-b", "half-a"} {
			accountsContribute(t, sys, who, halves, 1)
		}
		payouts, sum = distribute(t, halves, 0.01, false)
		require.Equal(t, int64(10_000), sum, "0.01 over two pays 0.01")
		require.Equal(t, map[string]int64{"half-a": 10_000, "half-b": 0}, payouts)

		// Read back, the payouts are the same.
		r := request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": thirds, "value_amount": 100})
		_, sum = accountsPayouts(t, r)
		got := request(t, http.MethodGet, sys.URL("/api/distributions/"+r.JSON["id"].(string)), nil)
		requireStatus(t, http.StatusOK, got)
		require.Equal(t, r.JSON["payouts"], got.JSON["payouts"])
		require.Equal(t, int64(100e6), sum)

		// Paid in CC, the CC minted is the value, to the micro-unit (to
		// registered payees: CC minted to one that never registered could
		// never move, TestLedgerAccountsIDsWithColons).
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, creditRegister(t, sys, "split_backer").ID, 1000, "backing"))
		paidThirds, paidHalves := ledgerAsset(t, sys, "DATA")["id"].(string), ledgerAsset(t, sys, "MODEL")["id"].(string)
		var payees []string
		for i, asset := range []string{paidThirds, paidThirds, paidThirds, paidHalves, paidHalves} {
			who := creditRegister(t, sys, fmt.Sprintf("paid_%d", i)).ID
			accountsContribute(t, sys, who, asset, 1)
			payees = append(payees, who)
		}
		before := accountsMicros(creditSupply(t, sys)["total_cc_outstanding"])
		_, sum = distribute(t, paidThirds, 100, true)
		require.Equal(t, int64(100e6), sum)
		_, sum = distribute(t, paidHalves, 0.01, true)
		require.Equal(t, int64(10_000), sum)
		require.Equal(t, before+100e6+10_000, accountsMicros(creditSupply(t, sys)["total_cc_outstanding"]))
		var paid int64
		for _, who := range payees {
			paid += int64(math.Round(creditBalances(t, sys, who).Available * 1e6))
		}
		require.Equal(t, int64(100e6+10_000), paid, "the balances hold exactly what was distributed")
	}, creditFlags...)
}

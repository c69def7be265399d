package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// Impact and attribution black-box through the gateway (docs/ledger.md,
// "Impact and attribution"): the staker scenario, on both engines.

// impactPosition is a contributor's position on idea, as
// GET /api/contributors/{id}/investments answers it.
func impactPosition(t *testing.T, sys *allinonetest.System, contributorID, idea string) map[string]any {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/contributors/"+contributorID+"/investments"), nil)
	requireStatus(t, http.StatusOK, r)
	for _, p := range r.JSON["positions"].([]any) {
		if p := p.(map[string]any); p["idea_id"] == idea {
			return p
		}
	}
	t.Fatalf("%s has no position on %s: %s", contributorID, idea, r.Raw)
	return nil
}

// TestIdeaImpactPaysStakersByEarnedAttribution: three contributors stake
// different amounts at different times on one idea; a worker's usage
// records arrive; an administrator's revenue record of 100 USD pays the
// stakers exactly (the payouts sum to the CC minted) in proportion to the
// attribution they earned. The positions, the investment history, the
// audit log and the supply agree, the backing holds, and a replayed
// record changes nothing.
func TestIdeaImpactPaysStakersByEarnedAttribution(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		worker, _ := apiToken(t, sys.BaseURL, "metrics", "worker")
		idea := creditIdea(t, sys, "solar kettle")
		users := map[string]creditUser{}
		for _, h := range []string{"ada", "bob", "cyd"} {
			users[h] = creditRegister(t, sys, h)
			requireStatus(t, http.StatusCreated, creditDeposit(t, sys, users[h].ID, 20, "wire-"+h)) // 1 990 CC
		}
		stake := func(h string, cc float64) {
			r := request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/stake"), map[string]any{"contributor_id": users[h].ID,
				"amount_cc": cc}, users[h].auth())
			requireStatus(t, http.StatusCreated, r)
		}
		usage := func(ref string, quantity float64) response {
			return request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/impact"), map[string]any{"kind": "usage",
				"quantity": quantity, "unit": "requests", "evidence": "https://metrics.example/" + ref, "reference": ref}, worker)
		}
		stake("ada", 1000)
		stake("bob", 500)
		u := usage("week-1", 10)
		requireStatus(t, http.StatusCreated, u)
		require.Equal(t, 150.0, u.JSON["record"].(map[string]any)["earned_cc"], "%s", u.Raw)
		stake("cyd", 100) // after week 1: it earns from week 2 only
		requireStatus(t, http.StatusCreated, usage("week-2", 2))

		before := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea+"/invest-preview"), nil)
		requireStatus(t, http.StatusOK, before)
		require.Equal(t, "stage", before.JSON["basis"], "no revenue yet: the stage's heuristic")

		p := impactPosition(t, sys, users["ada"].ID, idea)
		require.Equal(t, map[string]any{"amount_cc": 1000.0, "earned_cc": 120.0, "attribution_cc": 1120.0, "realized_cc": 0.0,
			"gain_pct": 0.0}, pick(p, "amount_cc", "earned_cc", "attribution_cc", "realized_cc", "gain_pct"))

		refused := request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/impact"), map[string]any{"kind": "revenue",
			"amount_usd": 100, "evidence": "invoice 7", "reference": "invoice-7"}, worker)
		requireStatus(t, http.StatusForbidden, refused)

		supply := creditSupply(t, sys)
		revenue := map[string]any{"kind": "revenue", "amount_usd": 100, "evidence": "invoice 7, paid", "reference": "invoice-7"}
		rev := request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/impact"), revenue, creditAdmin)
		requireStatus(t, http.StatusCreated, rev)
		rec := rev.JSON["record"].(map[string]any)
		require.Equal(t, 9950.0, rec["minted_cc"], "100 USD at the buy rate: %s", rev.Raw)
		require.Equal(t, []any{
			map[string]any{"contributor_id": users["ada"].ID, "amount_cc": 6560.439561},
			map[string]any{"contributor_id": users["bob"].ID, "amount_cc": 3280.21978},
			map[string]any{"contributor_id": users["cyd"].ID, "amount_cc": 109.340659},
		}, rev.JSON["payouts"], "by earned attribution 120 : 60 : 2, the odd micro-CC to the largest remainder")

		after := creditSupply(t, sys)
		require.InDelta(t, supply["total_cc_outstanding"].(float64)+9950, after["total_cc_outstanding"], 1e-6)
		require.InDelta(t, supply["treasury_value_usd"].(float64)+100, after["treasury_value_usd"], 1e-6)
		require.GreaterOrEqual(t, after["reserve_ratio"], 1.0)

		p = impactPosition(t, sys, users["ada"].ID, idea)
		require.Equal(t, 6560.439561, p["realized_cc"])
		require.Equal(t, 656.04, p["gain_pct"])
		require.Equal(t, 990+6560.439561, creditBalances(t, sys, users["ada"].ID).Available, "paid into the available balance")

		preview := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea+"/invest-preview"), nil)
		requireStatus(t, http.StatusOK, preview)
		require.Equal(t, map[string]any{"basis": "impact", "paid_cc": 9950.0, "total_cc_staked": 1600.0},
			pick(preview.JSON, "basis", "paid_cc", "total_cc_staked"), "%s", preview.Raw)
		require.Equal(t, map[string]any{"low_multiplier": 7.2188, "high_multiplier": 9.2188}, preview.JSON["projections"],
			"1 + 9950/1600, and the stage's upside (none: 2.0) on top")

		hist := request(t, http.MethodGet, sys.URL("/api/contributors/"+users["bob"].ID+"/investment-history"), nil)
		requireStatus(t, http.StatusOK, hist)
		first := hist.JSON["events"].([]any)[0].(map[string]any)
		require.Equal(t, "revenue", first["kind"], "%s", hist.Raw)
		require.Equal(t, 3280.21978, first["amount_cc"])
		require.Equal(t, idea, first["idea_id"])

		waitSequenced(t, sys)
		entries, _ := creditAudit(t, sys)
		var paidInLog float64
		kinds := map[string]int{}
		for _, e := range entries {
			kinds[e.Kind]++
			if e.Kind == "revenue" {
				paidInLog += e.Amount
			}
		}
		require.Equal(t, 3, kinds["revenue"], "one movement per payee")
		require.Equal(t, 2, kinds["impact_usage"])
		require.InDelta(t, 9950, paidInLog, 1e-6, "the log records every CC paid")
		require.True(t, auditVerify(t, sys, true).Valid)

		// A replay changes nothing.
		again := request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/impact"), revenue, creditAdmin)
		requireStatus(t, http.StatusOK, again)
		require.Equal(t, true, again.JSON["duplicate"])
		require.Equal(t, rec["id"], again.JSON["record"].(map[string]any)["id"])
		require.Equal(t, after["total_cc_outstanding"], creditSupply(t, sys)["total_cc_outstanding"])
		requireStatus(t, http.StatusOK, usage("week-2", 2))
		require.Equal(t, 120.0, impactPosition(t, sys, users["ada"].ID, idea)["earned_cc"])

		list := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea+"/impact?limit=2"), nil)
		requireStatus(t, http.StatusOK, list)
		totals := list.JSON["totals"].(map[string]any)
		require.Equal(t, map[string]any{"usage_records": 2.0, "revenue_records": 1.0, "earned_cc": 182.0, "revenue_usd": 100.0,
			"paid_cc": 9950.0}, pick(totals, "usage_records", "revenue_records", "earned_cc", "revenue_usd", "paid_cc"))
		require.Equal(t, []any{map[string]any{"unit": "requests", "quantity": 12.0}}, totals["usage"])
		require.Len(t, list.JSON["records"], 2)
		require.Equal(t, 3.0, list.JSON["pagination"].(map[string]any)["total"])

		// The idea answers its totals: the ledger told the portfolio as
		// each record committed.
		got := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea), nil)
		requireStatus(t, http.StatusOK, got)
		shown, ok := got.JSON["impact"].(map[string]any)
		require.True(t, ok, "the idea carries its impact: %s", got.Raw)
		require.Equal(t, pick(totals, "usage_records", "revenue_records", "earned_cc", "revenue_usd", "paid_cc", "last_recorded_at"),
			pick(shown, "usage_records", "revenue_records", "earned_cc", "revenue_usd", "paid_cc", "last_recorded_at"), "%s", got.Raw)
		ideas := request(t, http.MethodGet, sys.URL("/api/ideas?limit=500"), nil)
		requireStatus(t, http.StatusOK, ideas)
		for _, i := range ideas.JSON["ideas"].([]any) {
			if i := i.(map[string]any); i["id"] == idea {
				require.Equal(t, shown, i["impact"], "the list answers it too")
			}
		}
		bare := request(t, http.MethodGet, sys.URL("/api/ideas/"+creditIdea(t, sys, "no impact yet")), nil)
		requireStatus(t, http.StatusOK, bare)
		require.Nil(t, bare.JSON["impact"], "null before the first record: %s", bare.Raw)
	})
}

// TestIdeaImpactRefusesBadRecords: bad bodies are 422s that name every
// field at once; revenue for an idea nobody staked on is refused and
// records nothing; an unknown idea is a 404.
func TestIdeaImpactRefusesBadRecords(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		idea := creditIdea(t, sys, "bare idea")
		r := request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/impact"), map[string]any{"kind": "usage", "amount_usd": 5}, creditAdmin)
		requireStatus(t, http.StatusUnprocessableEntity, r)
		var fields []string
		for _, e := range r.JSON["errors"].([]any) {
			fields = append(fields, e.(map[string]any)["field"].(string))
		}
		require.ElementsMatch(t, []string{"reference", "evidence", "quantity", "unit", "amount_usd"}, fields, "%s", r.Raw)

		r = request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/impact"), map[string]any{"kind": "revenue", "amount_usd": 5,
			"evidence": "invoice", "reference": "i-1"}, creditAdmin)
		requireStatus(t, http.StatusBadRequest, r)
		require.Contains(t, r.JSON["detail"], "no position on idea")
		list := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea+"/impact"), nil)
		requireStatus(t, http.StatusOK, list)
		require.Equal(t, []any{}, list.JSON["records"])

		r = request(t, http.MethodGet, sys.URL("/api/ideas/00000000-0000-0000-0000-000000000000/impact"), nil)
		requireStatus(t, http.StatusNotFound, r)
	})
}

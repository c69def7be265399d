package e2e_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// ledgerAsset creates an asset of typ through the gateway and returns it.
func ledgerAsset(t *testing.T, sys *allinonetest.System, typ string) map[string]any {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/assets"), map[string]any{"type": typ, "name": "asset " + typ})
	requireStatus(t, http.StatusCreated, r)
	return r.JSON
}

// ledgerContribute records a contribution through the gateway.
func ledgerContribute(t *testing.T, sys *allinonetest.System, body map[string]any) response {
	t.Helper()
	return request(t, http.MethodPost, sys.URL("/api/contributions"), body)
}

// ledgerPage GETs a page of the list called name ({name, pagination},
// listPage) and returns its items and its pagination.
func ledgerPage(t *testing.T, sys *allinonetest.System, path, name string) ([]map[string]any, map[string]any) {
	t.Helper()
	return listPage(t, request(t, http.MethodGet, sys.URL(path), nil), name)
}

func ledgerKeys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func ledgerIDs(items []map[string]any) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i], _ = it["id"].(string)
	}
	return out
}

// requireFieldError checks a 422 names field among its errors.
func requireFieldError(t *testing.T, r response, field string) {
	t.Helper()
	requireStatus(t, http.StatusUnprocessableEntity, r)
	errs, _ := r.JSON["errors"].([]any)
	var fields []string
	for _, e := range errs {
		fields = append(fields, e.(map[string]any)["field"].(string))
	}
	require.Contains(t, fields, field, "body: %s", r.Raw)
}

func TestLedgerAssets(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		var created []map[string]any
		t.Run("create each type", func(t *testing.T) {
			for _, typ := range []string{"CODE", "MODEL", "CONTENT", "DATA"} {
				r := request(t, http.MethodPost, sys.URL("/api/assets"), map[string]any{"type": typ, "name": "n", "description": "d"})
				requireStatus(t, http.StatusCreated, r)
				require.Equal(t, typ, r.JSON["type"])
				require.Equal(t, 0.0, r.JSON["total_cost"])
				require.Equal(t, 0.0, r.JSON["contribution_count"])
				require.Regexp(t, `^[0-9a-f-]{36}$`, r.JSON["id"])
				require.Regexp(t, `^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$`, r.JSON["created_at"])
				require.ElementsMatch(t, []string{"id", "type", "name", "description", "total_cost", "contribution_count", "created_at"}, ledgerKeys(r.JSON))
				created = append(created, r.JSON)
			}
		})

		t.Run("bad types and bodies are 422", func(t *testing.T) {
			for _, body := range []any{
				map[string]any{"type": "code"}, map[string]any{"type": "VIDEO"}, map[string]any{},
				map[string]any{"type": ""},
			} {
				requireFieldError(t, request(t, http.MethodPost, sys.URL("/api/assets"), body), "type")
			}
			for _, body := range []string{`{"type":"CODE","total_cost":5}`, `{"type":`, `["CODE"]`, `{"type":1}`} {
				requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodPost, sys.URL("/api/assets"), body))
			}
		})

		t.Run("get and 404", func(t *testing.T) {
			r := request(t, http.MethodGet, sys.URL("/api/assets/"+created[0]["id"].(string)), nil)
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, created[0], r.JSON)
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/assets/no-such-asset"), nil))
		})

		t.Run("list: {assets, pagination}, newest first, paged", func(t *testing.T) {
			all, page := ledgerPage(t, sys, "/api/assets", "assets")
			require.Equal(t, []string{ledgerIDs(created)[3], ledgerIDs(created)[2], ledgerIDs(created)[1], ledgerIDs(created)[0]}, ledgerIDs(all))
			require.Equal(t, wantPage(50, 0, 4, false), page, "the default page")
			two, page := ledgerPage(t, sys, "/api/assets?limit=2", "assets")
			require.Equal(t, ledgerIDs(all)[:2], ledgerIDs(two))
			require.Equal(t, wantPage(2, 0, 4, true), page)
			one, page := ledgerPage(t, sys, "/api/assets?limit=1&offset=2", "assets")
			require.Equal(t, ledgerIDs(all)[2:3], ledgerIDs(one))
			require.Equal(t, wantPage(1, 2, 4, true), page)
			past, page := ledgerPage(t, sys, "/api/assets?offset=10", "assets")
			require.Empty(t, past)
			require.Equal(t, wantPage(50, 10, 4, false), page, "past the end")
			most, page := ledgerPage(t, sys, "/api/assets?limit=500", "assets")
			require.Len(t, most, 4)
			require.Equal(t, wantPage(500, 0, 4, false), page)
		})

		t.Run("list: limit outside 1..500 or a negative offset is 422", func(t *testing.T) {
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/assets?limit=0"), nil), "limit")
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/assets?limit=501"), nil), "limit")
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/assets?limit=-1"), nil), "limit")
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/assets?offset=-1"), nil), "offset")
			requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/assets?limit=ten"), nil))
			requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodGet, sys.URL("/api/assets?limit=99999999999"), nil))
		})
	})
}

func TestLedgerContributions(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		asset := ledgerAsset(t, sys, "CODE")
		assetID := asset["id"].(string)

		t.Run("metadata is kept as the claim, never scored", func(t *testing.T) {
			tests := []struct {
				meta map[string]any
				want float64
			}{
				{nil, 0.5},
				{map[string]any{"has_tests": true}, 0.5},
				{map[string]any{"has_docs": true}, 0.5},
				{map[string]any{"complexity": "low"}, 0.5},
				{map[string]any{"has_tests": true, "has_docs": true}, 0.5},
				{map[string]any{"has_tests": true, "has_docs": true, "complexity": "low"}, 0.5},
				{map[string]any{"complexity": "high", "other": "kept"}, 0.5},
			}
			for _, tt := range tests {
				body := map[string]any{"contributor_id": "coherent", "asset_id": assetID, "cost_amount": 1}
				if tt.meta != nil {
					body["metadata"] = tt.meta
				}
				r := ledgerContribute(t, sys, body)
				requireStatus(t, http.StatusCreated, r)
				require.Equal(t, tt.want, r.JSON["coherence_score"], "metadata %v", tt.meta)
				if tt.meta == nil {
					require.Equal(t, map[string]any{}, r.JSON["metadata"])
				} else {
					require.Equal(t, tt.meta, r.JSON["metadata"])
				}
			}
		})

		t.Run("shape, read back, and an unknown contributor is created", func(t *testing.T) {
			r := ledgerContribute(t, sys, map[string]any{"contributor_id": "new person", "asset_id": assetID, "cost_amount": 12.345678})
			requireStatus(t, http.StatusCreated, r)
			require.ElementsMatch(t, []string{"id", "contributor_id", "asset_id", "cost_amount", "coherence_score", "metadata", "source", "created_at",
				"contributor_handle", "status", "claimed_cost_amount", "review"}, ledgerKeys(r.JSON))
			require.Equal(t, "accepted", r.JSON["status"], "an operator's")
			require.Nil(t, r.JSON["review"])
			require.Equal(t, 12.345678, r.JSON["cost_amount"])
			require.Equal(t, "api", r.JSON["source"])
			got := request(t, http.MethodGet, sys.URL("/api/contributions/"+r.JSON["id"].(string)), nil)
			requireStatus(t, http.StatusOK, got)
			require.Equal(t, r.JSON, got.JSON)
			mine, page := ledgerPage(t, sys, "/api/contributors/"+url.PathEscape("new person")+"/contributions", "contributions")
			require.Equal(t, []string{r.JSON["id"].(string)}, ledgerIDs(mine))
			require.Equal(t, wantPage(500, 0, 1, false), page)
		})

		t.Run("404s", func(t *testing.T) {
			r := ledgerContribute(t, sys, map[string]any{"contributor_id": "ghost", "asset_id": "no-such-asset", "cost_amount": 1})
			requireStatus(t, http.StatusNotFound, r)
			require.Contains(t, r.JSON["detail"], "no-such-asset")
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/contributors/ghost/contributions"), nil))
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/contributions/no-such-contribution"), nil))
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/assets/no-such-asset/contributions"), nil))
		})

		t.Run("422s", func(t *testing.T) {
			tests := []struct {
				name  string
				body  any
				field string
			}{
				{"negative cost", map[string]any{"contributor_id": "x", "asset_id": assetID, "cost_amount": -0.01}, "cost_amount"},
				{"seven decimals", map[string]any{"contributor_id": "x", "asset_id": assetID, "cost_amount": 0.0000001}, "cost_amount"},
				{"too large", map[string]any{"contributor_id": "x", "asset_id": assetID, "cost_amount": 1e10}, "cost_amount"},
				{"no contributor", map[string]any{"asset_id": assetID, "cost_amount": 1}, "contributor_id"},
				{"blank contributor", map[string]any{"contributor_id": "  ", "asset_id": assetID, "cost_amount": 1}, "contributor_id"},
				{"no asset", map[string]any{"contributor_id": "x", "cost_amount": 1}, "asset_id"},
				{"metadata over 4 KiB", map[string]any{"contributor_id": "x", "asset_id": assetID, "cost_amount": 1, "metadata": map[string]any{"big": strings.Repeat("x", 5000)}}, "metadata"},
				{"has_tests not a boolean", map[string]any{"contributor_id": "x", "asset_id": assetID, "cost_amount": 1, "metadata": map[string]any{"has_tests": "yes"}}, "metadata.has_tests"},
			}
			for _, tt := range tests {
				requireFieldError(t, ledgerContribute(t, sys, tt.body.(map[string]any)), tt.field)
			}
			for _, body := range []string{
				`{"contributor_id":"x","asset_id":"` + assetID + `","cost_amount":1,"coherence_score":1}`,
				`{"contributor_id":"x","asset_id":"` + assetID + `","cost_amount":NaN}`,
				`{"contributor_id":"x","asset_id":"` + assetID + `","cost_amount":"Infinity"}`,
			} {
				requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodPost, sys.URL("/api/contributions"), body))
			}
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/contributors/x/contributions"), nil))
		})

		t.Run("lists are ordered by creation", func(t *testing.T) {
			other := ledgerAsset(t, sys, "DATA")["id"].(string)
			var want []string
			for i := range 5 {
				r := ledgerContribute(t, sys, map[string]any{"contributor_id": "lister", "asset_id": other, "cost_amount": i})
				requireStatus(t, http.StatusCreated, r)
				want = append(want, r.JSON["id"].(string))
			}
			for _, tc := range []struct {
				path string
				want []string
				page map[string]any
			}{
				{"/api/assets/" + other + "/contributions", want, wantPage(500, 0, 5, false)},
				{"/api/contributors/lister/contributions", want, wantPage(500, 0, 5, false)},
				{"/api/assets/" + other + "/contributions?limit=2&offset=1", want[1:3], wantPage(2, 1, 5, true)},
				{"/api/contributors/lister/contributions?offset=4", want[4:], wantPage(500, 4, 5, false)},
			} {
				items, page := ledgerPage(t, sys, tc.path, "contributions")
				require.Equal(t, tc.want, ledgerIDs(items), tc.path)
				require.Equal(t, tc.page, page, tc.path)
			}
			for _, q := range []string{"limit=0", "limit=501", "limit=-1"} {
				requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/assets/"+other+"/contributions?"+q), nil), "limit")
			}
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/contributors/lister/contributions?offset=-1"), nil), "offset")
			empty := ledgerAsset(t, sys, "MODEL")["id"].(string)
			none, page := ledgerPage(t, sys, "/api/assets/"+empty+"/contributions", "contributions")
			require.Empty(t, none, "an empty list is [], not null")
			require.Equal(t, wantPage(500, 0, 0, false), page)

			// The general list, filtered both ways, and read on by cursor.
			items, page := ledgerPage(t, sys, "/api/contributions?asset_id="+other+"&contributor_id=lister&limit=2", "contributions")
			require.Equal(t, want[:2], ledgerIDs(items))
			bare, next := withoutCursor(t, page)
			require.Equal(t, wantPage(2, 0, 5, true), bare)
			requireStatus(t, http.StatusCreated, ledgerContribute(t, sys, map[string]any{"contributor_id": "lister", "asset_id": other, "cost_amount": 9}))
			items, page = ledgerPage(t, sys, "/api/contributions?asset_id="+other+"&limit=2&cursor="+next, "contributions")
			require.Equal(t, want[2:4], ledgerIDs(items), "the cursor reads on after the second")
			bare, _ = withoutCursor(t, page)
			require.Equal(t, wantPage(2, 2, 6, true), bare, "two precede it; the new one is counted")
			items, _ = ledgerPage(t, sys, "/api/contributions?contributor_id=nobody", "contributions")
			require.Empty(t, items, "an unknown contributor: an empty list")
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/contributions?cursor=x"), nil), "cursor")

			// Contributors, by handle.
			r := request(t, http.MethodGet, sys.URL("/api/contributors?handle=nobody-here"), nil)
			list, cpage := listPage(t, r, "contributors")
			require.Empty(t, list)
			require.Equal(t, wantPage(50, 0, 0, false), cpage)
			all, _ := listPage(t, request(t, http.MethodGet, sys.URL("/api/contributors?limit=500"), nil), "contributors")
			var lister map[string]any
			for _, c := range all {
				if c["id"] == "lister" {
					lister = c
				}
			}
			require.NotNil(t, lister, "a contributor a contribution created is listed")
			require.Nil(t, lister["handle"], "with no handle")
		})
	})
}

func TestLedgerTotalCostIsExact(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		t.Run("50 concurrent contributions to one asset", func(t *testing.T) {
			assetID := ledgerAsset(t, sys, "CODE")["id"].(string)
			const n = 50
			var wg sync.WaitGroup
			statuses := make([]int, n)
			for i := range n {
				wg.Go(func() {
					// 0.000001 .. 49.000049: every micro-unit matters.
					cost := float64(i) + float64(i)/1e6
					r := ledgerContribute(t, sys, map[string]any{"contributor_id": fmt.Sprint("racer-", i%5), "asset_id": assetID, "cost_amount": cost})
					statuses[i] = r.Status
				})
			}
			wg.Wait()
			for i, s := range statuses {
				require.Equal(t, http.StatusCreated, s, "contribution %d", i)
			}
			// sum of i + i/1e6 for i < 50 = 1225 + 0.001225
			a := request(t, http.MethodGet, sys.URL("/api/assets/"+assetID), nil)
			requireStatus(t, http.StatusOK, a)
			require.Equal(t, 1225.001225, a.JSON["total_cost"])
			require.Equal(t, float64(n), a.JSON["contribution_count"])
			all, page := ledgerPage(t, sys, "/api/assets/"+assetID+"/contributions", "contributions")
			require.Len(t, all, n)
			require.Equal(t, wantPage(500, 0, n, false), page)
		})

		t.Run("thousands of tenths do not drift", func(t *testing.T) {
			assetID := ledgerAsset(t, sys, "DATA")["id"].(string)
			const n, workers = 2000, 8
			var wg sync.WaitGroup
			failures := make(chan string, n)
			for w := range workers {
				wg.Go(func() {
					for i := w; i < n; i += workers {
						r := ledgerContribute(t, sys, map[string]any{"contributor_id": "tenth", "asset_id": assetID, "cost_amount": 0.1})
						if r.Status != http.StatusCreated {
							failures <- fmt.Sprintf("%d: %s", r.Status, r.Raw)
						}
					}
				})
			}
			wg.Wait()
			close(failures)
			for f := range failures {
				require.Fail(t, "a contribution failed", f)
			}
			a := request(t, http.MethodGet, sys.URL("/api/assets/"+assetID), nil)
			requireStatus(t, http.StatusOK, a)
			require.Equal(t, 200.0, a.JSON["total_cost"], "2000 × 0.1 is exactly 200")
			require.Contains(t, string(a.Raw), `"total_cost":200,`, "printed exactly")
			var drift float64
			for range n {
				drift += 0.1
			}
			require.NotEqual(t, 200.0, drift, "a float sum would have drifted")
		})
	})
}

func TestLedgerDistributions(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		distribute := func(t *testing.T, assetID string, value any) response {
			t.Helper()
			return request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": assetID, "value_amount": value})
		}

		var worked response
		var workedAsset, workedB string
		t.Run("the worked example: 40.00 / 60.00", func(t *testing.T) {
			workedAsset = ledgerAsset(t, sys, "CODE")["id"].(string)
			requireStatus(t, http.StatusCreated, ledgerContribute(t, sys, map[string]any{"contributor_id": "A", "asset_id": workedAsset, "cost_amount": 100}))
			// B's coherence of 1.0 is a reviewer's: B claims, an operator
			// accepts at 1.0 (B's own flags would earn nothing).
			b := creditRegister(t, sys, "bee")
			claim := request(t, http.MethodPost, sys.URL("/api/contributions"), map[string]any{"contributor_id": b.ID, "asset_id": workedAsset,
				"cost_amount": 100, "metadata": map[string]any{"has_tests": true, "has_docs": true, "complexity": "low"}}, b.auth())
			requireStatus(t, http.StatusCreated, claim)
			requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/contributions/"+claim.JSON["id"].(string)+"/review"),
				map[string]any{"verdict": "accept", "coherence_score": 1, "reason": "tests and docs, small"}))
			workedB = b.ID
			worked = distribute(t, workedAsset, 100)
			requireStatus(t, http.StatusCreated, worked)
			require.ElementsMatch(t, []string{"id", "asset_id", "value_amount", "payouts", "payout_count", "pagination", "paid_cc", "created_at"},
				ledgerKeys(worked.JSON))
			require.Equal(t, 2.0, worked.JSON["payout_count"])
			require.Equal(t, wantPage(100, 0, 2, false), worked.JSON["pagination"], "the first page of payouts, whole")
			require.Equal(t, false, worked.JSON["paid_cc"], "no CC unless asked for, with the administrator key")
			require.Equal(t, workedAsset, worked.JSON["asset_id"])
			require.Equal(t, 100.0, worked.JSON["value_amount"])
			require.Equal(t, []any{
				map[string]any{"contributor_id": workedB, "contributor_handle": "bee", "amount": 60.0, "claimed_amount": 0.0, "unpaid": false},
				map[string]any{"contributor_id": "A", "contributor_handle": nil, "amount": 40.0, "claimed_amount": 0.0, "unpaid": false},
			}, worked.JSON["payouts"])
		})

		t.Run("persisted and readable", func(t *testing.T) {
			got := request(t, http.MethodGet, sys.URL("/api/distributions/"+worked.JSON["id"].(string)), nil)
			requireStatus(t, http.StatusOK, got)
			require.Equal(t, worked.JSON, got.JSON)
			second := distribute(t, workedAsset, 10)
			requireStatus(t, http.StatusCreated, second)
			list := ledgerDistributions(t, sys, "/api/assets/"+workedAsset+"/distributions")
			require.Equal(t, []string{worked.JSON["id"].(string), second.JSON["id"].(string)}, ledgerIDs(list))
			require.Equal(t, wantPage(10, 0, 2, false), list[0]["pagination"], "a list carries the first 10 payouts of each")
			listed := maps.Clone(list[0])
			listed["pagination"] = worked.JSON["pagination"]
			require.Equal(t, worked.JSON, listed, "the rest as the create answered it")
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/distributions/no-such-distribution"), nil))
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/assets/no-such-asset/distributions"), nil))
		})

		t.Run("no contributions: empty payouts, not null", func(t *testing.T) {
			empty := ledgerAsset(t, sys, "MODEL")["id"].(string)
			r := distribute(t, empty, 50)
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, []any{}, r.JSON["payouts"])
			require.Contains(t, string(r.Raw), `"payouts":[]`)
			got := request(t, http.MethodGet, sys.URL("/api/distributions/"+r.JSON["id"].(string)), nil)
			require.Contains(t, string(got.Raw), `"payouts":[]`)
		})

		t.Run("zero total weight: empty payouts", func(t *testing.T) {
			free := ledgerAsset(t, sys, "CONTENT")["id"].(string)
			for _, who := range []string{"free-1", "free-2"} {
				requireStatus(t, http.StatusCreated, ledgerContribute(t, sys, map[string]any{"contributor_id": who, "asset_id": free, "cost_amount": 0,
					"metadata": map[string]any{"has_tests": true}}))
			}
			r := distribute(t, free, 1000)
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, []any{}, r.JSON["payouts"])
		})

		// Each payout used to be rounded half-up on its own (99.99 paid of
		// 100); they are now allocated by largest remainder (docs/ledger.md).
		t.Run("payouts add up to the value: the odd cents by largest remainder", func(t *testing.T) {
			thirds := ledgerAsset(t, sys, "DATA")["id"].(string)
			for _, who := range []string{"t1", "t2", "t3"} {
				requireStatus(t, http.StatusCreated, ledgerContribute(t, sys, map[string]any{"contributor_id": who, "asset_id": thirds, "cost_amount": 1}))
			}
			r := distribute(t, thirds, 100)
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, []any{
				map[string]any{"contributor_id": "t1", "contributor_handle": nil, "amount": 33.34, "claimed_amount": 0.0, "unpaid": false},
				map[string]any{"contributor_id": "t2", "contributor_handle": nil, "amount": 33.33, "claimed_amount": 0.0, "unpaid": false},
				map[string]any{"contributor_id": "t3", "contributor_handle": nil, "amount": 33.33, "claimed_amount": 0.0, "unpaid": false},
			}, r.JSON["payouts"], "100 paid of 100: equal remainders, the first contributor id gets the odd cent")
			r = distribute(t, thirds, 0.05)
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, []any{
				map[string]any{"contributor_id": "t1", "contributor_handle": nil, "amount": 0.02, "claimed_amount": 0.0, "unpaid": false},
				map[string]any{"contributor_id": "t2", "contributor_handle": nil, "amount": 0.02, "claimed_amount": 0.0, "unpaid": false},
				map[string]any{"contributor_id": "t3", "contributor_handle": nil, "amount": 0.01, "claimed_amount": 0.0, "unpaid": false},
			}, r.JSON["payouts"], "0.05 paid of 0.05: 0.01 each, the two cents left to the first ids")
		})

		t.Run("404 and 422", func(t *testing.T) {
			requireStatus(t, http.StatusNotFound, distribute(t, "no-such-asset", 10))
			requireFieldError(t, distribute(t, workedAsset, -1), "value_amount")
			requireFieldError(t, distribute(t, workedAsset, 0.0000001), "value_amount")
			requireFieldError(t, request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"value_amount": 1}), "asset_id")
			requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodPost, sys.URL("/api/distributions"), `{"asset_id":"x","value_amount":1,"payouts":[]}`))
		})
	})
}

func TestLedgerAttributionOverGRPC(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ledger := ledgerv1.NewLedgerServiceClient(sys.Dial(t))
		// A direct caller without a user's credential is another Foundry
		// service, which may read but not write; with the administrator key
		// in its metadata it writes as the administrator.
		_, err := ledger.CreateAsset(context.Background(), &ledgerv1.CreateAssetRequest{Type: "CODE", Name: "no credential"})
		require.Equal(t, codes.PermissionDenied, status.Code(err), "%v", err)
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-api-key", allinonetest.AdminKey)

		a, err := ledger.CreateAsset(ctx, &ledgerv1.CreateAssetRequest{Type: "CODE", Name: "over gRPC"})
		require.NoError(t, err)
		meta, err := structpb.NewStruct(map[string]any{"has_tests": true})
		require.NoError(t, err)
		c, err := ledger.CreateContribution(ctx, &ledgerv1.CreateContributionRequest{ContributorId: "grpc-user", AssetId: a.GetAsset().GetId(), CostAmount: proto.Float64(2.5), Metadata: meta})
		require.NoError(t, err)
		require.Equal(t, 0.5, c.GetContribution().GetCoherenceScore(), "the flags are kept, never scored")
		got, err := ledger.GetAsset(ctx, &ledgerv1.GetAssetRequest{Id: a.GetAsset().GetId()})
		require.NoError(t, err)
		require.Equal(t, 2.5, got.GetAsset().GetTotalCost())
		d, err := ledger.CreateDistribution(ctx, &ledgerv1.CreateDistributionRequest{AssetId: a.GetAsset().GetId(), ValueAmount: 7})
		require.NoError(t, err)
		require.Len(t, d.GetDistribution().GetPayouts(), 1)
		require.Equal(t, 7.0, d.GetDistribution().GetPayouts()[0].GetAmount())

		_, err = ledger.CreateContribution(ctx, &ledgerv1.CreateContributionRequest{ContributorId: "x", AssetId: "missing", CostAmount: proto.Float64(1)})
		require.Equal(t, codes.NotFound, status.Code(err))
		_, err = ledger.CreateContribution(ctx, &ledgerv1.CreateContributionRequest{ContributorId: "x", AssetId: a.GetAsset().GetId(), CostAmount: proto.Float64(math.NaN())})
		require.Equal(t, codes.InvalidArgument, status.Code(err))
		_, err = ledger.CreateContribution(ctx, &ledgerv1.CreateContributionRequest{ContributorId: "x", AssetId: a.GetAsset().GetId()})
		require.Equal(t, codes.InvalidArgument, status.Code(err), "cost_amount is required over gRPC too")
		nan, err := structpb.NewStruct(map[string]any{"score": math.NaN()})
		require.NoError(t, err)
		odd, err := ledger.CreateContribution(ctx, &ledgerv1.CreateContributionRequest{ContributorId: "x", AssetId: a.GetAsset().GetId(), CostAmount: proto.Float64(1), Metadata: nan})
		require.NoError(t, err, "a NaN in metadata is stored the way JSON can hold it, never a 500")
		require.Equal(t, "NaN", odd.GetContribution().GetMetadata().AsMap()["score"])
	})
}

// TestLedgerAnswersNameContributorsByHandle: every answer that names a
// contributor carries its handle (null for one that never registered), and
// the contributors list totals each one's balances as GET balances shows
// them.
func TestLedgerAnswersNameContributorsByHandle(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := registerUser(t, sys, "ada")
		asset := ledgerAsset(t, sys, "CODE")["id"].(string)

		mine := ledgerContribute(t, sys, map[string]any{"contributor_id": ada.id, "asset_id": asset, "cost_amount": 30})
		requireStatus(t, http.StatusCreated, mine)
		require.Equal(t, "ada", mine.JSON["contributor_handle"], "the create answer names the registered contributor")
		theirs := ledgerContribute(t, sys, map[string]any{"contributor_id": "walk-in", "asset_id": asset, "cost_amount": 10})
		requireStatus(t, http.StatusCreated, theirs)
		require.Contains(t, theirs.JSON, "contributor_handle")
		require.Nil(t, theirs.JSON["contributor_handle"], "one a contribution created has none")

		got := request(t, http.MethodGet, sys.URL("/api/contributions/"+mine.JSON["id"].(string)), nil)
		requireStatus(t, http.StatusOK, got)
		require.Equal(t, "ada", got.JSON["contributor_handle"])
		items, _ := ledgerPage(t, sys, "/api/contributions?asset_id="+asset, "contributions")
		require.Len(t, items, 2)
		require.Equal(t, []any{"ada", nil}, []any{items[0]["contributor_handle"], items[1]["contributor_handle"]})
		items, _ = ledgerPage(t, sys, "/api/assets/"+asset+"/contributions", "contributions")
		require.Equal(t, "ada", items[0]["contributor_handle"])

		d := request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": asset, "value_amount": 40})
		requireStatus(t, http.StatusCreated, d)
		wantPayouts := []any{
			map[string]any{"contributor_id": ada.id, "contributor_handle": "ada", "amount": 30.0, "claimed_amount": 0.0, "unpaid": false},
			map[string]any{"contributor_id": "walk-in", "contributor_handle": nil, "amount": 10.0, "claimed_amount": 0.0, "unpaid": false},
		}
		require.Equal(t, wantPayouts, d.JSON["payouts"], "the create answer names its payees")
		read := request(t, http.MethodGet, sys.URL("/api/distributions/"+d.JSON["id"].(string)), nil)
		requireStatus(t, http.StatusOK, read)
		require.Equal(t, wantPayouts, read.JSON["payouts"])
		listed, _ := ledgerPage(t, sys, "/api/assets/"+asset+"/distributions", "distributions")
		require.Len(t, listed, 1)
		require.Equal(t, wantPayouts, listed[0]["payouts"])

		// Balances: a deposit, then a stake on an idea.
		dep := deposit(t, sys, ada.id, 20, "handles-1", adminHeader) // 1990 CC
		requireStatus(t, http.StatusCreated, dep)
		require.Equal(t, "ada", dep.JSON["contributor_handle"], "the administrator's deposit names whom it is for")
		idea := createIdea(t, sys, map[string]any{"name": "Named stakes", "potential_value": 100, "estimated_cost": 10})["id"].(string)
		dry := request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 500, "dry_run": true}, adminHeader)
		requireStatus(t, http.StatusOK, dry)
		require.Equal(t, "ada", dry.JSON["contributor_handle"], "a dry run by another reads it with the balance")
		staked := request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 500}, ada.bearer())
		requireStatus(t, http.StatusCreated, staked)
		require.Equal(t, "ada", staked.JSON["contributor_handle"], "a stake is the caller's own: its session names it")
		b := balances(t, sys, ada.id)
		list, page := listPage(t, request(t, http.MethodGet, sys.URL("/api/contributors?handle=ada"), nil), "contributors")
		require.Equal(t, wantPage(50, 0, 1, false), page)
		require.Len(t, list, 1)
		require.Equal(t, ada.id, list[0]["id"])
		require.Equal(t, "ada", list[0]["handle"])
		require.Equal(t, []any{1490.0, 500.0, 0.0}, []any{list[0]["available_cc"], list[0]["staked_cc"], list[0]["cooling_cc"]})
		require.Equal(t, []any{b["available_cc"], b["staked_cc"], b["cooling_cc"]},
			[]any{list[0]["available_cc"], list[0]["staked_cc"], list[0]["cooling_cc"]}, "the list agrees with GET balances")
		walkIn, _ := listPage(t, request(t, http.MethodGet, sys.URL("/api/contributors?limit=500"), nil), "contributors")
		var found map[string]any
		for _, c := range walkIn {
			if c["id"] == "walk-in" {
				found = c
			}
		}
		require.NotNil(t, found)
		require.Equal(t, []any{nil, 0.0, 0.0, 0.0}, []any{found["handle"], found["available_cc"], found["staked_cc"], found["cooling_cc"]})

		inv := request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.id+"/investments"), nil)
		requireStatus(t, http.StatusOK, inv)
		require.Equal(t, "ada", inv.JSON["contributor_handle"])
		require.Equal(t, ada.id, inv.JSON["contributor_id"])

		// The other money writes name the contributor too.
		unstaked := request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
			map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 1}, ada.bearer())
		requireStatus(t, http.StatusOK, unstaked)
		require.Equal(t, "ada", unstaked.JSON["contributor_handle"])
		withdrawn := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), map[string]any{"contributor_id": ada.id, "amount_cc": 1}, ada.bearer())
		requireStatus(t, http.StatusOK, withdrawn)
		require.Equal(t, "ada", withdrawn.JSON["contributor_handle"])
		pledged := request(t, http.MethodPost, sys.URL("/api/contributors/"+ada.id+"/pledges"), map[string]any{"idea_id": idea, "hours_pledged": 2},
			ada.bearer())
		requireStatus(t, http.StatusCreated, pledged)
		require.Equal(t, "ada", pledged.JSON["contributor_handle"])
		b = balances(t, sys, ada.id)

		// The reads of one contributor's CC name it; walk-in registered no handle.
		require.Equal(t, "ada", b["contributor_handle"])
		require.Nil(t, balances(t, sys, "walk-in")["contributor_handle"])
		for id, want := range map[string]any{ada.id: "ada", "walk-in": nil} {
			h := request(t, http.MethodGet, sys.URL("/api/contributors/"+id+"/investment-history"), nil)
			requireStatus(t, http.StatusOK, h)
			require.Equal(t, want, h.JSON["contributor_handle"], id)
		}

		// The audit log names an entry's actor and subject when they are
		// registered contributors: ada's stake is hers, the deposit the
		// administrator's for her.
		waitSequenced(t, sys)
		entries, _ := ledgerPage(t, sys, "/api/audit", "entries")
		byKind := map[string]map[string]any{}
		for _, e := range entries {
			byKind[e["kind"].(string)] = e
		}
		require.Equal(t, []any{ada.id, "ada", ada.id, "ada"}, []any{byKind["stake"]["actor"], byKind["stake"]["actor_handle"],
			byKind["stake"]["subject"], byKind["stake"]["subject_handle"]})
		require.Equal(t, []any{"admin", nil, ada.id, "ada"}, []any{byKind["deposit"]["actor"], byKind["deposit"]["actor_handle"],
			byKind["deposit"]["subject"], byKind["deposit"]["subject_handle"]})
	})
}

package e2e_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// ledgerDistributions GETs a page of an asset's distributions: an object
// {distributions, pagination}, never a bare array.
func ledgerDistributions(t *testing.T, sys *allinonetest.System, path string) []map[string]any {
	t.Helper()
	list, _ := ledgerDistributionPage(t, sys, path)
	return list
}

// ledgerDistributionPage GETs a page of an asset's distributions and its
// pagination object (listPage).
func ledgerDistributionPage(t *testing.T, sys *allinonetest.System, path string) ([]map[string]any, map[string]any) {
	t.Helper()
	return ledgerPage(t, sys, path, "distributions")
}

// payoutIDs lists the contributor ids of a distribution's payouts.
func payoutIDs(t *testing.T, d map[string]any) []string {
	t.Helper()
	payouts, ok := d["payouts"].([]any)
	require.True(t, ok, "payouts is a list: %v", d["payouts"])
	out := make([]string, 0, len(payouts))
	for _, p := range payouts {
		out = append(out, p.(map[string]any)["contributor_id"].(string))
	}
	return out
}

// TestHardeningLedgerWebhookRefusesUnsignedByDefault: without a secret the
// webhook used to accept unsigned deliveries from anyone, with any cost and
// any contributor. Now it refuses every delivery unless unsigned ones are
// explicitly allowed (FOUNDRY_GITHUB_ALLOW_UNSIGNED, for local use).
func TestHardeningLedgerWebhookRefusesUnsignedByDefault(t *testing.T) {
	t.Parallel()
	forged := []byte(`{"contributor_email":"mallory@example.com","repository":"acme/engine","commit_hash":"abc123","cost_amount":1000000}`)

	t.Run("no secret: every delivery is 401 and nothing is recorded", func(t *testing.T) {
		t.Parallel()
		eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
			for name, r := range map[string]response{
				"unsigned, with a delivery id":    deliver(t, sys, "push", newDeliveryID(t), forged),
				"unsigned, without a delivery id": deliver(t, sys, "", "", forged),
				"ping":                            deliver(t, sys, "ping", newDeliveryID(t), []byte(`{"zen":"Keep it logically awesome."}`)),
				"signed":                          deliverSigned(t, sys, "push", newDeliveryID(t), forged),
			} {
				requireStatus(t, http.StatusUnauthorized, r)
				require.Contains(t, r.JSON["detail"], "FOUNDRY_GITHUB_WEBHOOK_SECRET", name)
				require.Contains(t, r.JSON["detail"], "FOUNDRY_GITHUB_ALLOW_UNSIGNED=true", name)
			}
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/contributors/email:mallory@example.com/contributions"), nil))
			assets, page := ledgerPage(t, sys, "/api/assets", "assets")
			require.Empty(t, assets, "no asset was made for the repository")
			require.Equal(t, wantPage(50, 0, 0, false), page)
		})
	})

	t.Run("allowed: unsigned deliveries are recorded, signed ones refused", func(t *testing.T) {
		t.Parallel()
		eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
			r := deliver(t, sys, "push", newDeliveryID(t), forged)
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, "email:mallory@example.com", r.JSON["contributor_id"])
			signed := deliverSigned(t, sys, "push", newDeliveryID(t), forged)
			requireStatus(t, http.StatusUnauthorized, signed)
			require.Contains(t, signed.JSON["detail"], "no webhook secret is configured")
		}, "-github-allow-unsigned=true")
	})

	t.Run("a secret wins over allowing unsigned deliveries", func(t *testing.T) {
		t.Parallel()
		eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
			unsigned := deliver(t, sys, "push", newDeliveryID(t), forged)
			requireStatus(t, http.StatusUnauthorized, unsigned)
			require.Contains(t, unsigned.JSON["detail"], "X-Hub-Signature-256")
			requireStatus(t, http.StatusCreated, deliverSigned(t, sys, "push", newDeliveryID(t), forged))
		}, "-github-allow-unsigned=true", "-github-webhook-secret="+webhookSecret)
	})
}

// TestHardeningLedgerWebhookWithoutDeliveryHeader: X-GitHub-Delivery is
// optional. Without it (the shaped body from scripts and other forges) a
// redelivery is recognised by repository and commit hash: the same body
// twice, or many times at once, makes one contribution. With it, the
// commit is a key all the same.
func TestHardeningLedgerWebhookWithoutDeliveryHeader(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		shaped := func(repo, hash string) []byte {
			return fmt.Appendf(nil, `{"contributor_email":"ada@example.com","repository":%q,"commit_hash":%q,"cost_amount":1.5,"metadata":{"has_tests":true}}`, repo, hash)
		}

		var first response
		t.Run("a shaped body without the header is recorded: 201", func(t *testing.T) {
			first = deliverSigned(t, sys, "", "", shaped("acme/engine", "abc123"))
			requireStatus(t, http.StatusCreated, first)
			require.Equal(t, "email:ada@example.com", first.JSON["contributor_id"])
			require.Equal(t, 1.5, first.JSON["cost_amount"])
			gh := first.JSON["metadata"].(map[string]any)["github"].(map[string]any)
			require.Equal(t, map[string]any{"repository": "acme/engine", "commit_hash": "abc123", "email": "ada@example.com"}, gh,
				"no delivery_id without the header")
		})

		t.Run("the same repository and commit again: 200 with the original", func(t *testing.T) {
			for _, body := range [][]byte{shaped("acme/engine", "abc123"), shaped("ACME/Engine", "ABC123")} {
				again := deliverSigned(t, sys, "push", "", body)
				requireStatus(t, http.StatusOK, again)
				require.Equal(t, first.JSON, again.JSON)
			}
			asset := request(t, http.MethodGet, sys.URL("/api/assets/"+first.JSON["asset_id"].(string)), nil)
			requireStatus(t, http.StatusOK, asset)
			require.Equal(t, 1.5, asset.JSON["total_cost"], "counted once")
			require.Equal(t, 1.0, asset.JSON["contribution_count"])
		})

		t.Run("20 at once make one contribution", func(t *testing.T) {
			body := shaped("acme/engine", "def456")
			const n = 20
			requireOneContribution(t, deliverAtOnce(t, sys, n, "", "", body))
			asset := request(t, http.MethodGet, sys.URL("/api/assets/"+first.JSON["asset_id"].(string)), nil)
			require.Equal(t, 3.0, asset.JSON["total_cost"], "1.5 twice: two commits")
		})

		t.Run("another commit or repository is new", func(t *testing.T) {
			requireStatus(t, http.StatusCreated, deliverSigned(t, sys, "", "", shaped("acme/engine", "0123abcd")))
			other := deliverSigned(t, sys, "", "", shaped("acme/other", "abc123"))
			requireStatus(t, http.StatusCreated, other)
			require.NotEqual(t, first.JSON["asset_id"], other.JSON["asset_id"])
		})

		t.Run("with the header, a commit seen before is still a repeat", func(t *testing.T) {
			// The signature covers the body, not the header: a delivery id
			// alone keys nothing a replayer cannot change.
			for range 3 {
				r := deliverSigned(t, sys, "push", newDeliveryID(t), shaped("acme/engine", "abc123"))
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, first.JSON, r.JSON, "the original answers")
			}
			id := newDeliveryID(t)
			requireStatus(t, http.StatusCreated, deliverSigned(t, sys, "push", id, shaped("acme/engine", "fedcba")))
			requireStatus(t, http.StatusOK, deliverSigned(t, sys, "push", id, shaped("acme/engine", "fedcba")))
		})

		t.Run("neither the header nor a commit hash: 422, nothing recorded", func(t *testing.T) {
			before, page := ledgerPage(t, sys, "/api/contributors/email:ada@example.com/contributions", "contributions")
			require.Equal(t, wantPage(500, 0, len(before), false), page)
			r := deliverSigned(t, sys, "", "", []byte(`{"contributor_email":"ada@example.com","repository":"acme/engine","cost_amount":1}`))
			requireFieldError(t, r, "commit_hash")
			require.Contains(t, r.JSON["detail"], "X-GitHub-Delivery")
			after, page := ledgerPage(t, sys, "/api/contributors/email:ada@example.com/contributions", "contributions")
			require.Equal(t, ledgerIDs(before), ledgerIDs(after))
			require.Equal(t, wantPage(500, 0, len(before), false), page)
		})
	}, "-github-webhook-secret="+webhookSecret)
}

// TestHardeningLedgerContributionCostRequired: cost_amount is a required
// field of POST /api/contributions; a missing one used to be read as 0.
func TestHardeningLedgerContributionCostRequired(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		assetID := ledgerAsset(t, sys, "CODE")["id"].(string)
		for name, body := range map[string]string{
			"missing":  `{"contributor_id":"x","asset_id":"` + assetID + `"}`,
			"null":     `{"contributor_id":"x","asset_id":"` + assetID + `","cost_amount":null}`,
			"negative": `{"contributor_id":"x","asset_id":"` + assetID + `","cost_amount":-1}`,
		} {
			r := request(t, http.MethodPost, sys.URL("/api/contributions"), body)
			requireFieldError(t, r, "cost_amount")
			require.Contains(t, r.JSON["detail"], "cost_amount", name)
		}
		missing := request(t, http.MethodPost, sys.URL("/api/contributions"), `{"asset_id":"`+assetID+`"}`)
		requireFieldError(t, missing, "cost_amount")
		requireFieldError(t, missing, "contributor_id")

		requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/contributors/x/contributions"), nil))
		zero := ledgerContribute(t, sys, map[string]any{"contributor_id": "x", "asset_id": assetID, "cost_amount": 0})
		requireStatus(t, http.StatusCreated, zero)
		require.Equal(t, 0.0, zero.JSON["cost_amount"])
		valid := ledgerContribute(t, sys, map[string]any{"contributor_id": "x", "asset_id": assetID, "cost_amount": 2.5})
		requireStatus(t, http.StatusCreated, valid)
		asset := request(t, http.MethodGet, sys.URL("/api/assets/"+assetID), nil)
		require.Equal(t, 2.5, asset.JSON["total_cost"])
		require.Equal(t, 2.0, asset.JSON["contribution_count"], "only the zero and the valid one were recorded")
	})
}

// TestHardeningLedgerPayoutsPaged: a distribution has one payout per
// contributor, and its responses used to carry them all. Now the create
// answers with the first page and payout_count, a read pages the payouts,
// and an asset's distributions are paged with a pagination object. Each
// distribution places its payouts with a pagination object of its own, as
// every list does (it used to say payout_count alone).
func TestHardeningLedgerPayoutsPaged(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		const contributors = 150 // more than the default page of 100
		assetID := ledgerAsset(t, sys, "CODE")["id"].(string)
		// Costs 1..150: the larger the cost, the earlier the payout.
		want := make([]string, contributors)
		for i := range contributors {
			who := fmt.Sprintf("c%03d", i)
			requireStatus(t, http.StatusCreated, ledgerContribute(t, sys, map[string]any{"contributor_id": who, "asset_id": assetID, "cost_amount": i + 1}))
			want[contributors-1-i] = who
		}

		created := request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": assetID, "value_amount": 11325})
		requireStatus(t, http.StatusCreated, created)
		require.Equal(t, float64(contributors), created.JSON["payout_count"])
		require.Equal(t, want[:100], payoutIDs(t, created.JSON), "the create answers with the first page")
		require.Equal(t, wantPage(100, 0, contributors, true), created.JSON["pagination"])
		id := created.JSON["id"].(string)

		t.Run("a read pages the payouts", func(t *testing.T) {
			first := request(t, http.MethodGet, sys.URL("/api/distributions/"+id), nil)
			requireStatus(t, http.StatusOK, first)
			require.Equal(t, created.JSON, first.JSON, "no limit: the same first page")
			all := request(t, http.MethodGet, sys.URL("/api/distributions/"+id+"?limit=1000"), nil)
			requireStatus(t, http.StatusOK, all)
			require.Equal(t, want, payoutIDs(t, all.JSON))
			require.Equal(t, wantPage(1000, 0, contributors, false), all.JSON["pagination"])
			var paged []string
			for offset := 0; offset < contributors; offset += 40 {
				page := request(t, http.MethodGet, sys.URL(fmt.Sprintf("/api/distributions/%s?limit=40&offset=%d", id, offset)), nil)
				requireStatus(t, http.StatusOK, page)
				require.Equal(t, float64(contributors), page.JSON["payout_count"])
				require.Equal(t, wantPage(40, offset, contributors, offset+40 < contributors), page.JSON["pagination"], "offset %d", offset)
				paged = append(paged, payoutIDs(t, page.JSON)...)
			}
			require.Equal(t, want, paged, "the pages make up the whole list, in order")
			past := request(t, http.MethodGet, sys.URL("/api/distributions/"+id+"?offset=2147483647"), nil)
			requireStatus(t, http.StatusOK, past)
			require.Equal(t, []any{}, past.JSON["payouts"])
			require.Equal(t, wantPage(100, 2147483647, contributors, false), past.JSON["pagination"])
			last := all.JSON["payouts"].([]any)[contributors-1].(map[string]any)
			require.Equal(t, map[string]any{"contributor_id": "c000", "contributor_handle": nil, "amount": 1.0, "claimed_amount": 0.0, "unpaid": false}, last, "11325 over weights 1..150: 1 per unit of cost")
		})

		t.Run("limits outside 1..1000 and negative offsets are 422", func(t *testing.T) {
			for _, q := range []string{"limit=0", "limit=1001", "limit=-1"} {
				requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/distributions/"+id+"?"+q), nil), "limit")
			}
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/distributions/"+id+"?offset=-1"), nil), "offset")
		})

		t.Run("an asset's distributions are paged, each with its first 10 payouts", func(t *testing.T) {
			for range 2 {
				requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": assetID, "value_amount": 1}))
			}
			list, page := ledgerDistributionPage(t, sys, "/api/assets/"+assetID+"/distributions?limit=2")
			require.Equal(t, wantPage(2, 0, 3, true), page)
			require.Len(t, list, 2)
			require.Equal(t, id, list[0]["id"], "oldest first")
			require.Equal(t, want[:10], payoutIDs(t, list[0]))
			require.Equal(t, float64(contributors), list[0]["payout_count"])
			require.Equal(t, wantPage(10, 0, contributors, true), list[0]["pagination"], "a listed distribution's payouts are its first page")
			rest, page := ledgerDistributionPage(t, sys, "/api/assets/"+assetID+"/distributions?limit=2&offset=2")
			require.Equal(t, wantPage(2, 2, 3, false), page)
			require.Len(t, rest, 1)
			_, page = ledgerDistributionPage(t, sys, "/api/assets/"+assetID+"/distributions")
			require.Equal(t, wantPage(20, 0, 3, false), page, "the default page")
			for _, q := range []string{"limit=0", "limit=101"} {
				requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/assets/"+assetID+"/distributions?"+q), nil), "limit")
			}
			requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/assets/"+assetID+"/distributions?offset=-3"), nil), "offset")
			requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/assets/no-such-asset/distributions"), nil))
		})
	})
}

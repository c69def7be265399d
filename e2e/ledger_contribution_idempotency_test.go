package e2e_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestContributionIdempotencyKey: POST /api/contributions honours the
// Idempotency-Key as the money POSTs do, so a client that retries after a
// lost response records its contribution once.
func TestContributionIdempotencyKey(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		contribute := func(body any, headers ...string) response {
			return request(t, http.MethodPost, sys.URL("/api/contributions"), body, headers...)
		}
		asset := func(t *testing.T, id string) (total, count float64) {
			t.Helper()
			r := request(t, http.MethodGet, sys.URL("/api/assets/"+id), nil)
			requireStatus(t, http.StatusOK, r)
			return r.JSON["total_cost"].(float64), r.JSON["contribution_count"].(float64)
		}
		contributions := func(t *testing.T, id string) []string {
			t.Helper()
			items, page := ledgerPage(t, sys, "/api/assets/"+id+"/contributions", "contributions")
			require.Equal(t, wantPage(500, 0, len(items), false), page, "one page holds every contribution")
			return ledgerIDs(items)
		}

		t.Run("the same key and body record once and answer the first response", func(t *testing.T) {
			id := ledgerAsset(t, sys, "CODE")["id"].(string)
			body := map[string]any{"contributor_id": "ada", "asset_id": id, "cost_amount": 12.5,
				"metadata": map[string]any{"has_tests": true, "nested": map[string]any{"n": 2}}}
			one := contribute(body, "Idempotency-Key: contrib-1")
			requireStatus(t, http.StatusCreated, one)
			require.Equal(t, 12.5, one.JSON["cost_amount"])
			two := contribute(body, "Idempotency-Key: contrib-1")
			requireStatus(t, http.StatusCreated, two)
			require.Equal(t, string(one.Raw), string(two.Raw), "the identical answer")
			require.Equal(t, one.JSON["id"], two.JSON["id"])
			// The body is identified by its meaning, not its bytes.
			reordered := `{"metadata": {"nested": {"n": 2}, "has_tests": true}, "cost_amount": 12.5, "asset_id": "` + id +
				`", "contributor_id": "ada"}`
			three := contribute(reordered, "Idempotency-Key: contrib-1")
			requireStatus(t, http.StatusCreated, three)
			require.Equal(t, string(one.Raw), string(three.Raw))

			total, count := asset(t, id)
			require.Equal(t, 12.5, total, "the cost counted once")
			require.Equal(t, 1.0, count)
			require.Equal(t, []string{one.JSON["id"].(string)}, contributions(t, id))

			other := contribute(map[string]any{"contributor_id": "ada", "asset_id": id, "cost_amount": 13},
				"Idempotency-Key: contrib-1")
			requireFieldError(t, other, "Idempotency-Key")
			require.Equal(t, "Idempotency-Key: was used before with a different request body", other.JSON["detail"])
			total, count = asset(t, id)
			require.Equal(t, 12.5, total, "the refused body recorded nothing")
			require.Equal(t, 1.0, count)

			// The key is scoped by contributor: bob's contrib-1 is his own.
			bob := contribute(map[string]any{"contributor_id": "bob", "asset_id": id, "cost_amount": 12.5,
				"metadata": map[string]any{"has_tests": true, "nested": map[string]any{"n": 2}}}, "Idempotency-Key: contrib-1")
			requireStatus(t, http.StatusCreated, bob)
			require.NotEqual(t, one.JSON["id"], bob.JSON["id"])
			require.Equal(t, "bob", bob.JSON["contributor_id"])
			total, count = asset(t, id)
			require.Equal(t, 25.0, total)
			require.Equal(t, 2.0, count)
		})

		t.Run("without a key every request records", func(t *testing.T) {
			id := ledgerAsset(t, sys, "CODE")["id"].(string)
			body := map[string]any{"contributor_id": "ada", "asset_id": id, "cost_amount": 3}
			one := contribute(body)
			requireStatus(t, http.StatusCreated, one)
			two := contribute(body)
			requireStatus(t, http.StatusCreated, two)
			require.NotEqual(t, one.JSON["id"], two.JSON["id"])
			total, count := asset(t, id)
			require.Equal(t, 6.0, total)
			require.Equal(t, 2.0, count)
			require.ElementsMatch(t, []string{one.JSON["id"].(string), two.JSON["id"].(string)}, contributions(t, id))
		})

		t.Run("a key too long is 422 and records nothing", func(t *testing.T) {
			id := ledgerAsset(t, sys, "CODE")["id"].(string)
			long := make([]byte, 256) // one over the limit of 255 printable ASCII characters
			for i := range long {
				long[i] = 'k'
			}
			r := contribute(map[string]any{"contributor_id": "ada", "asset_id": id, "cost_amount": 3}, "Idempotency-Key: "+string(long))
			requireFieldError(t, r, "Idempotency-Key")
			total, count := asset(t, id)
			require.Equal(t, 0.0, total)
			require.Equal(t, 0.0, count)
		})

		t.Run("concurrent retries of one key record once", func(t *testing.T) {
			id := ledgerAsset(t, sys, "CODE")["id"].(string)
			body := map[string]any{"contributor_id": "ada", "asset_id": id, "cost_amount": 7.25}
			const n = 8
			got := make([]response, n)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Go(func() {
					<-start
					got[i] = contribute(body, "Idempotency-Key: burst")
				})
			}
			close(start)
			wg.Wait()
			for i := range n {
				requireStatus(t, http.StatusCreated, got[i])
				require.Equal(t, string(got[0].Raw), string(got[i].Raw), "every retry answers the one contribution")
			}
			total, count := asset(t, id)
			require.Equal(t, 7.25, total, "counted once")
			require.Equal(t, 1.0, count)
			require.Equal(t, []string{got[0].JSON["id"].(string)}, contributions(t, id))
		})
	})
}

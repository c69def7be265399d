package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestRetryWithAnUnusableKeyMovesNothing: grpc-gateway drops a header that
// is not printable ASCII, so an Idempotency-Key such as "café-retry" used
// to reach the ledger as no key, and three retries of one withdrawal
// withdrew three times. Now each is a 422 naming the header, and nothing
// moves; the same retries with a usable key withdraw once.
func TestRetryWithAnUnusableKeyMovesNothing(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "retry_ada")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "retry-funds"))
		withdraw := map[string]any{"contributor_id": ada.ID, "amount_cc": 100}
		for _, key := range []string{"café-retry", "tab\there", " "} {
			for range 3 {
				r := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), withdraw, ada.auth(), "Idempotency-Key: "+key)
				requireStatus(t, http.StatusUnprocessableEntity, r)
				require.Equal(t, "Idempotency-Key: must be 1 to 255 printable ASCII characters", r.JSON["detail"], "key %q", key)
			}
		}
		require.Equal(t, 995.0, creditBalances(t, sys, ada.ID).Available, "no refused retry withdrew")

		for range 3 {
			r := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), withdraw, ada.auth(), "Idempotency-Key: plain-retry")
			requireStatus(t, http.StatusOK, r)
		}
		require.Equal(t, 895.0, creditBalances(t, sys, ada.ID).Available, "three retries, one withdrawal")

		// The credential headers follow the same rule: a 422 naming the
		// header, not a 401 (and not an ERROR line in the gateway's log).
		r := request(t, http.MethodGet, sys.URL("/api/whoami"), nil, "X-API-Key: café")
		requireStatus(t, http.StatusUnprocessableEntity, r)
		require.Equal(t, "X-Api-Key: must be 1 to 255 printable ASCII characters", r.JSON["detail"])
	})
}

package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestNearMissDryRunsMoveNothing: ?Dry_Run=true, ?dry-run=true and
// ?dryrun=true each made a real stake (a POST read only its body); now
// any query parameter of a POST but dry_run is a 422 naming it, and a
// GET's unknown parameter too (?stage=bogus answered every idea as if
// filtered).
func TestNearMissDryRunsMoveNothing(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "dry_ada")
		idea := creditIdea(t, sys, "Dry idea")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "dry-funds"))
		stake := map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 100}
		for _, q := range []string{"Dry_Run=true", "dry-run=true", "dryrun=true", "DRY_RUN=1"} {
			r := request(t, http.MethodPost, sys.URL("/api/cc/stake?"+q), stake, ada.auth())
			requireStatus(t, http.StatusUnprocessableEntity, r)
			require.Contains(t, r.JSON["detail"], "is not a parameter of this route", q)
		}
		require.Equal(t, 0.0, creditBalances(t, sys, ada.ID).Staked, "no near miss staked")
		dry := request(t, http.MethodPost, sys.URL("/api/cc/stake?dry_run=true"), stake, ada.auth())
		requireStatus(t, http.StatusOK, dry)
		require.Equal(t, true, dry.JSON["dry_run"])
		require.Equal(t, 0.0, creditBalances(t, sys, ada.ID).Staked, "the real dry run staked nothing")

		for q, detail := range map[string]string{
			"/api/ideas?stage=bogus":           "stage: is not a parameter of this route",
			"/api/ideas?offset=2147483648":     "offset: must be a whole number from -2147483648 to 2147483647",
			"/api/agent/tasks?limit=ten":       "limit: must be a whole number from -2147483648 to 2147483647",
			"/api/ideas?only_unvalidated=sure": "only_unvalidated: must be true or false",
		} {
			r := request(t, http.MethodGet, sys.URL(q), nil)
			requireStatus(t, http.StatusUnprocessableEntity, r)
			require.Equal(t, detail, r.JSON["detail"], q)
		}
		requireStatus(t, http.StatusOK, request(t, http.MethodGet, sys.URL("/api/ideas?limit=5&tags=x"), nil))
	})
}

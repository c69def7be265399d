package e2e_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestUnderReservedPausesMintingAndTakesSmallDeposits: an accepted rate
// move leaves the economy under-reserved; the monitor's score puts it in
// minting_paused (the issue saw 0.854 → score 70 → only warning, stakes
// going on); there a 1 USD deposit, far from filling the hole, is
// accepted and raises the ratio (the issue saw it refused, and only one
// that restored 1.0 at once accepted); a withdrawal that would leave the
// ratio below 1.0 is refused.
func TestUnderReservedPausesMintingAndTakesSmallDeposits(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "wire-1")) // 995 CC against 10 USD
		// 100 → 85.4 CC per USD: within the breaker's 20 %, so accepted,
		// and each CC is now worth more USD than the treasury holds for it.
		r := request(t, http.MethodPost, sys.URL("/api/cc/oracle/readings"), map[string]any{"cc_per_usd": 85.4}, creditAdmin)
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, "accepted", r.JSON["verdict"], "%s", r.Raw)

		var c response
		require.Eventually(t, func() bool {
			c = request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
			return c.Status == http.StatusOK && c.JSON["mode"] == "minting_paused"
		}, 20*time.Second, 50*time.Millisecond, "the monitor pauses minting")
		require.Equal(t, "minting_paused", c.JSON["decided_mode"], "%s", c.Raw)
		require.Equal(t, 50.0, c.JSON["score"], "100 − (35 + 15 for 15 % below 1.0): %s", c.Raw)
		require.Equal(t, false, c.JSON["healthy"])
		before := creditSupply(t, sys)["reserve_ratio"].(float64)
		require.InDelta(t, 0.858291, before, 1e-6)

		small := creditDeposit(t, sys, ada.ID, 1, "wire-2")
		requireStatus(t, http.StatusCreated, small)
		after := creditSupply(t, sys)["reserve_ratio"].(float64)
		require.Greater(t, after, before, "the small deposit raised the ratio")
		require.Less(t, after, 1.0, "and the hole is not filled")

		w := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), map[string]any{"contributor_id": ada.ID, "amount_cc": 1}, ada.auth())
		requireStatus(t, http.StatusBadRequest, w)
		require.Contains(t, w.JSON["detail"], "backing", "a withdrawal must leave the ratio at or above 1.0")
	}, "-monitor-interval=1s", "-rate-poll-interval=0")
}

package e2e_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// The limits on what one CC movement may do, black-box through the
// gateway: the unstake cooldown tier counts what the contributor unstaked
// from the idea over the last 24 hours, so splitting an exit does not
// dodge it; a movement moves at least 0.01 CC; an unstake names an idea;
// and the supply stops at what the ledger can count instead of wrapping
// around. The window's roll-over (24 hours later) needs an injected clock
// and is tested in the ledger's use cases.

// TestLedgerCooldownWindow: 2 000 CC unstaked at once cools 72 h, and so
// do 21 unstakes of 99.999999 CC in a row once their total passes 1 000 CC
// (they used to be released at once, every one of them).
func TestLedgerCooldownWindow(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		bob := creditRegister(t, sys, "bob")
		idea1 := creditIdea(t, sys, "tide mill")
		idea2 := creditIdea(t, sys, "salt kiln")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 30, "wire-ada")) // 2 985 CC
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, bob.ID, 30, "wire-bob"))
		stake := func(u creditUser, idea string, amount float64) {
			t.Helper()
			requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
				map[string]any{"contributor_id": u.ID, "idea_id": idea, "amount_cc": amount}, u.auth()))
		}
		unstake := func(u creditUser, idea string, amount float64) response {
			t.Helper()
			r := request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
				map[string]any{"contributor_id": u.ID, "idea_id": idea, "amount_cc": amount}, u.auth())
			requireStatus(t, http.StatusOK, r)
			return r
		}
		stake(ada, idea1, 2500)
		stake(ada, idea2, 200)
		stake(bob, idea1, 2500)

		t.Run("2 000 CC at once cools 72 h", func(t *testing.T) {
			r := unstake(bob, idea1, 2000)
			require.Equal(t, "cooling", r.JSON["status"])
			require.Equal(t, 72.0, r.JSON["cooldown_hours"])
		})

		t.Run("21 unstakes of 99.999999 CC cool like one exit of 2 100 CC", func(t *testing.T) {
			var hours []float64
			for range 21 {
				r := unstake(ada, idea1, 99.999999)
				hours = append(hours, r.JSON["cooldown_hours"].(float64))
				if r.JSON["cooldown_hours"] == 0.0 {
					require.Equal(t, "released", r.JSON["status"])
				} else {
					require.Equal(t, "cooling", r.JSON["status"])
				}
			}
			require.Equal(t, []float64{
				0,                                  // 99.999999 CC in the window
				24, 24, 24, 24, 24, 24, 24, 24, 24, // up to 999.99999 CC
				72, 72, 72, 72, 72, 72, 72, 72, 72, 72, 72, // past 1 000 CC
			}, hours)
			// 2 985 - 2 700 staked + 99.999999 released; 20 lots cooling.
			require.Equal(t, creditBal{Available: 384.999999, Staked: 600.000021, Cooling: 1999.99998}, creditBalances(t, sys, ada.ID))
		})

		t.Run("each idea has its own window, each contributor their own", func(t *testing.T) {
			r := unstake(ada, idea2, 99)
			require.Equal(t, "released", r.JSON["status"], "nothing unstaked from idea 2 before")
			r = unstake(bob, idea1, 1)
			require.Equal(t, 72.0, r.JSON["cooldown_hours"], "bob's own 2 000 CC count for bob")
		})
	}, creditFlags...)
}

// TestLedgerMovementMinimum: a stake, an unstake or a withdrawal of less
// than 0.01 CC, or a deposit that would mint less, is a 422 naming the
// amount and writes nothing; 0.01 CC is allowed. An unstake of a blank
// idea id is a 422 naming idea_id (it was a 400 "insufficient balance").
func TestLedgerMovementMinimum(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		idea := creditIdea(t, sys, "wind pump")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 1, "wire-1")) // 99.5 CC
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 10}, ada.auth()))
		bal := creditBalances(t, sys, ada.ID)
		require.Equal(t, creditBal{Available: 89.5, Staked: 10}, bal)

		t.Run("dust: 422 naming the amount, nothing written", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			for name, c := range map[string]struct {
				path string
				body map[string]any
			}{
				"stake":         {"/api/cc/stake", map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 0.009999}},
				"stake on idea": {"/api/ideas/" + idea + "/stake", map[string]any{"contributor_id": ada.ID, "amount_cc": 0.000001}},
				"dry run":       {"/api/cc/stake", map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 0.005, "dry_run": true}},
				"unstake":       {"/api/cc/unstake", map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 0.009999}},
				"withdraw":      {"/api/cc/withdraw", map[string]any{"contributor_id": ada.ID, "amount_cc": 0.009999}},
			} {
				r := request(t, http.MethodPost, sys.URL(c.path), c.body, ada.auth())
				requireFieldError(t, r, "amount_cc")
				require.Contains(t, r.JSON["detail"], "0.01", name)
			}
			// 0.0001 USD mints 0.00995 CC at the 99.5 buy rate.
			requireFieldError(t, creditDeposit(t, sys, ada.ID, 0.0001, "dust"), "amount_usd")
			require.Equal(t, bal, creditBalances(t, sys, ada.ID))
			require.Equal(t, before, creditAuditTotal(t, sys))
		})

		t.Run("0.01 CC is a movement", func(t *testing.T) {
			requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
				map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 0.01}, ada.auth()))
			requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
				map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 0.01}, ada.auth()))
			requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"),
				map[string]any{"contributor_id": ada.ID, "amount_cc": 0.01}, ada.auth()))
			r := creditDeposit(t, sys, ada.ID, 0.000101, "small")
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, 0.010049, r.JSON["amount_cc"])
			require.Equal(t, creditBal{Available: 89.500049, Staked: 10}, creditBalances(t, sys, ada.ID))
		})

		t.Run("a blank idea id is a 422 naming idea_id", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			for _, id := range []string{" ", "\t"} {
				requireFieldError(t, request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
					map[string]any{"contributor_id": ada.ID, "idea_id": id, "amount_cc": 1}, ada.auth()), "idea_id")
				requireFieldError(t, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
					map[string]any{"contributor_id": ada.ID, "idea_id": id, "amount_cc": 1}, ada.auth()), "idea_id")
			}
			require.Equal(t, before, creditAuditTotal(t, sys))
		})
	}, creditFlags...)
}

// TestLedgerSupplyLimit: the CC outstanding is an int64 of micro-CC. A
// deposit that would take it past that is a 400 "supply limit reached"
// and writes nothing; it used to wrap around and answer "backing" (or
// fail in the database).
func TestLedgerSupplyLimit(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		// The largest deposit, a billion USD, mints 99.5 billion CC:
		// 92 of them fit in 9 223 372 036 854.775807 CC, the 93rd does not.
		for i := range 92 {
			requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 1e9, fmt.Sprint("wire-", i)))
		}
		before := creditAuditTotal(t, sys)
		r := creditDeposit(t, sys, ada.ID, 1e9, "wire-over")
		requireCreditDetail(t, http.StatusBadRequest, r, "supply limit reached")
		require.NotContains(t, r.JSON["detail"], "backing")
		require.Equal(t, before, creditAuditTotal(t, sys))
		s := creditSupply(t, sys)
		require.Equal(t, 92*99.5e9, s["total_cc_outstanding"])
		require.Equal(t, 92e9, s["treasury_value_usd"])
		require.Equal(t, "healthy", s["status"])
	}, creditFlags...)
}

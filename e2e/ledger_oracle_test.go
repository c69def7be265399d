package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// The oracle circuit breaker, black-box through the gateway: it cannot be
// walked onto a manipulated rate by repeating it, a trip stops deposits
// and withdrawals at once (not when the monitor next looks), a true rate
// closes it again only after a minimum time, and the HTTP oracle's answer
// must be exactly one JSON value. Recovery past the 5-minute minimum, and
// by a second source, need an injected clock and are tested in the
// ledger's use cases.

// TestLedgerOracleBreakerWalk is the sequence: 100, then 150 four
// times. The fifth reading used to "recover" at 150 (the refused readings
// pulled the average up to them), and a deposit 0.8 s after the trip
// minted 995 CC at the held rate.
func TestLedgerOracleBreakerWalk(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		idea := creditIdea(t, sys, "sun dial")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "wire-1"))
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 200}, ada.auth()))
		require.Equal(t, creditBal{Available: 795, Staked: 200}, creditBalances(t, sys, ada.ID))
		reading := func(price float64) response {
			t.Helper()
			r := request(t, http.MethodPost, sys.URL("/api/cc/oracle/readings"), map[string]any{"cc_per_usd": price}, creditAdmin)
			requireStatus(t, http.StatusOK, r)
			return r
		}

		t.Run("100, then 150 four times: held at 100, never recovered at 150", func(t *testing.T) {
			var verdicts []string
			for _, p := range []float64{100, 150, 150, 150, 150} {
				r := reading(p)
				verdicts = append(verdicts, r.JSON["verdict"].(string))
				require.Equal(t, 100.0, r.JSON["cc_per_usd"], "the rate in force after %v", p)
			}
			require.Equal(t, []string{"accepted", "tripped", "held", "held", "held"}, verdicts)
			for range 10 {
				r := reading(150)
				require.Equal(t, "held", r.JSON["verdict"], "repeating a refused price never makes it the rate")
				require.Equal(t, 0.0, r.JSON["clean_readings"])
			}
			rate := request(t, http.MethodGet, sys.URL("/api/cc/exchange-rate"), nil)
			requireStatus(t, http.StatusOK, rate)
			require.Equal(t, 100.0, rate.JSON["cc_per_usd"])
			require.Equal(t, true, rate.JSON["breaker_tripped"])
		})

		t.Run("while it is open, deposits and withdrawals are refused at once", func(t *testing.T) {
			before := creditAuditTotal(t, sys)
			requireCreditDetail(t, http.StatusBadRequest, creditDeposit(t, sys, ada.ID, 10, "wire-2"), "oracle_breaker_tripped")
			requireCreditDetail(t, http.StatusBadRequest, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"),
				map[string]any{"contributor_id": ada.ID, "amount_cc": 100.5}, ada.auth()), "oracle_breaker_tripped")
			require.Equal(t, creditBal{Available: 795, Staked: 200}, creditBalances(t, sys, ada.ID))
			require.Equal(t, before, creditAuditTotal(t, sys))
			s := creditSupply(t, sys)
			require.Equal(t, "normal", s["mode"], "no monitor ran: the breaker refuses on its own")
			require.Equal(t, 995.0, s["total_cc_outstanding"])
			require.Equal(t, 10.0, s["treasury_value_usd"])
			// Moving CC between a contributor's own accounts exchanges nothing.
			requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
				map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 10}, ada.auth()))
			requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
				map[string]any{"contributor_id": ada.ID, "idea_id": idea, "amount_cc": 10}, ada.auth()))
		})

		t.Run("the true rate counts clean, but the breaker stays open the minimum time", func(t *testing.T) {
			for i := 1; i <= 4; i++ {
				r := reading(100)
				require.Equal(t, "held", r.JSON["verdict"], "5 minutes have not passed since the trip")
				require.Equal(t, float64(i), r.JSON["clean_readings"])
				require.Equal(t, true, r.JSON["breaker_tripped"])
			}
			requireCreditDetail(t, http.StatusBadRequest, creditDeposit(t, sys, ada.ID, 10, "wire-3"), "oracle_breaker_tripped")
			entries, _ := creditAudit(t, sys)
			var kinds []string
			for _, e := range entries {
				if e.Kind == "oracle_tripped" || e.Kind == "oracle_recovered" {
					kinds = append(kinds, e.Kind)
				}
			}
			require.Equal(t, []string{"oracle_tripped"}, kinds, "one trip, no recovery")
		})
	}, creditFlags...)
}

// TestLedgerOracleReaderRefusesTrailingJSON: an HTTP oracle answering a
// reading followed by anything else is refused, not read up to its first
// value. The oracle below first answers {"cc_per_usd": 200} followed by
// a second object, then a plain {"cc_per_usd": 100}: only the plain
// answer may become the rate (before, 200 was accepted and the true 100
// then tripped the breaker, holding the rate at 200).
func TestLedgerOracleReaderRefusesTrailingJSON(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		var (
			served atomic.Int64
			plain  atomic.Bool
		)
		oracle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			served.Add(1)
			w.Header().Set("Content-Type", "application/json")
			if plain.Load() {
				_, _ = w.Write([]byte(`{"cc_per_usd": 100}`))
				return
			}
			_, _ = w.Write([]byte(`{"cc_per_usd": 200}{"cc_per_usd": 100}`))
		}))
		t.Cleanup(oracle.Close)
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine),
			"-rate-oracle-url="+oracle.URL, "-rate-poll-interval=50ms")

		require.Eventually(t, func() bool { return served.Load() >= 3 }, 10*time.Second, 10*time.Millisecond,
			"the ledger reads the oracle")
		// A reading taken from those answers would be the rate by now.
		time.Sleep(200 * time.Millisecond)
		rate := request(t, http.MethodGet, sys.URL("/api/cc/exchange-rate"), nil)
		requireStatus(t, http.StatusOK, rate)
		require.Nil(t, rate.JSON["as_of"], "no reading was recorded: %s", rate.Raw)
		require.NotEqual(t, 200.0, rate.JSON["cc_per_usd"])

		plain.Store(true)
		require.Eventually(t, func() bool {
			r := request(t, http.MethodGet, sys.URL("/api/cc/exchange-rate"), nil)
			return r.Status == http.StatusOK && r.JSON["as_of"] != nil
		}, 10*time.Second, 20*time.Millisecond, "the plain answer is read")
		rate = request(t, http.MethodGet, sys.URL("/api/cc/exchange-rate"), nil)
		requireStatus(t, http.StatusOK, rate)
		require.Equal(t, 100.0, rate.JSON["cc_per_usd"], "body: %s", rate.Raw)
		require.Equal(t, false, rate.JSON["breaker_tripped"])
		require.Equal(t, "http", rate.JSON["source"])
		incidents, page := listPage(t, request(t, http.MethodGet, sys.URL("/api/incidents"), nil), "incidents")
		require.Empty(t, incidents, "the breaker never tripped")
		require.Equal(t, wantPage(50, 0, 0, false), page)
	})
}

package e2e_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// economyUser is a registered contributor with their token.
type economyUser struct{ id, token string }

func (u economyUser) bearer() string { return "Authorization: Bearer " + u.token }

func registerUser(t *testing.T, sys *allinonetest.System, handle string) economyUser {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/onboarding/register"), map[string]any{"handle": handle}, anonymous)
	requireStatus(t, http.StatusCreated, r)
	return economyUser{id: r.JSON["contributor_id"].(string), token: r.JSON["session_token"].(string)}
}

func deposit(t *testing.T, sys *allinonetest.System, who string, usd float64, ref string, headers ...string) response {
	t.Helper()
	return request(t, http.MethodPost, sys.URL("/api/cc/deposit"),
		map[string]any{"contributor_id": who, "amount_usd": usd, "reference": ref}, headers...)
}

func balances(t *testing.T, sys *allinonetest.System, who string) map[string]any {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/cc/balances/"+who), nil)
	requireStatus(t, http.StatusOK, r)
	return r.JSON
}

// auditTotal is the number of entries in the audit log once every
// movement's entries are sequenced.
func auditTotal(t *testing.T, sys *allinonetest.System) float64 {
	t.Helper()
	waitSequenced(t, sys)
	entries, page := listPage(t, request(t, http.MethodGet, sys.URL("/api/audit?limit=1"), nil), "entries")
	total := page["total"].(float64)
	require.Len(t, entries, min(int(total), 1))
	page, _ = withoutCursor(t, page)
	require.Equal(t, wantPage(1, 0, int(total), total > 1), page)
	return total
}

// TestEconomyDepositsRatesAndSupply: deposits mint at the buy rate with the
// administrator key, idempotently by reference; the rate posts its spread;
// the supply stays backed.
func TestEconomyDepositsRatesAndSupply(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := registerUser(t, sys, "ada")

		rate := request(t, http.MethodGet, sys.URL("/api/cc/exchange-rate"), nil)
		requireStatus(t, http.StatusOK, rate)
		require.Equal(t, 100.0, rate.JSON["cc_per_usd"])
		require.Equal(t, 1.0, rate.JSON["spread_pct"])
		require.Less(t, rate.JSON["buy_rate"], rate.JSON["cc_per_usd"])
		require.Greater(t, rate.JSON["sell_rate"], rate.JSON["cc_per_usd"])
		require.Equal(t, 0.01, rate.JSON["usd_per_cc"])

		s := request(t, http.MethodGet, sys.URL("/api/cc/supply"), nil)
		requireStatus(t, http.StatusOK, s)
		require.Equal(t, 1.0, s.JSON["reserve_ratio"], "nothing outstanding")

		requireStatus(t, http.StatusUnauthorized, deposit(t, sys, ada.id, 10, "w1", anonymous))
		requireStatus(t, http.StatusUnauthorized, deposit(t, sys, ada.id, 10, "w1", "X-API-Key: wrong"))
		d := deposit(t, sys, ada.id, 10, "w1", adminHeader)
		requireStatus(t, http.StatusCreated, d)
		require.Equal(t, 995.0, d.JSON["amount_cc"])
		require.Equal(t, 0.05, d.JSON["spread_usd"])
		require.Equal(t, false, d.JSON["duplicate"])

		again := deposit(t, sys, ada.id, 10, "w1", adminHeader)
		requireStatus(t, http.StatusOK, again)
		require.Equal(t, true, again.JSON["duplicate"])
		require.Equal(t, 995.0, balances(t, sys, ada.id)["available_cc"], "nothing minted twice")
		requireStatus(t, http.StatusConflict, deposit(t, sys, ada.id, 11, "w1", adminHeader))
		requireStatus(t, http.StatusNotFound, deposit(t, sys, "nobody", 10, "w2", adminHeader))
		for _, bad := range []map[string]any{
			{"contributor_id": ada.id, "amount_usd": 0, "reference": "x"},
			{"contributor_id": ada.id, "amount_usd": -1, "reference": "x"},
			{"contributor_id": ada.id, "amount_usd": 1.0000001, "reference": "x"},
			{"contributor_id": ada.id, "amount_usd": 1},
		} {
			requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodPost, sys.URL("/api/cc/deposit"), bad, adminHeader))
		}

		s = request(t, http.MethodGet, sys.URL("/api/cc/supply"), nil)
		requireStatus(t, http.StatusOK, s)
		require.Equal(t, 995.0, s.JSON["total_cc_outstanding"])
		require.Equal(t, 10.0, s.JSON["treasury_value_usd"])
		require.Equal(t, "healthy", s.JSON["status"])
		require.Equal(t, "normal", s.JSON["mode"])
		require.LessOrEqual(t, s.JSON["total_cc_outstanding"].(float64), s.JSON["treasury_value_usd"].(float64)/s.JSON["exchange_rate"].(float64))

		h := request(t, http.MethodGet, sys.URL("/api/cc/supply/history?days=3"), nil)
		requireStatus(t, http.StatusOK, h)
		days := h.JSON["days"].([]any)
		require.Len(t, days, 3)
		today := days[2].(map[string]any)
		require.Equal(t, time.Now().UTC().Format(time.DateOnly), today["day"])
		require.Equal(t, s.JSON["total_cc_outstanding"], today["total_cc_outstanding"], "today ends with the supply now")
		require.Equal(t, s.JSON["treasury_value_usd"], today["treasury_value_usd"])
		require.Equal(t, s.JSON["reserve_ratio"], today["reserve_ratio"])
		require.Nil(t, days[0].(map[string]any)["reserve_ratio"], "before this Foundry's first deposit")
		requireFieldError(t, request(t, http.MethodGet, sys.URL("/api/cc/supply/history?days=0"), nil), "days")
	})
}

// TestEconomyStakesAndOwnership: stakes and unstakes are the owner's, with
// dry runs open to anyone; cooldowns follow the amount; the Idempotency-Key
// replays; withdrawals burn at the sell rate.
func TestEconomyStakesAndOwnership(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada, bob := registerUser(t, sys, "ada"), registerUser(t, sys, "bob")
		idea := createIdea(t, sys, map[string]any{"name": "Stake me", "potential_value": 100, "estimated_cost": 10})["id"].(string)
		requireStatus(t, http.StatusCreated, deposit(t, sys, ada.id, 20, "w1", adminHeader)) // 1990 CC

		stake := map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 1500}
		requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/cc/stake"), stake, anonymous))
		requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/cc/stake"), stake, adminHeader)) // not even the administrator
		requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/cc/stake"), stake, bob.bearer()))
		requireStatus(t, http.StatusNotFound, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": ada.id, "idea_id": "no-such-idea", "amount_cc": 1}, ada.bearer()))
		requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 0}, ada.bearer()))

		before := auditTotal(t, sys)
		dry := request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/stake"),
			map[string]any{"contributor_id": ada.id, "amount_cc": 1500, "dry_run": true}, anonymous)
		requireStatus(t, http.StatusOK, dry)
		require.Equal(t, true, dry.JSON["dry_run"])
		require.Equal(t, 490.0, dry.JSON["available_cc_after"])
		require.Equal(t, 3.0, dry.JSON["projection"].(map[string]any)["high_multiplier"])
		require.Equal(t, before, auditTotal(t, sys), "a dry run records nothing")
		require.Equal(t, 1990.0, balances(t, sys, ada.id)["available_cc"])

		s := request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/stake"), map[string]any{"contributor_id": ada.id, "amount_cc": 1500},
			ada.bearer(), "Idempotency-Key: stake-1")
		requireStatus(t, http.StatusCreated, s)
		require.Equal(t, 1500.0, s.JSON["position_cc"])
		replay := request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/stake"), map[string]any{"contributor_id": ada.id, "amount_cc": 1500},
			ada.bearer(), "Idempotency-Key: stake-1")
		require.Equal(t, string(s.Raw), string(replay.Raw), "the same key and body answer the same response")
		requireStatus(t, http.StatusUnprocessableEntity, request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/stake"),
			map[string]any{"contributor_id": ada.id, "amount_cc": 1}, ada.bearer(), "Idempotency-Key: stake-1"))
		require.Equal(t, 1500.0, balances(t, sys, ada.id)["staked_cc"], "staked once")

		short := request(t, http.MethodPost, sys.URL("/api/cc/stake"), map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 491}, ada.bearer())
		requireStatus(t, http.StatusBadRequest, short)
		require.Contains(t, short.JSON["detail"], "insufficient balance")

		for _, c := range []struct {
			amount float64
			status string
			hours  float64
		}{{50, "released", 0}, {100, "cooling", 24}, {1001, "cooling", 72}} {
			u := request(t, http.MethodPost, sys.URL("/api/cc/unstake"), map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": c.amount}, ada.bearer())
			requireStatus(t, http.StatusOK, u)
			require.Equal(t, c.status, u.JSON["status"])
			require.Equal(t, c.hours, u.JSON["cooldown_hours"])
		}
		require.Equal(t, map[string]any{"contributor_id": ada.id, "contributor_handle": "ada", "available_cc": 540.0, "staked_cc": 349.0,
			"cooling_cc": 1101.0}, balances(t, sys, ada.id))
		requireStatus(t, http.StatusBadRequest, request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
			map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 350}, ada.bearer()))
		requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/cc/unstake"),
			map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 1}, bob.bearer()))

		w := request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), map[string]any{"contributor_id": ada.id, "amount_cc": 201}, ada.bearer())
		requireStatus(t, http.StatusOK, w)
		require.Equal(t, 2.0, w.JSON["amount_usd"])
		require.Equal(t, 0.01, w.JSON["spread_usd"])
		requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), map[string]any{"contributor_id": ada.id, "amount_cc": 1}, bob.bearer()))

		inv := request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.id+"/investments"), nil)
		requireStatus(t, http.StatusOK, inv)
		require.Equal(t, []any{map[string]any{"idea_id": idea, "amount_cc": 349.0, "since": inv.JSON["positions"].([]any)[0].(map[string]any)["since"],
			"earned_cc": 0.0, "attribution_cc": 349.0, "realized_cc": 0.0, "gain_pct": 0.0}}, inv.JSON["positions"],
			"no impact recorded: the attribution is the stake, nothing realized")
		require.Equal(t, 1.0, inv.JSON["summary"].(map[string]any)["position_count"])
		hist := request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.id+"/investment-history"), nil)
		events, page := listPage(t, hist, "events")
		require.Equal(t, ada.id, hist.JSON["contributor_id"])
		var kinds []any
		for _, e := range events {
			kinds = append(kinds, e["kind"])
		}
		require.Equal(t, []any{"withdraw", "unstake", "unstake", "unstake", "stake", "deposit"}, kinds)
		require.Equal(t, wantPage(50, 0, 6, false), page)

		pv := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea+"/invest-preview"), nil)
		requireStatus(t, http.StatusOK, pv)
		require.Equal(t, 349.0, pv.JSON["total_cc_staked"])
		require.Equal(t, "none", pv.JSON["stage"])
		requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL("/api/ideas/no-such-idea/invest-preview"), nil))

		p := request(t, http.MethodPost, sys.URL("/api/contributors/"+ada.id+"/pledges"), map[string]any{"idea_id": idea, "hours_pledged": 2.5}, ada.bearer())
		requireStatus(t, http.StatusCreated, p)
		require.Equal(t, 1250.0, p.JSON["cc_equivalent"])
		requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/contributors/"+ada.id+"/pledges"),
			map[string]any{"idea_id": idea, "hours_pledged": 1}, bob.bearer()))
	})
}

// TestEconomyAuditOracleAndFreeze: every movement is in the chain, which
// verifies; the oracle breaker holds the rate; a signer freezes, the
// administrator unfreezes.
func TestEconomyAuditOracleAndFreeze(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := registerUser(t, sys, "ada")
		idea := createIdea(t, sys, map[string]any{"name": "Freeze me", "potential_value": 10})["id"].(string)
		requireStatus(t, http.StatusCreated, deposit(t, sys, ada.id, 10, "w1", adminHeader))

		waitSequenced(t, sys)
		entries, page := listPage(t, request(t, http.MethodGet, sys.URL("/api/audit"), nil), "entries")
		require.GreaterOrEqual(t, len(entries), 2)
		require.Equal(t, wantPage(50, 0, len(entries), false), page, "one page holds the whole chain")
		kinds := map[any]bool{}
		for i, e := range entries {
			kinds[e["kind"]] = true
			if i+1 < len(entries) {
				require.Equal(t, entries[i+1]["hash"], e["prev_hash"], "newest first, chained")
			}
		}
		require.True(t, kinds["deposit"] && kinds["spread_fee"], "the movement and its spread fee: %v", kinds)
		v := request(t, http.MethodGet, sys.URL("/api/audit/verify"), nil)
		requireStatus(t, http.StatusOK, v)
		require.Equal(t, true, v.JSON["valid"])
		requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/audit/repair"), map[string]any{}, anonymous))
		rep := request(t, http.MethodPost, sys.URL("/api/audit/repair"), map[string]any{}, adminHeader)
		requireStatus(t, http.StatusOK, rep)
		require.Equal(t, false, rep.JSON["repaired"], "a sound chain is left alone")

		for _, p := range []float64{100, 100, 130} {
			r := request(t, http.MethodPost, sys.URL("/api/cc/oracle/readings"), map[string]any{"cc_per_usd": p}, adminHeader)
			requireStatus(t, http.StatusOK, r)
		}
		rate := request(t, http.MethodGet, sys.URL("/api/cc/exchange-rate"), nil)
		require.Equal(t, 100.0, rate.JSON["cc_per_usd"], "the rate stays at the last good value")
		require.Equal(t, true, rate.JSON["breaker_tripped"])

		bad := request(t, http.MethodPost, sys.URL("/api/incidents/freeze"), signedFreeze("wrong", "ops", "x"), anonymous)
		requireStatus(t, http.StatusForbidden, bad)
		requireStatus(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/incidents/freeze"),
			signedFreeze(freezeOpsSecret, "nobody", "x"), anonymous))
		f := request(t, http.MethodPost, sys.URL("/api/incidents/freeze"), signedFreeze(freezeOpsSecret, "ops", "drill"), anonymous)
		requireStatus(t, http.StatusOK, f)
		require.Equal(t, true, f.JSON["frozen"])
		requireStatus(t, http.StatusConflict, request(t, http.MethodPost, sys.URL("/api/incidents/freeze"),
			signedFreeze(freezeOpsSecret, "ops", "again"), anonymous))

		for _, r := range []response{
			deposit(t, sys, ada.id, 1, "w2", adminHeader),
			request(t, http.MethodPost, sys.URL("/api/cc/stake"), map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 1}, ada.bearer()),
			request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), map[string]any{"contributor_id": ada.id, "amount_cc": 1}, ada.bearer()),
		} {
			requireStatus(t, http.StatusBadRequest, r)
			require.Equal(t, "frozen", r.JSON["detail"])
		}
		st := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
		requireStatus(t, http.StatusOK, st)
		require.Equal(t, true, st.JSON["frozen"])
		require.Equal(t, "frozen", st.JSON["mode"])
		require.Equal(t, "critical", st.JSON["severity"])

		requireStatus(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/incidents/unfreeze"), map[string]any{}, anonymous))
		u := request(t, http.MethodPost, sys.URL("/api/incidents/unfreeze"), map[string]any{"reason": "drill over"}, adminHeader)
		requireStatus(t, http.StatusOK, u)
		require.Equal(t, "normal", u.JSON["mode"])
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
			map[string]any{"contributor_id": ada.id, "idea_id": idea, "amount_cc": 1}, ada.bearer()))

		incidents, page := listPage(t, request(t, http.MethodGet, sys.URL("/api/incidents"), nil), "incidents")
		var incidentKinds []any
		for _, i := range incidents {
			incidentKinds = append(incidentKinds, i["kind"])
		}
		require.Equal(t, []any{"unfreeze", "freeze", "oracle_tripped"}, incidentKinds)
		require.Equal(t, wantPage(50, 0, 3, false), page)

		c := request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
		requireStatus(t, http.StatusOK, c)
		require.Equal(t, true, c.JSON["audit_chain_valid"])
		require.Equal(t, true, c.JSON["oracle_breaker_tripped"])
		require.Equal(t, "minting_paused", c.JSON["decided_mode"], "an open breaker pauses minting")
	}, "-signers=ops:"+freezeOpsSecret, "-monitor-interval=0")
}

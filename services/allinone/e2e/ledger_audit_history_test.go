package e2e_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// The audit chain's history after a repair, black-box through the gateway,
// with the ledger's database edited while Foundry is stopped as an
// attacker (or a bad migration) would; and the chain's amounts, answered
// in CC like every other route.

// auditHistoryEdit stops sys, runs statements on its ledger database and
// starts it again.
func auditHistoryEdit(t *testing.T, sys *allinonetest.System, statements ...string) {
	t.Helper()
	sys.Stop()
	cfg := database.Config{DataDir: sys.Storage.DataDir, Schema: "ledger"}
	if sys.Storage.Engine == database.Postgres {
		cfg = database.Config{URL: sys.Storage.DatabaseURL, Schema: "ledger"}
	}
	db, err := database.Open(context.Background(), cfg)
	require.NoError(t, err)
	for _, s := range statements {
		n, err := db.Exec(context.Background(), s)
		require.NoError(t, err, s)
		require.Equal(t, int64(1), n, s)
	}
	db.Close()
	sys.Restart()
}

// auditHistoryVerify is GET /api/audit/verify.
type auditHistoryVerify struct {
	Valid          bool   `json:"valid"`
	EntriesChecked int    `json:"entries_checked"`
	LastVerified   *int   `json:"last_verified_seq"`
	FirstDivergent *int   `json:"first_divergent_seq"`
	Reason         string `json:"reason"`
	FromSeq        int    `json:"verified_from_seq"`
	Repaired       []struct {
		RepairSeq int    `json:"repair_seq"`
		FromSeq   int    `json:"from_seq"`
		ToSeq     int    `json:"to_seq"`
		Reason    string `json:"reason"`
	} `json:"repaired_breaks"`
}

func auditHistoryVerifyNow(t *testing.T, sys *allinonetest.System) auditHistoryVerify {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/audit/verify"), nil)
	requireStatus(t, http.StatusOK, r)
	var v auditHistoryVerify
	require.NoError(t, json.Unmarshal(r.Raw, &v), "%s", r.Raw)
	require.NotNil(t, v.Repaired, "repaired_breaks is a list: %s", r.Raw)
	require.Zero(t, v.FromSeq, "the walk always starts at the first entry")
	return v
}

// requireAuditBroken checks verification, the incident status and the
// economy monitor all see the chain broken at seq first.
func requireAuditBroken(t *testing.T, sys *allinonetest.System, first int) {
	t.Helper()
	v := auditHistoryVerifyNow(t, sys)
	require.False(t, v.Valid, "%+v", v)
	require.NotNil(t, v.FirstDivergent)
	require.Equal(t, first, *v.FirstDivergent, "%+v", v)
	require.NotEmpty(t, v.Reason)

	st := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
	requireStatus(t, http.StatusOK, st)
	require.Equal(t, false, st.JSON["audit_chain_valid"])
	require.Equal(t, "critical", st.JSON["severity"])

	c := request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
	requireStatus(t, http.StatusOK, c)
	require.Equal(t, false, c.JSON["audit_chain_valid"], "%s", c.Raw)
	require.Equal(t, float64(first), c.JSON["first_divergent_seq"], "%s", c.Raw)
	require.Equal(t, "frozen", c.JSON["decided_mode"], "the monitor would freeze: %s", c.Raw)
}

func auditHistoryRepair(t *testing.T, sys *allinonetest.System) map[string]any {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/audit/repair"), map[string]any{}, creditAdmin)
	requireStatus(t, http.StatusOK, r)
	require.Equal(t, true, r.JSON["repaired"], "%s", r.Raw)
	return r.JSON
}

// TestLedgerAuditHistoryAfterRepair is the reproduction: entry 3 is
// tampered, the ledger restarted and the chain repaired; then entry 1's
// amount and entry 4's subject are edited and the ledger restarted. Both
// are found (one repair names one break), and the break the first repair
// named stays reported as repaired.
func TestLedgerAuditHistoryAfterRepair(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		for _, ref := range []string{"wire-1", "wire-2", "wire-3"} {
			requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, ref))
		}
		require.Equal(t, 6, creditAuditTotal(t, sys), "three deposits and their spread fees")
		v := auditHistoryVerifyNow(t, sys)
		require.True(t, v.Valid)
		require.Empty(t, v.Repaired)

		auditHistoryEdit(t, sys, `UPDATE audit_entries SET amount = 1 WHERE seq = 3`)
		requireAuditBroken(t, sys, 3)
		rep := auditHistoryRepair(t, sys)
		require.Equal(t, map[string]any{"repair_seq": 7.0, "from_seq": 3.0, "to_seq": 3.0,
			"reason": "entry fields do not match their stored encoding"}, rep["repaired_break"])
		entry := rep["repair_entry"].(map[string]any)
		require.Equal(t, "repair", entry["kind"])
		require.Equal(t, 0.0, entry["amount"])
		require.Equal(t, "", entry["unit"])
		require.Equal(t, "3", entry["attrs"].(map[string]any)["repaired_from"])

		v = auditHistoryVerifyNow(t, sys)
		require.True(t, v.Valid, "%+v", v)
		require.Equal(t, 7, v.EntriesChecked, "the whole chain, the repaired entry included")
		require.Len(t, v.Repaired, 1)
		require.Equal(t, []int{7, 3, 3}, []int{v.Repaired[0].RepairSeq, v.Repaired[0].FromSeq, v.Repaired[0].ToSeq})
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "wire-4"))

		// The edits of the issue, made after the repair.
		auditHistoryEdit(t, sys, `UPDATE audit_entries SET amount = 1 WHERE seq = 1`,
			`UPDATE audit_entries SET subject = 'mallory' WHERE seq = 4`)
		requireAuditBroken(t, sys, 1)

		auditHistoryRepair(t, sys)
		requireAuditBroken(t, sys, 4)
		auditHistoryRepair(t, sys)
		v = auditHistoryVerifyNow(t, sys)
		require.True(t, v.Valid, "%+v", v)
		var from []int
		for _, b := range v.Repaired {
			from = append(from, b.FromSeq)
		}
		require.Equal(t, []int{1, 3, 4}, from, "every repaired break stays reported, in chain order")

		// The repaired entry edited again, or an entry after the repairs:
		// found again.
		auditHistoryEdit(t, sys, `UPDATE audit_entries SET amount = 2 WHERE seq = 3`)
		requireAuditBroken(t, sys, 3)
		auditHistoryRepair(t, sys)
		require.True(t, auditHistoryVerifyNow(t, sys).Valid)
		auditHistoryEdit(t, sys, `UPDATE audit_entries SET actor = 'mallory' WHERE seq = 9`)
		requireAuditBroken(t, sys, 9)
	}, creditFlags...)
}

// TestLedgerAuditAmountsInCC: GET /api/audit answers amounts in whole units
// (CC, USD, CC per USD) like every other route, with the unit; the chain
// itself, its micro-unit attributes and its hashes are unchanged.
func TestLedgerAuditAmountsInCC(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		d := creditDeposit(t, sys, ada.ID, 10, "wire-1")
		requireStatus(t, http.StatusCreated, d)
		require.Equal(t, 995.0, d.JSON["amount_cc"])
		for _, p := range []float64{100, 100, 130} {
			requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/cc/oracle/readings"), map[string]any{"cc_per_usd": p}, creditAdmin))
		}
		requireStatus(t, http.StatusOK, freezePost(t, sys.BaseURL, freezeBody(freezeOpsSecret, "ops", time.Now(), freezeNonce(t), "drill")))

		r := request(t, http.MethodGet, sys.URL("/api/audit"), nil)
		requireStatus(t, http.StatusOK, r)
		entries := r.JSON["entries"].([]any)
		type got struct {
			kind, unit, attrUnit string
			amount               float64
		}
		var all []got
		for _, e := range entries {
			m := e.(map[string]any)
			attrUnit, _ := m["attrs"].(map[string]any)["unit"].(string)
			all = append(all, got{m["kind"].(string), m["unit"].(string), attrUnit, m["amount"].(float64)})
		}
		require.Equal(t, []got{
			{"freeze", "", "", 0},
			{"oracle_tripped", "cc_per_usd", "micro_cc_per_usd", 130},
			{"spread_fee", "usd", "micro_usd", 0.05},
			{"deposit", "cc", "micro_cc", 995},
		}, all)
		v := auditHistoryVerifyNow(t, sys)
		require.True(t, v.Valid, "the hashes still cover the micro-units: %+v", v)
	}, freezeFlags...)
}

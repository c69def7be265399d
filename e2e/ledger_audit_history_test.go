package e2e_test

import (
	"context"
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

// auditHistoryEdit stops sys, runs statements on its ledger database (each
// must change one row) and starts it again.
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

// auditHistoryVerifyNow is the administrator's full verification (GET
// /api/audit/verify?full=true): the walk from the first entry. The
// incremental one, which anyone may ask for and the coherence check runs,
// starts where the last sound verification stopped, so an entry rewritten
// after it was verified is the full walk's to find.
func auditHistoryVerifyNow(t *testing.T, sys *allinonetest.System) auditLogVerify {
	t.Helper()
	return auditVerify(t, sys, true)
}

// requireAuditBroken checks the full verification finds the log broken at
// seq first, with a reason.
func requireAuditBroken(t *testing.T, sys *allinonetest.System, first int) {
	t.Helper()
	v := auditHistoryVerifyNow(t, sys)
	require.False(t, v.Valid, "%+v", v)
	require.NotNil(t, v.FirstDivergent)
	require.Equal(t, first, *v.FirstDivergent, "%+v", v)
	require.NotEmpty(t, v.Reason)
}

// requireOneStory checks that every report says the same as the full
// walk once it found the log broken at seq first: the incremental
// verification (which does not walk the entry again, but carries the open
// finding), the incident status and the coherence check, and that the
// economy stopped.
func requireOneStory(t *testing.T, sys *allinonetest.System, first int) {
	t.Helper()
	v := auditVerify(t, sys, false)
	require.False(t, v.Valid, "%+v", v)
	require.NotNil(t, v.FirstDivergent)
	require.Equal(t, first, *v.FirstDivergent, "%+v", v)
	require.Contains(t, v.Reason, "integrity finding: ")

	st := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
	requireStatus(t, http.StatusOK, st)
	require.Equal(t, false, st.JSON["audit_chain_valid"], "%s", st.Raw)
	require.Equal(t, "read_only", st.JSON["mode"], "%s", st.Raw)
	c := request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
	requireStatus(t, http.StatusOK, c)
	require.Equal(t, false, c.JSON["audit_chain_valid"], "%s", c.Raw)
	require.Equal(t, false, c.JSON["healthy"], "%s", c.Raw)
	require.Equal(t, "read_only", c.JSON["decided_mode"], "%s", c.Raw)
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
// are found and repaired, and the break the first repair named stays
// reported as repaired. What a walk finds stops the economy at once
// (read_only: each first finding appends the change of mode to the log)
// until the repair, which lifts it again (one entry more). The scrubber is
// off here, so the seqs each step appends are the test's to count (its own
// test is ledger_integrity_test.go). The ledger restarts with the signing
// key it is configured with, so every checkpoint still verifies and no key
// change is recorded.
func TestLedgerAuditHistoryAfterRepair(t *testing.T) {
	t.Parallel()
	skey, vkey := newAuditKey(t, "foundry-e2e-history")
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		for _, ref := range []string{"wire-1", "wire-2", "wire-3"} {
			requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, ref))
		}
		require.Equal(t, 6, creditAuditTotal(t, sys), "three deposits and their spread fees")
		v := auditHistoryVerifyNow(t, sys)
		require.True(t, v.Valid)
		require.Equal(t, 6, v.EntriesChecked)
		require.Empty(t, v.Repaired)
		signed := auditReadCheckpoint(t, sys, vkey)
		require.Equal(t, int64(7), signed.Size)

		auditHistoryEdit(t, sys, `UPDATE audit_entries SET amount = 1 WHERE seq = 3`)
		requireAuditBroken(t, sys, 3) // read_only: seq 7
		requireOneStory(t, sys, 3)
		auditConsistent(t, sys, signed, auditReadCheckpoint(t, sys, vkey))
		rep := auditHistoryRepair(t, sys) // the repair: seq 8; normal again: seq 9
		require.Equal(t, map[string]any{"repair_seq": 8.0, "from_seq": 3.0, "to_seq": 3.0,
			"reason": "entry fields do not match their stored encoding"}, rep["repaired_break"])
		require.Equal(t, "normal", rep["mode"])
		require.Equal(t, 1.0, rep["resolved_findings"])
		entry := rep["repair_entry"].(map[string]any)
		require.Equal(t, "repair", entry["kind"])
		require.Equal(t, 0.0, entry["amount"])
		require.Equal(t, "", entry["unit"])
		require.Equal(t, "3", entry["attrs"].(map[string]any)["repaired_from"])

		v = auditHistoryVerifyNow(t, sys)
		require.True(t, v.Valid, "%+v", v)
		require.Equal(t, 9, v.EntriesChecked, "the whole chain, the repaired entry included")
		require.Len(t, v.Repaired, 1)
		require.Equal(t, []int{8, 3, 3}, []int{v.Repaired[0].RepairSeq, v.Repaired[0].FromSeq, v.Repaired[0].ToSeq})
		// The repair extended the signed log; the tree before it is a prefix.
		repaired := auditReadCheckpoint(t, sys, vkey)
		require.Equal(t, int64(10), repaired.Size)
		auditConsistent(t, sys, signed, repaired)
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "wire-4"))
		require.Equal(t, 11, creditAuditTotal(t, sys), "the deposit and its fee after the repair")

		// The edits of the issue, made after the repair: one repair records
		// both breaks.
		auditHistoryEdit(t, sys, `UPDATE audit_entries SET amount = 1 WHERE seq = 1`,
			`UPDATE audit_entries SET subject = 'mallory' WHERE seq = 4`)
		requireAuditBroken(t, sys, 1)    // read_only: seq 12
		rep = auditHistoryRepair(t, sys) // seq 13 and 14; normal: seq 15
		require.Len(t, rep["repaired_breaks"], 2, "%v", rep)
		v = auditHistoryVerifyNow(t, sys)
		require.True(t, v.Valid, "%+v", v)
		require.Equal(t, 15, v.EntriesChecked, "two repair entries more, and the changes of mode")
		var from []int
		for _, b := range v.Repaired {
			from = append(from, b.FromSeq)
		}
		require.Equal(t, []int{1, 3, 4}, from, "every repaired break stays reported, in chain order")

		// The repaired entry edited again, or an entry after the repairs:
		// found again.
		auditHistoryEdit(t, sys, `UPDATE audit_entries SET amount = 2 WHERE seq = 3`)
		requireAuditBroken(t, sys, 3) // seq 16
		auditHistoryRepair(t, sys)    // seq 17; normal: seq 18
		require.True(t, auditHistoryVerifyNow(t, sys).Valid)
		auditHistoryEdit(t, sys, `UPDATE audit_entries SET actor = 'mallory' WHERE seq = 9`)
		requireAuditBroken(t, sys, 9) // seq 19

		// Every checkpoint the restarted ledgers signed verifies with the
		// configured key, and each extends the one before.
		latest := auditReadCheckpoint(t, sys, vkey)
		require.Equal(t, int64(20), latest.Size, "nine entries, four repairs and six changes of mode")
		auditConsistent(t, sys, signed, latest)
		require.Equal(t, vkey, auditVerifierKey(t, sys))
		incidents, _ := listPage(t, request(t, http.MethodGet, sys.URL("/api/incidents?limit=500"), nil), "incidents")
		kinds := map[string]int{}
		for _, it := range incidents {
			kinds[it["kind"].(string)]++
		}
		require.Equal(t, 4, kinds["audit_repair"], "one incident per break repaired: %v", kinds)
		require.Equal(t, 4, kinds["integrity_log"], "one per finding: %v", kinds)
		require.Zero(t, kinds["audit_key_changed"], "no change of signing key")
	}, append([]string{"-audit-signing-key=" + skey, "-audit-scrub-cycle=0"}, creditFlags...)...)
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
		require.Equal(t, 4, v.EntriesChecked, "%+v", v)
	}, freezeFlags...)
}

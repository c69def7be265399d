package e2e_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestLedgerReconcileDeletedDeposit is the reproduction, black-box:
// a deposit's two audit entries are deleted and the economy row's head is
// rewound to the entry before them, with Foundry stopped. The chain that
// is left still chains, but the signed checkpoint covers the entries that
// are gone: verification reports them missing, the incident status and
// the coherence check see the log broken (and the monitor would freeze),
// and the sequencer refuses to extend a log rewound behind its signed
// checkpoint, so the next deposit's entries never take the deleted
// entries' sequence numbers: they wait in the queue.
func TestLedgerReconcileDeletedDeposit(t *testing.T) {
	t.Parallel()
	skey, vkey := newAuditKey(t, "foundry-e2e-reconcile")
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		for _, ref := range []string{"wire-1", "wire-2"} {
			requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, ref))
		}
		require.Equal(t, 4, creditAuditTotal(t, sys), "two deposits and their spread fees")
		signed := auditReadCheckpoint(t, sys, vkey)
		require.Equal(t, int64(5), signed.Size, "the genesis record and the four entries")
		before := creditBalances(t, sys, ada.ID)

		auditHistoryEdit(t, sys, `DELETE FROM audit_entries WHERE seq = 4`, `DELETE FROM audit_entries WHERE seq = 3`,
			`UPDATE economy SET audit_seq = 2, audit_head = (SELECT hash FROM audit_entries WHERE seq = 2)`)

		const missing = "entries missing: the chain's head is seq 2, but the signed checkpoint covers seq 4"
		for _, full := range []bool{false, true} {
			v := auditVerify(t, sys, full)
			require.False(t, v.Valid, "the signed checkpoint covers the deleted entries: %+v", v)
			require.NotNil(t, v.FirstDivergent, "%+v", v)
			require.Equal(t, 3, *v.FirstDivergent, "%+v", v)
			require.Equal(t, missing, v.Reason)
			require.Equal(t, signed.Size, v.TreeSize, "verified against the checkpoint signed before the edit")
		}

		st := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
		requireStatus(t, http.StatusOK, st)
		require.Equal(t, false, st.JSON["audit_chain_valid"], "%s", st.Raw)
		require.Equal(t, "critical", st.JSON["severity"], "%s", st.Raw)

		c := request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
		requireStatus(t, http.StatusOK, c)
		require.Equal(t, false, c.JSON["audit_chain_valid"], "%s", c.Raw)
		require.Equal(t, 3.0, c.JSON["first_divergent_seq"], "%s", c.Raw)
		require.Equal(t, "frozen", c.JSON["decided_mode"], "the deposit the log no longer records: %s", c.Raw)
		require.Contains(t, string(c.Raw), missing, "%s", c.Raw)

		// The economy stopped at once: the next deposit is refused, and
		// the changes of mode wait in the queue, since the sequencer does
		// not integrate anything after a rewound head: seq 3 is not taken
		// again, and no checkpoint is signed over the gap.
		d := creditDeposit(t, sys, ada.ID, 10, "wire-3")
		requireStatus(t, http.StatusBadRequest, d)
		require.Equal(t, "frozen", d.JSON["detail"])
		time.Sleep(time.Second) // five sequencer intervals
		v := auditVerify(t, sys, false)
		require.Equal(t, 2, v.Unsequenced, "read_only, then frozen, wait: %+v", v)
		require.False(t, v.Valid, "%+v", v)
		_, total := creditAuditNow(t, sys)
		require.Equal(t, 2, total, "nothing was appended after the rewound head")
		require.Equal(t, signed, auditReadCheckpoint(t, sys, vkey), "no checkpoint was signed over the gap")
		require.Equal(t, before, creditBalances(t, sys, ada.ID))

		// The repair moves the head back to the signed checkpoint, restores
		// the deposit from its journal entry and records its fee lost; the
		// administrator unfreezes, and it holds.
		rep := request(t, http.MethodPost, sys.URL("/api/audit/repair"), map[string]any{}, creditAdmin)
		requireStatus(t, http.StatusOK, rep)
		require.Equal(t, []any{3.0}, rep.JSON["restored_seqs"], "%s", rep.Raw)
		require.Equal(t, []any{4.0}, rep.JSON["lost_seqs"], "%s", rep.Raw)
		require.Equal(t, []any{}, rep.JSON["open_findings"], "%s", rep.Raw)
		require.Equal(t, "frozen", rep.JSON["mode"], "a freeze is the administrator's to lift")
		un := request(t, http.MethodPost, sys.URL("/api/incidents/unfreeze"), map[string]any{"reason": "repaired"}, creditAdmin)
		requireStatus(t, http.StatusOK, un)
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "wire-3"))
		for range 3 {
			c = request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
			requireStatus(t, http.StatusOK, c)
			require.Equal(t, true, c.JSON["healthy"], "%s", c.Raw)
			require.Equal(t, "normal", c.JSON["mode"], "%s", c.Raw)
		}
		v = auditVerify(t, sys, true)
		require.True(t, v.Valid, "%+v", v)
		require.Equal(t, creditBal{Available: before.Available + 995}, creditBalances(t, sys, ada.ID))
	}, append([]string{"-audit-signing-key=" + skey, "-audit-scrub-cycle=0"}, creditFlags...)...)
}

// TestLedgerReconcileDroppedQueuedEntry: a deposit's audit entries are
// deleted from the queue before the sequencer integrated them (it was
// stalled: another replica held its lease), with Foundry stopped. The log
// never saw them, so it verifies; but the coherence check reconciles the
// journal with the log and reports the journal entry no audit entry
// records, and the incident status and the monitor treat that like a
// broken chain.
func TestLedgerReconcileDroppedQueuedEntry(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "wire-1"))
		require.Equal(t, 2, creditAuditTotal(t, sys), "the deposit and its spread fee")

		// A replica that holds the sequencer's lease and does nothing.
		auditHistoryEdit(t, sys, fmt.Sprintf(`INSERT INTO leases (name, holder, expires_at) VALUES ('audit-sequencer', 'stuck-replica', %d)
			ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at`,
			time.Now().Add(24*time.Hour).UnixMicro()))
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "wire-2"))
		time.Sleep(time.Second) // five sequencer intervals
		v := auditVerify(t, sys, false)
		require.Equal(t, 2, v.Unsequenced, "the deposit and its fee wait for a sequencer: %+v", v)
		require.True(t, v.Valid, "%+v", v)
		hist := request(t, http.MethodGet, sys.URL("/api/contributors/"+ada.ID+"/investment-history"), nil)
		events, page := listPage(t, hist, "events")
		require.Len(t, events, 2)
		require.Equal(t, wantPage(50, 0, 2, false), page)
		queued := events[0]
		require.Equal(t, "deposit", queued["kind"])
		require.Equal(t, 0.0, queued["audit_seq"], "no seq while the entry waits: %s", hist.Raw)

		auditHistoryEdit(t, sys, `DELETE FROM audit_queue WHERE kind = 'deposit'`, `DELETE FROM audit_queue WHERE kind = 'spread_fee'`)

		problem := fmt.Sprintf("the journal and the audit trail disagree: journal entry %s (deposit) is recorded by no audit entry", queued["id"])
		c := request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
		requireStatus(t, http.StatusOK, c)
		require.Equal(t, false, c.JSON["audit_chain_valid"], "%s", c.Raw)
		require.Equal(t, "frozen", c.JSON["decided_mode"], "%s", c.Raw)
		require.Equal(t, "frozen", c.JSON["mode"], "the check froze the economy at once: %s", c.Raw)
		require.Contains(t, string(c.Raw), problem, "%s", c.Raw)
		st := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
		requireStatus(t, http.StatusOK, st)
		require.Equal(t, false, st.JSON["audit_chain_valid"], "%s", st.Raw)
		require.Equal(t, "critical", st.JSON["severity"], "%s", st.Raw)

		// The log itself is sound, and the verification answer says what
		// is open: one story.
		v = auditVerify(t, sys, true)
		require.False(t, v.Valid, "%+v", v)
		require.Equal(t, 3, v.EntriesChecked, "the deposit's, its fee's and the change of mode: %+v", v)
		require.Equal(t, "integrity finding: "+problem, v.Reason)
	}, append([]string{"-audit-scrub-cycle=0"}, creditFlags...)...)
}

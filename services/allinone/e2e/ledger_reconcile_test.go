package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestLedgerReconcileDeletedDeposit is the reproduction, black-box:
// a deposit's two audit entries are deleted and the economy row's head is
// rewound to the entry before them, with Foundry stopped. The chain still
// verifies, but the coherence check reconciles the journal with the trail
// and reports the deposit the trail no longer records (and the monitor
// would freeze), and the next deposit cannot take the deleted entries'
// sequence number.
func TestLedgerReconcileDeletedDeposit(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		for _, ref := range []string{"wire-1", "wire-2"} {
			requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, ref))
		}
		require.Equal(t, 4, creditAuditTotal(t, sys), "two deposits and their spread fees")
		before := creditBalances(t, sys, ada.ID)

		auditHistoryEdit(t, sys, `DELETE FROM audit_entries WHERE seq = 4`, `DELETE FROM audit_entries WHERE seq = 3`,
			`UPDATE economy SET audit_seq = 2, audit_head = (SELECT hash FROM audit_entries WHERE seq = 2)`)

		v := auditHistoryVerifyNow(t, sys)
		require.True(t, v.Valid, "the chain alone cannot see it: %+v", v)

		st := request(t, http.MethodGet, sys.URL("/api/incidents/status"), nil)
		requireStatus(t, http.StatusOK, st)
		require.Equal(t, false, st.JSON["audit_chain_valid"], "%s", st.Raw)
		require.Equal(t, "critical", st.JSON["severity"], "%s", st.Raw)

		c := request(t, http.MethodGet, sys.URL("/api/health/coherence"), nil)
		requireStatus(t, http.StatusOK, c)
		require.Equal(t, false, c.JSON["audit_chain_valid"], "%s", c.Raw)
		require.Equal(t, 3.0, c.JSON["first_divergent_seq"], "%s", c.Raw)
		require.Equal(t, "frozen", c.JSON["decided_mode"], "the monitor would freeze: %s", c.Raw)
		require.Contains(t, string(c.Raw), "the journal and the audit trail disagree", "%s", c.Raw)
		require.Contains(t, string(c.Raw), "(deposit) names audit entry 3, which does not exist", "%s", c.Raw)

		r := creditDeposit(t, sys, ada.ID, 10, "wire-3")
		requireStatus(t, http.StatusServiceUnavailable, r)
		require.Contains(t, r.JSON["detail"], "the journal and the audit log disagree (audit seq 3 is taken)", "the next deposit cannot reuse seq 3")
		require.Equal(t, 2, creditAuditTotal(t, sys), "the refused deposit wrote nothing")
		require.Equal(t, before, creditBalances(t, sys, ada.ID))
	}, creditFlags...)
}

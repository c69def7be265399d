package usecase_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestDeletedMovementIsFoundAndItsSeqNeverReused is the issue's
// reproduction: a deposit's two audit entries are deleted and the economy
// row's head is rewound to the entry before them. The chain still
// verifies (it ends where the head says), so only the reconciliation of
// the journal with the trail sees the deposit the trail no longer
// records; the coherence check must fail on it, and the next movement
// must not take the deposit's seq (two journal entries would then share
// one audit entry and the trail would look whole again).
func TestDeletedMovementIsFoundAndItsSeqNeverReused(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposits(t, e.app, "wire-", 2) // seq 1, 2: the first and its fee; 3, 4: the second

		c, err := e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Empty(t, c.Unreconciled)
		require.True(t, c.Trail().OK, "%+v", c.Trail())

		var entryID, head string
		require.NoError(t, e.db.QueryRow(ctx, `SELECT id FROM cc_entries WHERE audit_seq = 3`).Scan(&entryID))
		require.NoError(t, e.db.QueryRow(ctx, `SELECT hash FROM audit_entries WHERE seq = 2`).Scan(&head))
		require.NoError(t, e.db.Tx(ctx, func(q database.Querier) error {
			if _, err := q.Exec(ctx, `DELETE FROM audit_entries WHERE seq IN (3, 4)`); err != nil {
				return err
			}
			_, err := q.Exec(ctx, `UPDATE economy SET audit_seq = 2, audit_head = $1`, head)
			return err
		}))

		res, err := e.app.VerifyAudit(ctx)
		require.NoError(t, err)
		require.True(t, res.OK, "the chain alone cannot see it: %+v", res)

		c, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.Discrepancy{{AuditSeq: 3, EntryID: entryID,
			Problem: "journal entry " + entryID + " (deposit) names audit entry 3, which does not exist"}}, c.Unreconciled)
		trail := c.Trail()
		require.False(t, trail.OK)
		require.Equal(t, int64(3), trail.FirstDivergent)
		require.Equal(t, "the journal and the audit trail disagree: journal entry "+entryID+
			" (deposit) names audit entry 3, which does not exist", trail.Reason)

		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: cc, Reference: "wire-next"}, nil)
		require.ErrorIs(t, err, store.ErrAuditSeqTaken, "the next deposit cannot reuse seq 3")
		var n int
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM cc_entries WHERE audit_seq = 3`).Scan(&n))
		require.Equal(t, 1, n)
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_entries`).Scan(&n))
		require.Equal(t, 2, n, "the refused deposit wrote nothing")

		c, err = e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Len(t, c.Unreconciled, 1, "still reported")
	})
}

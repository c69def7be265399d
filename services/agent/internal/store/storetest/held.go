package storetest

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// hold holds a transaction of the harness open (dbtest.Hold).
func hold(t *testing.T, h Harness, fn func(r repos) error) (commit func() error) {
	t.Helper()
	return dbtest.Hold(t, h.write, fn)
}

// waitingForALock reports whether a session of the harness's database (its
// schema names its connections) is waiting for a lock: on Postgres, a
// statement that queued behind a held transaction's row lock.
func waitingForALock(t *testing.T, h Harness) bool {
	t.Helper()
	var n int
	require.NoError(t, h.DB.QueryRow(context.Background(), `SELECT COUNT(*) FROM pg_stat_activity
		WHERE application_name = 'foundry-' || current_schema() AND wait_event_type = 'Lock'`).Scan(&n))
	return n > 0
}

// postgresOnly skips a case that needs overlapping transactions.
func postgresOnly(t *testing.T, h Harness) {
	t.Helper()
	if h.DB.Engine() != database.Postgres {
		t.Skip("overlapping write transactions: Postgres only (SQLite's exclude each other; the sequential case covers it)")
	}
}

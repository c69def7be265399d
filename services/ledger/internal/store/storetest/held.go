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

// lockWithin runs fn in a transaction whose lock waits the server cuts
// short after timeout (lock_timeout): the error says whether fn waited
// that long for a lock another transaction holds. The server gives up the
// wait, so no backend is left waiting (and then holding the lock) once the
// case moved on, as a client-side deadline could leave it.
func lockWithin(h Harness, timeout string, fn func(r repos) error) error {
	ctx := context.Background()
	return h.DB.Tx(ctx, func(q database.Querier) error {
		if _, err := q.Exec(ctx, `SELECT set_config('lock_timeout', $1, true)`, timeout); err != nil {
			return err
		}
		return fn(h.over(q))
	})
}

// mustWait requires fn to wait for a lock (one the case holds).
func mustWait(t *testing.T, h Harness, fn func(r repos) error, msg string) {
	t.Helper()
	require.ErrorContains(t, lockWithin(h, "200ms", fn), "lock timeout", msg)
}

// mustNotWait requires fn to take its locks without waiting for the case's.
// The timeout is long, so a slow moment of a loaded machine is not taken
// for a wait; a lock the case holds would outlast it.
func mustNotWait(t *testing.T, h Harness, fn func(r repos) error, msg string) {
	t.Helper()
	require.NoError(t, lockWithin(h, "5s", fn), msg)
}

// postgresOnly skips a case that needs overlapping transactions.
func postgresOnly(t *testing.T, h Harness) {
	t.Helper()
	if h.DB.Engine() != database.Postgres {
		t.Skip("overlapping write transactions: Postgres only (SQLite's exclude each other)")
	}
}

package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
)

// hold runs fn in a transaction of its own, in the background, and keeps
// that transaction open once fn has returned, holding whatever fn locked,
// until commit is called: commit lets it commit and returns its error. The
// test's cleanup commits it too, so a failing test never leaves it open.
// For the cases where two transactions overlap (Postgres only: SQLite's
// write transactions exclude each other).
func hold(t *testing.T, h Harness, fn func(r repos) error) (commit func() error) {
	t.Helper()
	ran := make(chan error, 1)
	proceed := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		done <- h.write(func(r repos) error {
			err := fn(r)
			if !first { // a retried transaction: the test already moved on
				return err
			}
			first = false
			ran <- err
			if err != nil {
				return err
			}
			<-proceed
			return nil
		})
	}()
	require.NoError(t, <-ran, "the held transaction's statements")
	var (
		once   sync.Once
		result error
	)
	commit = func() error {
		once.Do(func() {
			close(proceed)
			result = <-done
		})
		return result
	}
	t.Cleanup(func() { _ = commit() })
	return commit
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
// The advisory locks (the mode lock, the idempotency keys') are the whole
// database's, not the schema's: another test's transaction, in another
// schema, may hold one for a moment, so the timeout is long; one the case
// holds would outlast it.
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

package storetest

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
)

// hold runs fn in a transaction of its own, in the background, and keeps
// that transaction open once fn has returned, holding whatever rows fn
// locked, until commit is called: commit lets it commit and returns its
// error. The test's cleanup commits it too, so a failing test never leaves
// it open. For the cases where two transactions overlap (Postgres only:
// SQLite's write transactions exclude each other).
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

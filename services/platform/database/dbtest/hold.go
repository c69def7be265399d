package dbtest

import (
	"sync"
	"testing"
)

// Hold runs fn in a transaction of its own, in the background, through tx
// (which runs its function in one transaction, as a store test's harness
// writes), and keeps that transaction open once fn has returned, holding
// whatever fn locked, until commit is called: commit lets it commit and
// returns its error. The test's cleanup commits it too, so a failing test
// never leaves it open. fn failing fails the test. For the cases where two
// transactions overlap (Postgres only: SQLite's write transactions exclude
// each other).
func Hold[R any](t testing.TB, tx func(fn func(r R) error) error, fn func(r R) error) (commit func() error) {
	t.Helper()
	ran := make(chan error, 1)
	proceed := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		done <- tx(func(r R) error {
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
	if err := <-ran; err != nil {
		t.Fatalf("the held transaction's statements: %v", err)
	}
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

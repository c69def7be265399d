// Package uow is the unit of work every service's use-case layer runs on:
// repositories over one querier (the pool or a transaction), a transaction
// per writing use case, the time records carry, and the idempotency runner
// over the same repositories. Each service's use-case App holds one Unit
// over its own Repos instead of writing the same few methods again.
package uow

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// Unit runs a service's use cases over its repositories R.
type Unit[R any] struct {
	// DB is the service's database.
	DB *database.DB
	// Open builds the repositories over a querier.
	Open func(q database.Querier) R
	// Clock tells the time (the wall clock when nil).
	Clock clock.Clock
	// AfterCommit, when set, runs after every transaction Tx committed
	// (never after one that rolled back): the ledger wakes its audit
	// sequencer there.
	AfterCommit func()
}

// New returns the unit over db; a nil clock is the wall clock.
func New[R any](db *database.DB, open func(q database.Querier) R, c clock.Clock) Unit[R] {
	if c == nil {
		c = clock.Real{}
	}
	return Unit[R]{DB: db, Open: open, Clock: c}
}

// Tx runs fn in one transaction over fresh repositories and commits when fn
// returns nil. Serialization failures and deadlocks are retried by the
// database layer, so fn must have no effect outside the transaction.
func (u Unit[R]) Tx(ctx context.Context, fn func(r R) error) error {
	err := u.DB.Tx(ctx, func(q database.Querier) error { return fn(u.Open(q)) })
	if err == nil && u.AfterCommit != nil {
		u.AfterCommit()
	}
	return err
}

// Read gives repositories over the pool: for use cases that only read.
func (u Unit[R]) Read() R { return u.Open(u.DB) }

// Now is the time records carry: the clock's, in UTC, to the microsecond
// the stores keep, so a write's answer equals what a later read returns.
func (u Unit[R]) Now() time.Time {
	c := u.Clock
	if c == nil {
		c = clock.Real{}
	}
	return c.Now().UTC().Truncate(time.Microsecond)
}

// Runner returns the idempotency runner over the unit: its transactions
// (AfterCommit included), its repositories over the pool, and its time;
// keys picks the Idempotency-Key records' store out of the repositories.
// The runner holds a copy of the unit, so set AfterCommit first.
func (u Unit[R]) Runner(keys func(r R) idempotency.Keys) idempotency.Runner[R] {
	return idempotency.Runner[R]{Tx: u.Tx, Read: u.Read, Keys: keys, Now: u.Now}
}

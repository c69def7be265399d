// Package lease elects one leader among a service's replicas with a lease
// row: a background loop (the monitor, the agent's pipeline loop) runs only
// where the lease is held, and another replica takes over once the holder
// stops renewing it. It works the same on Postgres and SQLite with one
// statement, needs no session-level state (unlike an advisory lock, which
// is tied to one pooled connection), and survives a holder that dies
// without cleaning up: the lease simply expires.
//
// Expiry is computed and compared with the database's clock, never a
// replica's: with each replica's own clock, one running minutes behind
// would write a lease the others already see as expired, and one running
// ahead would take a lease its holder still renews, and both would lead.
// The database is the one clock every replica shares.
//
// A lease only says who should lead; it cannot stop a former holder that
// has not yet noticed it lost the lease (a renewal that failed, a process
// paused for longer than the lease). Holders must stop their work as soon
// as a renewal fails or finds the lease taken, or once a lease's length has
// passed since the last successful call was sent (the lease lasts at least
// that long, since the database dates it on arrival) without another
// answering; and the work itself should be safe to attempt twice (a unique
// constraint, an idempotency key) for the window that remains.
//
// The owning service's migrations create the table:
//
//	CREATE TABLE leases (
//	    name       TEXT PRIMARY KEY,
//	    holder     TEXT NOT NULL,
//	    expires_at BIGINT NOT NULL -- Unix microseconds, the database's clock
//	);
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/foundryhq/foundry/services/platform/database"
)

// dbNow is the database's current time in Unix microseconds, the unit
// every time column holds, as SQL for the engine.
//
// Postgres: statement_timestamp(), the time the statement arrived, so one
// statement sees one instant (clock_timestamp() changes between its
// uses; now() is the transaction's start, stale inside a long
// transaction). SQLite: 'now', which SQLite holds fixed for one statement
// and knows to the millisecond; rounded to whole milliseconds so the float
// it comes as never lands a microsecond off.
func dbNow(e database.Engine) string {
	if e == database.Postgres {
		return `CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000000 AS BIGINT)`
	}
	return `(CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000)`
}

// Take takes or renews the lease name for holder for ttl from the
// database's now, and reports whether holder has it: it does when nobody
// held it, when holder already did, or when the previous holder's lease
// had expired by the database's clock. Concurrent callers race on the row;
// exactly one wins (the upsert's WHERE clause is evaluated against the row
// as it is at write time on both engines).
func Take(ctx context.Context, q database.Querier, name, holder string, ttl time.Duration) (bool, error) {
	now := dbNow(q.Engine())
	n, err := q.Exec(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, `+now+` + $3)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE leases.holder = excluded.holder OR leases.expires_at < `+now,
		name, holder, ttl.Microseconds())
	if err != nil {
		return false, fmt.Errorf("acquire lease %s: %w", name, err)
	}
	return n == 1, nil
}

// Release gives the lease up (when holder has it), so another replica
// takes over at once instead of after the lease expires.
func Release(ctx context.Context, q database.Querier, name, holder string) error {
	if _, err := q.Exec(ctx, `DELETE FROM leases WHERE name = $1 AND holder = $2`, name, holder); err != nil {
		return fmt.Errorf("release lease %s: %w", name, err)
	}
	return nil
}

// Current returns who holds the lease now by the database's clock (""
// when nobody does).
func Current(ctx context.Context, q database.Querier, name string) (string, error) {
	var holder string
	err := q.QueryRow(ctx, `SELECT holder FROM leases WHERE name = $1 AND expires_at >= `+dbNow(q.Engine()), name).Scan(&holder)
	if errors.Is(err, database.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read lease %s: %w", name, err)
	}
	return holder, nil
}

// HolderID names this process as a lease holder: the host name (the pod's,
// in Kubernetes; fallback when there is none) and a random suffix, so two
// processes on one host never share a lease.
func HolderID(fallback string) string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = fallback
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return host + "-" + hex.EncodeToString(b)
}

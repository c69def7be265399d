// Package lease elects one leader among a service's replicas with a lease
// row: a background loop (the monitor, the agent's pipeline loop) runs only
// where the lease is held, and another replica takes over once the holder
// stops renewing it. It works the same on Postgres and SQLite with one
// statement, needs no session-level state (unlike an advisory lock, which
// is tied to one pooled connection), and survives a holder that dies
// without cleaning up: the lease simply expires.
//
// The owning service's migrations create the table:
//
//	CREATE TABLE leases (
//	    name       TEXT PRIMARY KEY,
//	    holder     TEXT NOT NULL,
//	    expires_at BIGINT NOT NULL -- Unix microseconds
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

// Acquire takes or renews the lease name for holder until now+ttl, and
// reports whether holder has it: it does when nobody held it, when holder
// already did, or when the previous holder's lease had expired. Concurrent
// callers race on the row; exactly one wins (the upsert's WHERE clause is
// evaluated against the row as it is at write time on both engines).
func Acquire(ctx context.Context, q database.Querier, name, holder string, ttl time.Duration, now time.Time) (bool, error) {
	n, err := q.Exec(ctx, `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE leases.holder = excluded.holder OR leases.expires_at < $4`,
		name, holder, database.Micros(now.Add(ttl)), database.Micros(now))
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

// Holder returns who holds the lease at now ("" when nobody does).
func Holder(ctx context.Context, q database.Querier, name string, now time.Time) (string, error) {
	var holder string
	err := q.QueryRow(ctx, `SELECT holder FROM leases WHERE name = $1 AND expires_at >= $2`, name, database.Micros(now)).Scan(&holder)
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

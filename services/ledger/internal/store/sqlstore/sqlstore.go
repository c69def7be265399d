// Package sqlstore implements the ledger's repositories on Postgres and
// SQLite with one set of SQL statements (see the platform database
// package). Every repository works over a database.Querier, the pool or the
// use case's transaction, and none opens a transaction of its own.
package sqlstore

import (
	"context"
	"fmt"

	"github.com/foundryhq/foundry/services/platform/database"
)

// count returns the row count of each table, for storage reports; tables
// are constants of this package, never input.
func count(ctx context.Context, q database.Querier, tables ...string) (map[string]int, error) {
	out := make(map[string]int, len(tables))
	for _, t := range tables {
		var n int
		if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM `+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

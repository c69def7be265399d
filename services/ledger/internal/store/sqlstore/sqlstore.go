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

// keptCount is the statement that reads the count migration 0027's
// trigger keeps of table's rows: the sum of its shards (at most 16 rows).
// table is a constant of this package, never input.
func keptCount(table string) string {
	return `SELECT COALESCE(SUM(n), 0) FROM row_counts WHERE name = '` + table + `'`
}

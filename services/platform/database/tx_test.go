package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestTransactionsWhateverTheirFirstStatement: a transaction is one
// whatever its first statement is (on Postgres that statement carries the
// BEGIN): a later failure rolls the first statement back too, a failure of
// the first statement leaves nothing and the pool usable, and a
// transaction that ran nothing commits nothing.
func TestTransactionsWhateverTheirFirstStatement(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "platform", schema)
		count := func() int {
			var n int
			require.NoError(t, db.QueryRow(ctx, `SELECT COUNT(*) FROM counters`).Scan(&n))
			return n
		}
		boom := errors.New("boom")
		firsts := map[string]func(tx database.Querier, name string) error{
			"exec": func(tx database.Querier, name string) error {
				_, err := tx.Exec(ctx, `INSERT INTO counters (name, value) VALUES ($1, 1)`, name)
				return err
			},
			"query row": func(tx database.Querier, name string) error {
				var v int64
				return tx.QueryRow(ctx, `INSERT INTO counters (name, value) VALUES ($1, 7) RETURNING value`, name).Scan(&v)
			},
			"query": func(tx database.Querier, name string) error {
				rows, err := tx.Query(ctx, `INSERT INTO counters (name, value) VALUES ($1, 1) RETURNING name`, name)
				if err != nil {
					return err
				}
				for rows.Next() {
				}
				rows.Close()
				return rows.Err()
			},
			"batch": func(tx database.Querier, name string) error {
				b := &database.Batch{}
				b.Exec(nil, `INSERT INTO counters (name, value) VALUES ($1, 1)`, name)
				return tx.SendBatch(ctx, b)
			},
		}
		for kind, first := range firsts {
			// Committed: the row is there.
			require.NoError(t, db.Tx(ctx, func(tx database.Querier) error { return first(tx, kind+"-kept") }), kind)
			// A later failure takes the first statement back with it.
			err := db.Tx(ctx, func(tx database.Querier) error {
				if err := first(tx, kind+"-undone"); err != nil {
					return err
				}
				var v int64
				require.NoError(t, tx.QueryRow(ctx, `SELECT value FROM counters WHERE name = $1`, kind+"-undone").Scan(&v),
					"%s: the transaction reads its own write", kind)
				return boom
			})
			require.ErrorIs(t, err, boom, kind)
			var n int
			require.NoError(t, db.QueryRow(ctx, `SELECT COUNT(*) FROM counters WHERE name = $1`, kind+"-undone").Scan(&n))
			require.Zero(t, n, "%s: rolled back with the transaction", kind)
			// The first statement fails (the name is taken): nothing is
			// written, and the connection goes back usable.
			err = db.Tx(ctx, func(tx database.Querier) error { return first(tx, kind+"-kept") })
			require.True(t, database.IsUniqueViolation(err), "%s: %v", kind, err)
		}
		require.Equal(t, len(firsts), count())

		// A first QueryRow that finds nothing is an answer, not a failure.
		require.NoError(t, db.Tx(ctx, func(tx database.Querier) error {
			var v int64
			require.ErrorIs(t, tx.QueryRow(ctx, `SELECT value FROM counters WHERE name = $1`, "none").Scan(&v), database.ErrNoRows)
			_, err := tx.Exec(ctx, `INSERT INTO counters (name, value) VALUES ('after-no-row', 1)`)
			return err
		}))
		// Nothing run, nothing to commit.
		require.NoError(t, db.Tx(ctx, func(database.Querier) error { return nil }))
		require.Equal(t, len(firsts)+1, count())

		if engine == database.Postgres {
			// A failure the function swallowed leaves Postgres's transaction
			// failed: its COMMIT is a ROLLBACK, reported as an error.
			err := db.Tx(ctx, func(tx database.Querier) error {
				_, _ = tx.Exec(ctx, `INSERT INTO counters (name, value) VALUES ('exec-kept', 1)`)
				return nil
			})
			require.Error(t, err, "a swallowed failure cannot pass for a commit")
			require.Equal(t, len(firsts)+1, count())
		}
		// Many transactions in a row on a small pool: no connection was
		// left inside a transaction.
		for i := range 20 {
			require.NoError(t, db.Tx(ctx, func(tx database.Querier) error {
				_, err := tx.Exec(ctx, `UPDATE counters SET value = value + 1 WHERE name = 'exec-kept'`)
				return err
			}), "transaction %d", i)
		}
	})
}

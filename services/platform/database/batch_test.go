package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestBatch runs one batch of a multi-row query, a one-row query and a
// no-row query on both engines, on the pool and in a transaction, and
// stops at the first failing callback.
func TestBatch(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "platform", schema)
		for _, name := range []string{"a", "b", "c"} {
			_, err := db.Exec(ctx, `INSERT INTO counters (name, value) VALUES ($1, $2)`, name, int64(len(name)+int(name[0]-'a')))
			require.NoError(t, err)
		}
		run := func(q database.Querier) (names []string, total, updated int64, missing error) {
			b := &database.Batch{}
			b.Query(func(rows database.Rows) error {
				for rows.Next() {
					var n string
					if err := rows.Scan(&n); err != nil {
						return err
					}
					names = append(names, n)
				}
				return nil
			}, `SELECT name FROM counters WHERE value >= $1 ORDER BY name`, int64(2))
			b.QueryRow(func(row database.Row) error { return row.Scan(&total) }, `SELECT SUM(value) FROM counters`)
			b.QueryRow(func(row database.Row) error {
				var v int64
				missing = row.Scan(&v)
				return nil
			}, `SELECT value FROM counters WHERE name = $1`, "zzz")
			b.Exec(func(n int64) error { updated = n; return nil }, `UPDATE counters SET value = value WHERE name <> $1`, "a")
			require.Equal(t, 4, b.Len())
			require.NoError(t, q.SendBatch(ctx, b))
			return names, total, updated, missing
		}
		names, total, updated, missing := run(db)
		require.Equal(t, int64(2), updated, "an Exec gets the rows it affected")
		require.Equal(t, []string{"b", "c"}, names)
		require.Equal(t, int64(6), total)
		require.ErrorIs(t, missing, database.ErrNoRows)

		require.NoError(t, db.Tx(ctx, func(tx database.Querier) error {
			names, total, updated, missing := run(tx)
			require.Equal(t, int64(2), updated)
			require.Equal(t, []string{"b", "c"}, names)
			require.Equal(t, int64(6), total)
			require.ErrorIs(t, missing, database.ErrNoRows)
			return nil
		}))

		stop := errors.New("stop here")
		var after bool
		b := &database.Batch{}
		b.QueryRow(func(database.Row) error { return stop }, `SELECT 1`)
		b.QueryRow(func(database.Row) error { after = true; return nil }, `SELECT 2`)
		require.ErrorIs(t, db.SendBatch(ctx, b), stop)
		require.False(t, after, "the first error stops the batch")
		require.NoError(t, db.SendBatch(ctx, &database.Batch{}), "an empty batch is nothing to do")
	})
}

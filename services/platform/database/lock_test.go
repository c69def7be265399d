package database_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestRowLocks runs a locking read and a skipping read on both engines;
// on Postgres, a second transaction skips the row the first one locked and
// takes the next, and FOR UPDATE OF locks only the named table.
func TestRowLocks(t *testing.T) {
	t.Parallel()
	require.Equal(t, "", database.ForUpdate(database.SQLite, "a"))
	require.Equal(t, "", database.SkipLocked(database.SQLite))
	require.Equal(t, " FOR UPDATE", database.ForUpdate(database.Postgres))
	require.Equal(t, " FOR UPDATE OF a, b", database.ForUpdate(database.Postgres, "a", "b"))
	require.Equal(t, " FOR UPDATE SKIP LOCKED", database.SkipLocked(database.Postgres))

	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "platform", schema)
		for _, name := range []string{"a", "b"} {
			_, err := db.Exec(ctx, `INSERT INTO counters (name, value) VALUES ($1, 0)`, name)
			require.NoError(t, err)
		}
		take := func(q database.Querier) (string, error) {
			var name string
			err := q.QueryRow(ctx, `SELECT name FROM counters ORDER BY name LIMIT 1`+database.SkipLocked(engine)).Scan(&name)
			return name, err
		}
		require.NoError(t, db.Tx(ctx, func(q database.Querier) error {
			var v int64
			if err := q.QueryRow(ctx, `SELECT value FROM counters WHERE name = $1`+database.ForUpdate(engine, "counters"), "a").Scan(&v); err != nil {
				return err
			}
			require.Zero(t, v)
			first, err := take(q)
			require.NoError(t, err)
			require.Equal(t, "a", first, "a transaction sees the rows it locked itself")
			if engine != database.Postgres {
				return nil
			}
			// Another transaction, while this one holds "a": it skips it.
			other := make(chan string, 1)
			go func() {
				_ = db.Tx(ctx, func(q2 database.Querier) error {
					name, err := take(q2)
					if err != nil {
						name = err.Error()
					}
					other <- name
					return nil
				})
			}()
			require.Equal(t, "b", <-other, "the locked row is skipped, not waited for")
			return nil
		}))
	})
}

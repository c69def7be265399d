package database_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// TestFinalBatch: a batch marked Final ends its transaction. On Postgres its
// COMMIT travels with it, so its write is visible to others as soon as it
// returns, before the transaction's function does; on both engines a
// statement after it is refused (ErrTxEnded), a failing statement in it
// leaves nothing, and under HoldCommit it commits nothing by itself: the
// transaction goes on and commits, or rolls back, at its end.
func TestFinalBatch(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "platform", schema)
		value := func(name string) (int64, bool) {
			var v int64
			err := db.QueryRow(ctx, `SELECT value FROM counters WHERE name = $1`, name).Scan(&v)
			if errors.Is(err, database.ErrNoRows) {
				return 0, false
			}
			require.NoError(t, err)
			return v, true
		}
		insert := func(name string, v int64) *database.Batch {
			b := &database.Batch{}
			b.Exec(nil, `INSERT INTO counters (name, value) VALUES ($1, $2)`, name, v)
			return b
		}

		// The first and only trip: BEGIN, the statement and COMMIT.
		require.NoError(t, db.Tx(ctx, func(tx database.Querier) error {
			b := insert("alone", 1)
			b.Final()
			if err := tx.SendBatch(ctx, b); err != nil {
				return err
			}
			if engine == database.Postgres {
				v, ok := value("alone")
				require.True(t, ok, "committed by its batch, before the transaction's function returned")
				require.Equal(t, int64(1), v)
			}
			return nil
		}))
		v, ok := value("alone")
		require.True(t, ok)
		require.Equal(t, int64(1), v)

		// After earlier statements: they commit with it.
		require.NoError(t, db.Tx(ctx, func(tx database.Querier) error {
			if _, err := tx.Exec(ctx, `INSERT INTO counters (name, value) VALUES ('before', 2)`); err != nil {
				return err
			}
			b := &database.Batch{}
			b.Exec(nil, `UPDATE counters SET value = value + 1 WHERE name = 'before'`)
			b.Final()
			return tx.SendBatch(ctx, b)
		}))
		v, _ = value("before")
		require.Equal(t, int64(3), v)

		// Nothing may follow it, on either engine.
		err := db.Tx(ctx, func(tx database.Querier) error {
			b := insert("then", 1)
			b.Final()
			if err := tx.SendBatch(ctx, b); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE counters SET value = 5 WHERE name = 'then'`)
			require.ErrorIs(t, err, database.ErrTxEnded, "an Exec after the final batch")
			require.ErrorIs(t, tx.SendBatch(ctx, insert("then-2", 1)), database.ErrTxEnded, "a batch after it")
			var n int64
			require.ErrorIs(t, tx.QueryRow(ctx, `SELECT value FROM counters WHERE name = 'then'`).Scan(&n), database.ErrTxEnded)
			_, err = tx.Query(ctx, `SELECT value FROM counters`)
			require.ErrorIs(t, err, database.ErrTxEnded, "a Query after it")
			return nil
		})
		require.NoError(t, err)
		v, _ = value("then")
		require.Equal(t, int64(1), v, "the refused update changed nothing")

		// A failing statement in the final batch: Postgres skips the COMMIT
		// after it, and the transaction rolls back whole.
		err = db.Tx(ctx, func(tx database.Querier) error {
			if _, err := tx.Exec(ctx, `INSERT INTO counters (name, value) VALUES ('undone', 1)`); err != nil {
				return err
			}
			b := insert("undone-too", 1)
			b.Exec(nil, `INSERT INTO counters (name, value) VALUES ('alone', 9)`) // taken
			b.Final()
			return tx.SendBatch(ctx, b)
		})
		require.True(t, database.IsUniqueViolation(err), "%v", err)
		_, ok = value("undone")
		require.False(t, ok, "rolled back with the failed final batch")
		_, ok = value("undone-too")
		require.False(t, ok)

		// Under HoldCommit the final batch commits nothing by itself: the
		// caller's statements follow, and a failure after it undoes it.
		boom := errors.New("boom")
		err = db.Tx(database.HoldCommit(ctx), func(tx database.Querier) error {
			b := insert("held", 1)
			b.Final()
			if err := tx.SendBatch(ctx, b); err != nil {
				return err
			}
			if engine == database.Postgres {
				_, ok := value("held")
				require.False(t, ok, "not committed by the final batch under HoldCommit")
			}
			if _, err := tx.Exec(ctx, `UPDATE counters SET value = 2 WHERE name = 'held'`); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		_, ok = value("held")
		require.False(t, ok, "rolled back at the transaction's end")
		require.NoError(t, db.Tx(database.HoldCommit(ctx), func(tx database.Querier) error {
			b := insert("held", 1)
			b.Final()
			if err := tx.SendBatch(ctx, b); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `UPDATE counters SET value = 2 WHERE name = 'held'`)
			return err
		}))
		v, _ = value("held")
		require.Equal(t, int64(2), v)

		// Many in a row on a small pool: every connection went back out of
		// its transaction.
		for i := range 20 {
			require.NoError(t, db.Tx(ctx, func(tx database.Querier) error {
				b := &database.Batch{}
				b.Exec(nil, `UPDATE counters SET value = value + 1 WHERE name = 'alone'`)
				b.Final()
				return tx.SendBatch(ctx, b)
			}), "transaction %d", i)
		}
		v, _ = value("alone")
		require.Equal(t, int64(21), v)
	})
}

package database_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// schema is the same table on both engines: the migrations the platform's
// own tests use.
var schema = fstest.MapFS{
	"postgres/0001_init.sql": {Data: []byte(`CREATE TABLE counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL, note TEXT, flag BOOLEAN NOT NULL DEFAULT FALSE);`)},
	"sqlite/0001_init.sql":   {Data: []byte(`CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL, note TEXT, flag BOOLEAN NOT NULL DEFAULT FALSE);`)},
	"postgres/0002_more.sql": {Data: []byte(`CREATE TABLE more (id INTEGER PRIMARY KEY); CREATE INDEX more_id ON more (id);`)},
	"sqlite/0002_more.sql":   {Data: []byte(`CREATE TABLE more (id INTEGER PRIMARY KEY); CREATE INDEX more_id ON more (id);`)},
}

func TestEngines(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "platform", schema)
		require.Equal(t, engine, db.Engine())

		t.Run("migrations are versioned and idempotent", func(t *testing.T) {
			v, err := migrate.Version(ctx, db)
			require.NoError(t, err)
			require.Equal(t, 2, v)
			n, err := migrate.Up(ctx, db, schema)
			require.NoError(t, err)
			require.Equal(t, 0, n, "second run applies nothing")
		})

		t.Run("nulls, bools and no rows scan the same way", func(t *testing.T) {
			_, err := db.Exec(ctx, `INSERT INTO counters (name, value, note, flag) VALUES ($1, $2, $3, $4)`, "a", int64(1), nil, true)
			require.NoError(t, err)
			var note *string
			var flag bool
			require.NoError(t, db.QueryRow(ctx, `SELECT note, flag FROM counters WHERE name = $1`, "a").Scan(&note, &flag))
			require.Nil(t, note)
			require.True(t, flag)
			err = db.QueryRow(ctx, `SELECT note FROM counters WHERE name = $1`, "missing").Scan(&note)
			require.ErrorIs(t, err, database.ErrNoRows)
		})

		t.Run("unique violations are recognised", func(t *testing.T) {
			_, err := db.Exec(ctx, `INSERT INTO counters (name, value) VALUES ($1, 0)`, "dup")
			require.NoError(t, err)
			_, err = db.Exec(ctx, `INSERT INTO counters (name, value) VALUES ($1, 0)`, "dup")
			require.True(t, database.IsUniqueViolation(err), "got %v", err)
			require.False(t, database.IsUniqueViolation(errors.New("other")))
		})

		t.Run("rollback on error", func(t *testing.T) {
			boom := errors.New("boom")
			err := db.Tx(ctx, func(tx database.Querier) error {
				if _, err := tx.Exec(ctx, `INSERT INTO counters (name, value) VALUES ($1, 0)`, "rolled"); err != nil {
					return err
				}
				return boom
			})
			require.ErrorIs(t, err, boom)
			var n int
			require.NoError(t, db.QueryRow(ctx, `SELECT COUNT(*) FROM counters WHERE name = $1`, "rolled").Scan(&n))
			require.Equal(t, 0, n)
		})

		t.Run("concurrent read-modify-write transactions lose nothing", func(t *testing.T) {
			_, err := db.Exec(ctx, `INSERT INTO counters (name, value) VALUES ('c', 0)`)
			require.NoError(t, err)
			forUpdate := ""
			if engine == database.Postgres {
				forUpdate = " FOR UPDATE"
			}
			const workers = 20
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for range workers {
				wg.Go(func() {
					errs <- db.Tx(ctx, func(tx database.Querier) error {
						var v int64
						if err := tx.QueryRow(ctx, `SELECT value FROM counters WHERE name = 'c'`+forUpdate).Scan(&v); err != nil {
							return err
						}
						_, err := tx.Exec(ctx, `UPDATE counters SET value = $1 WHERE name = 'c'`, v+1)
						return err
					})
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			var v int64
			require.NoError(t, db.QueryRow(ctx, `SELECT value FROM counters WHERE name = 'c'`).Scan(&v))
			require.Equal(t, int64(workers), v)
		})

		t.Run("ping", func(t *testing.T) {
			require.NoError(t, db.Ping(ctx))
		})
	})
}

func TestOpenRejectsBadConfig(t *testing.T) {
	t.Parallel()
	_, err := database.Open(context.Background(), database.Config{Schema: "Bad-Name"})
	require.ErrorContains(t, err, "schema")
	_, err = database.Open(context.Background(), database.Config{Schema: "ok", URL: "mysql://x"})
	require.ErrorContains(t, err, "postgres://")
}

func TestTargetRedactsPassword(t *testing.T) {
	t.Parallel()
	db, err := database.Open(context.Background(), database.Config{Schema: "ok", URL: "postgres://u:secret@127.0.0.1:1/db"})
	require.NoError(t, err) // the pool connects lazily
	defer db.Close()
	require.NotContains(t, db.Target(), "secret")
	require.Contains(t, db.Target(), "127.0.0.1:1/db")
}

// TestIsUnavailable: connection loss and a database shutting down are
// told from a bug (the 333 × 500 "internal error" during faults);
// a constraint, a conflict and a timeout are not unavailability.
func TestIsUnavailable(t *testing.T) {
	t.Parallel()
	for _, err := range []error{
		&pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"},
		&pgconn.PgError{Code: "57P03", Message: "the database system is starting up"},
		&pgconn.PgError{Code: "08006", Message: "connection failure"},
		&pgconn.PgError{Code: "53300", Message: "too many connections"},
		fmt.Errorf("read rows: %w", io.ErrUnexpectedEOF),
		fmt.Errorf("dial: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}),
		fmt.Errorf("write: %w", syscall.EPIPE),
		errors.New("conn closed"),
		errors.New("closed pool"),
	} {
		require.True(t, database.IsUnavailable(err), "%v", err)
	}
	for _, err := range []error{
		nil,
		&pgconn.PgError{Code: "23505", Message: "duplicate key"},
		&pgconn.PgError{Code: "40001", Message: "could not serialize access"},
		&pgconn.PgError{Code: "57014", Message: "canceling statement due to statement timeout"},
		context.DeadlineExceeded,
		errors.New("record stake entry: no such column"),
	} {
		require.False(t, database.IsUnavailable(err), "%v", err)
	}
}

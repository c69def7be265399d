package uow_test

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/uow"
)

var schema = fstest.MapFS{"common/0001_items.sql": {Data: []byte(`
CREATE TABLE items (n BIGINT NOT NULL);
CREATE TABLE idempotency_keys (
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);
`)}}

// repos are a service's repositories over one querier; q is kept so the
// tests can tell the pool from a transaction.
type repos struct {
	q    database.Querier
	keys idempotency.Keys
}

func (r repos) add(ctx context.Context, n int) error {
	_, err := r.q.Exec(ctx, `INSERT INTO items (n) VALUES ($1)`, n)
	return err
}

func (r repos) count(ctx context.Context) (int, error) {
	var n int
	err := r.q.QueryRow(ctx, `SELECT COUNT(*) FROM items`).Scan(&n)
	return n, err
}

func open(q database.Querier) repos { return repos{q: q, keys: idempotency.SQL{Q: q}} }

func TestTx(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "uow", schema)
		ctx := context.Background()
		commits := 0
		u := uow.New(db, open, nil)
		u.AfterCommit = func() { commits++ }

		require.NoError(t, u.Tx(ctx, func(r repos) error {
			_, pool := r.q.(*database.DB)
			require.False(t, pool, "a transaction, not the pool")
			if err := r.add(ctx, 1); err != nil {
				return err
			}
			return r.add(ctx, 2)
		}))
		n, err := u.Read().count(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n, "committed")
		require.Equal(t, 1, commits)

		boom := errors.New("boom")
		err = u.Tx(ctx, func(r repos) error {
			if err := r.add(ctx, 3); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		n, err = u.Read().count(ctx)
		require.NoError(t, err)
		require.Equal(t, 2, n, "rolled back")
		require.Equal(t, 1, commits, "no hook after a rollback")
	})
}

func TestRead(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "uow", schema)
		u := uow.New(db, open, nil)
		r := u.Read()
		pool, ok := r.q.(*database.DB)
		require.True(t, ok)
		require.Same(t, db, pool, "repositories over the pool")
		require.NoError(t, r.add(context.Background(), 1), "outside any transaction")
		n, err := u.Read().count(context.Background())
		require.NoError(t, err)
		require.Equal(t, 1, n)
	})
}

func TestNow(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("CEST", 2*60*60)
	u := uow.New[repos](nil, open, clock.NewFake(time.Date(2026, 5, 1, 14, 0, 0, 123456789, paris)))
	got := u.Now()
	require.Equal(t, time.Date(2026, 5, 1, 12, 0, 0, 123456000, time.UTC), got, "UTC, to the microsecond")
	require.Equal(t, time.UTC, got.Location())

	wall := uow.New[repos](nil, open, nil)
	before := time.Now().Add(-time.Second)
	now := wall.Now()
	require.True(t, now.After(before), "the wall clock by default")
	require.Zero(t, now.Nanosecond()%1000)
	require.Zero(t, uow.Unit[repos]{}.Now().Nanosecond()%1000, "a zero unit reads the wall clock too")
}

func TestRunner(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "uow", schema)
		ctx := context.Background()
		fc := clock.NewFake(time.Date(2026, 5, 1, 12, 0, 0, 999, time.UTC))
		commits := 0
		u := uow.New(db, open, fc)
		u.AfterCommit = func() { commits++ }
		run := u.Runner(func(r repos) idempotency.Keys { return r.keys })

		req := &idempotency.Request{Scope: "add:ada", Key: "k", Hash: "h"}
		for range 2 {
			var out struct{ N int }
			require.NoError(t, run.Do(ctx, req, &out, nil, func(r repos) error {
				out.N = 7
				return r.add(ctx, 7)
			}))
			require.Equal(t, 7, out.N)
		}
		n, err := u.Read().count(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, n, "the retry replayed the stored answer")
		require.Equal(t, 2, commits, "the runner commits through the unit")

		rec, err := u.Read().keys.Lookup(ctx, "add:ada", "k")
		require.NoError(t, err)
		require.Equal(t, u.Now(), rec.CreatedAt, "stamped with the unit's time")
	})
}

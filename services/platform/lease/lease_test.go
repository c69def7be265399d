package lease_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/lease"
)

var migrations = fstest.MapFS{
	"common/0001_leases.sql": {Data: []byte(`CREATE TABLE leases (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at BIGINT NOT NULL);`)},
}

// expire makes the lease name expire an hour ago by the database's clock,
// as if an hour had passed without a renewal: the tests move the row, not
// a clock, since the database's clock decides.
func expire(t *testing.T, db *database.DB, name string) {
	t.Helper()
	n, err := db.Exec(context.Background(), `UPDATE leases SET expires_at = expires_at - 3600000000 WHERE name = $1`, name)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

// remaining reads how long the lease has left by the database's clock.
func remaining(t *testing.T, db *database.DB, name string) time.Duration {
	t.Helper()
	var us int64
	require.NoError(t, db.QueryRow(context.Background(),
		`SELECT expires_at - `+lease.DBNow(db.Engine())+` FROM leases WHERE name = $1`, name).Scan(&us))
	return time.Duration(us) * time.Microsecond
}

// expiresAt reads the lease's expiry as stored.
func expiresAt(t *testing.T, db *database.DB, name string) time.Time {
	t.Helper()
	var us int64
	require.NoError(t, db.QueryRow(context.Background(), `SELECT expires_at FROM leases WHERE name = $1`, name).Scan(&us))
	return database.Time(us)
}

func TestLeaseTakeRenewExpireRelease(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "lease", migrations)
		ctx := context.Background()
		ttl := 30 * time.Second

		ok, err := lease.Take(ctx, db, "monitor", "a", ttl)
		require.NoError(t, err)
		require.True(t, ok, "a free lease is taken")
		ok, err = lease.Take(ctx, db, "monitor", "b", ttl)
		require.NoError(t, err)
		require.False(t, ok, "a held lease is not")
		first := expiresAt(t, db, "monitor")
		ok, err = lease.Take(ctx, db, "monitor", "a", ttl)
		require.NoError(t, err)
		require.True(t, ok, "the holder renews")
		require.False(t, expiresAt(t, db, "monitor").Before(first), "a renewal never shortens the lease")
		h, err := lease.Current(ctx, db, "monitor")
		require.NoError(t, err)
		require.Equal(t, "a", h)

		expire(t, db, "monitor")
		h, err = lease.Current(ctx, db, "monitor")
		require.NoError(t, err)
		require.Empty(t, h, "an expired lease has no holder")
		ok, err = lease.Take(ctx, db, "monitor", "b", ttl)
		require.NoError(t, err)
		require.True(t, ok, "an expired lease goes to the next caller")
		h, err = lease.Current(ctx, db, "monitor")
		require.NoError(t, err)
		require.Equal(t, "b", h)

		require.NoError(t, lease.Release(ctx, db, "monitor", "a"), "releasing a lease one does not hold is a no-op")
		h, err = lease.Current(ctx, db, "monitor")
		require.NoError(t, err)
		require.Equal(t, "b", h)
		require.NoError(t, lease.Release(ctx, db, "monitor", "b"))
		h, err = lease.Current(ctx, db, "monitor")
		require.NoError(t, err)
		require.Empty(t, h)
	})
}

// TestLeaseExpiresByTheDatabaseClock: the expiry written is the database's
// now plus the TTL, and a short lease runs out by the database's clock
// alone.
func TestLeaseExpiresByTheDatabaseClock(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "lease", migrations)
		ctx := context.Background()

		ok, err := lease.Take(ctx, db, "loop", "a", time.Minute)
		require.NoError(t, err)
		require.True(t, ok)
		left := remaining(t, db, "loop")
		require.LessOrEqual(t, left, time.Minute)
		require.Greater(t, left, time.Minute-5*time.Second, "a minute from the database's now")

		ok, err = lease.Take(ctx, db, "short", "a", time.Millisecond)
		require.NoError(t, err)
		require.True(t, ok)
		require.Eventually(t, func() bool {
			ok, err := lease.Take(ctx, db, "short", "b", time.Minute)
			require.NoError(t, err)
			return ok
		}, 5*time.Second, time.Millisecond, "a 1 ms lease expires")
		h, err := lease.Current(ctx, db, "short")
		require.NoError(t, err)
		require.Equal(t, "b", h)
	})
}

// TestLeaseExpiryIsTheDatabases: a lease's expiry is the database's clock
// plus the TTL, and who holds it is read against the same clock, so
// replicas whose clocks are minutes apart still see one holder: no
// replica's clock is asked at all (Take and Current take no time).
func TestLeaseExpiryIsTheDatabases(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "lease", migrations)
		ctx := context.Background()
		ttl := 30 * time.Second
		ok, err := lease.Take(ctx, db, "l", "first", ttl)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = lease.Take(ctx, db, "l", "second", ttl)
		require.NoError(t, err)
		require.False(t, ok, "a held lease is not taken")
		h, err := lease.Current(ctx, db, "l")
		require.NoError(t, err)
		require.Equal(t, "first", h)
		left := remaining(t, db, "l")
		require.Greater(t, left, ttl-5*time.Second, "the expiry is the database's now plus the TTL")
		require.LessOrEqual(t, left, ttl)
	})
}

func TestLeaseOneWinnerUnderContention(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "lease", migrations)
		ctx := context.Background()
		for round := range 5 {
			if round > 0 {
				expire(t, db, "loop") // the last round's lease has run out
			}
			var (
				wg      sync.WaitGroup
				winners atomic.Int32
			)
			for i := range 16 {
				wg.Go(func() {
					ok, err := lease.Take(ctx, db, "loop", fmt.Sprintf("r%d-%d", round, i), time.Minute)
					if err != nil {
						t.Errorf("take: %v", err)
						return
					}
					if ok {
						winners.Add(1)
					}
				})
			}
			wg.Wait()
			require.Equal(t, int32(1), winners.Load(), "round %d", round)
		}
	})
}

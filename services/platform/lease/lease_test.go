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

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func TestLeaseTakeRenewExpireRelease(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "lease", migrations)
		ctx := context.Background()
		ttl := 30 * time.Second

		ok, err := lease.Acquire(ctx, db, "monitor", "a", ttl, t0)
		require.NoError(t, err)
		require.True(t, ok, "a free lease is taken")
		ok, err = lease.Acquire(ctx, db, "monitor", "b", ttl, t0.Add(10*time.Second))
		require.NoError(t, err)
		require.False(t, ok, "a held lease is not")
		ok, err = lease.Acquire(ctx, db, "monitor", "a", ttl, t0.Add(20*time.Second))
		require.NoError(t, err)
		require.True(t, ok, "the holder renews")
		h, err := lease.Holder(ctx, db, "monitor", t0.Add(49*time.Second))
		require.NoError(t, err)
		require.Equal(t, "a", h, "renewed until 50 s")

		ok, err = lease.Acquire(ctx, db, "monitor", "b", ttl, t0.Add(51*time.Second))
		require.NoError(t, err)
		require.True(t, ok, "an expired lease goes to the next caller")
		h, err = lease.Holder(ctx, db, "monitor", t0.Add(52*time.Second))
		require.NoError(t, err)
		require.Equal(t, "b", h)

		require.NoError(t, lease.Release(ctx, db, "monitor", "a"), "releasing a lease one does not hold is a no-op")
		h, err = lease.Holder(ctx, db, "monitor", t0.Add(52*time.Second))
		require.NoError(t, err)
		require.Equal(t, "b", h)
		require.NoError(t, lease.Release(ctx, db, "monitor", "b"))
		h, err = lease.Holder(ctx, db, "monitor", t0.Add(52*time.Second))
		require.NoError(t, err)
		require.Empty(t, h)
	})
}

func TestLeaseOneWinnerUnderContention(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "lease", migrations)
		ctx := context.Background()
		for round := range 5 {
			now := t0.Add(time.Duration(round) * time.Hour) // every earlier lease has expired
			var (
				wg      sync.WaitGroup
				winners atomic.Int32
			)
			for i := range 16 {
				wg.Go(func() {
					ok, err := lease.Acquire(ctx, db, "loop", fmt.Sprintf("r%d-%d", round, i), time.Minute, now)
					if err != nil {
						t.Errorf("acquire: %v", err)
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

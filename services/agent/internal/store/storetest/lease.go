package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/lease"
)

// loopLease is the pipeline loop's lease (usecase.LoopLease), which the
// platform lease package keeps in the agent schema's leases table.
const loopLease = "pipeline-loop"

// dbNow is the database's now in Unix microseconds, as SQL: the platform
// lease package's clock (lease.dbNow), so the cases can move a lease's
// expiry relative to the clock that judges it.
func dbNow(e database.Engine) string {
	if e == database.Postgres {
		return `CAST(EXTRACT(EPOCH FROM statement_timestamp()) * 1000000 AS BIGINT)`
	}
	return `(CAST(ROUND(unixepoch('subsec') * 1000) AS INTEGER) * 1000)`
}

// expireIn sets the lease's expiry to the database's now plus d (d < 0:
// expired that long ago by the database's clock).
func expireIn(t *testing.T, h Harness, name string, d time.Duration) {
	t.Helper()
	n, err := h.DB.Exec(context.Background(), `UPDATE leases SET expires_at = `+dbNow(h.DB.Engine())+` + $2 WHERE name = $1`,
		name, d.Microseconds())
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
}

// leaseLeft is how long the lease has left by the database's clock.
func leaseLeft(t *testing.T, h Harness, name string) time.Duration {
	t.Helper()
	var us int64
	require.NoError(t, h.DB.QueryRow(context.Background(),
		`SELECT expires_at - `+dbNow(h.DB.Engine())+` FROM leases WHERE name = $1`, name).Scan(&us))
	return time.Duration(us) * time.Microsecond
}

// runLease checks the pipeline loop's lease over the agent's schema: one
// holder at a time, renewed by its holder, taken over only once it expired
// by the database's clock.
func runLease(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("the lease is taken, renewed by its holder and refused to another while it holds", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		const ttl = time.Minute
		take := func(holder string) bool {
			t.Helper()
			ok, err := lease.Take(ctx, h.DB, loopLease, holder, ttl)
			require.NoError(t, err)
			return ok
		}
		current := func() string {
			t.Helper()
			holder, err := lease.Current(ctx, h.DB, loopLease)
			require.NoError(t, err)
			return holder
		}
		require.Empty(t, current(), "nobody holds a lease never taken")
		require.True(t, take("replica-a"), "a free lease is taken")
		left := leaseLeft(t, h, loopLease)
		require.LessOrEqual(t, left, ttl)
		require.Greater(t, left, ttl-5*time.Second, "the database's now plus the TTL")
		require.False(t, take("replica-b"), "a held lease is refused")
		require.Equal(t, "replica-a", current())

		expireIn(t, h, loopLease, 2*time.Second) // nearly run out
		require.False(t, take("replica-b"), "held until it expires by the database's clock")
		require.True(t, take("replica-a"), "the holder renews")
		require.Greater(t, leaseLeft(t, h, loopLease), ttl-5*time.Second, "renewed for a whole TTL")
		require.Equal(t, "replica-a", current())

		ok, err := lease.Take(ctx, h.DB, "another-loop", "replica-b", ttl)
		require.NoError(t, err)
		require.True(t, ok, "leases of other names are their own")
		require.Equal(t, "replica-a", current())
	})

	t.Run("an expired lease is taken over; the former holder's renewal then fails", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		take := func(holder string) bool {
			t.Helper()
			ok, err := lease.Take(ctx, h.DB, loopLease, holder, time.Minute)
			require.NoError(t, err)
			return ok
		}
		current := func() string {
			t.Helper()
			holder, err := lease.Current(ctx, h.DB, loopLease)
			require.NoError(t, err)
			return holder
		}
		require.True(t, take("replica-a"))
		expireIn(t, h, loopLease, -time.Millisecond) // the holder stopped renewing
		require.Empty(t, current(), "an expired lease has no holder")
		require.True(t, take("replica-b"), "taken over")
		require.Equal(t, "replica-b", current())
		require.False(t, take("replica-a"), "the former holder cannot renew a lease it lost")

		require.NoError(t, lease.Release(ctx, h.DB, loopLease, "replica-a"), "releasing a lease one lost is a no-op")
		require.Equal(t, "replica-b", current())
		require.NoError(t, lease.Release(ctx, h.DB, loopLease, "replica-b"))
		require.Empty(t, current(), "released: free at once")
		require.True(t, take("replica-a"), "without waiting for the expiry")
	})

	t.Run("replicas racing for the lease: one wins each round", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		for round := range 3 {
			if round > 0 {
				expireIn(t, h, loopLease, -time.Second)
			}
			var (
				wg      sync.WaitGroup
				winners atomic.Int32
				mu      sync.Mutex
				errs    []error
			)
			for i := range 8 {
				wg.Go(func() {
					ok, err := lease.Take(ctx, h.DB, loopLease, fmt.Sprintf("replica-%d-%d", round, i), time.Minute)
					if ok {
						winners.Add(1)
					}
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			require.Empty(t, errs)
			require.Equal(t, int32(1), winners.Load(), "round %d", round)
		}
	})
}

// Package storetest is the ledger store conformance suite: every engine's
// implementation must pass it.
package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Run runs the suite; newStore returns an empty store for one subtest.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	t.Run("register then find the session", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
		c := contributor("alice", now)
		hash := identity.HashToken("token-a")
		require.NoError(t, s.Register(ctx, c, store.Session{TokenHash: hash, CreatedAt: now}))

		got, err := s.SessionByTokenHash(ctx, hash)
		require.NoError(t, err)
		require.Equal(t, c, got.Contributor)
		require.Equal(t, now, got.CreatedAt, "microsecond timestamps round-trip")
		require.True(t, got.ExpiresAt.IsZero())

		_, err = s.SessionByTokenHash(ctx, identity.HashToken("other"))
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("session expiry round-trips", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		hash := identity.HashToken("t")
		require.NoError(t, s.Register(ctx, contributor("bob", now), store.Session{TokenHash: hash, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
		got, err := s.SessionByTokenHash(ctx, hash)
		require.NoError(t, err)
		require.Equal(t, now.Add(time.Hour), got.ExpiresAt)
	})

	t.Run("a taken handle is rejected and nothing is written", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		now := time.Now().UTC()
		require.NoError(t, s.Register(ctx, contributor("carol", now), store.Session{TokenHash: identity.HashToken("1"), CreatedAt: now}))
		err := s.Register(ctx, contributor("carol", now), store.Session{TokenHash: identity.HashToken("2"), CreatedAt: now})
		require.ErrorIs(t, err, store.ErrAlreadyExists)
		_, err = s.SessionByTokenHash(ctx, identity.HashToken("2"))
		require.ErrorIs(t, err, store.ErrNotFound, "the loser's session was rolled back")
		counts, err := s.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts["contributors"])
		require.Equal(t, 1, counts["sessions"])
	})

	t.Run("concurrent claims of one handle: exactly one wins", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ctx := context.Background()
		const racers = 10
		var wg sync.WaitGroup
		errs := make([]error, racers)
		for i := range racers {
			wg.Go(func() {
				now := time.Now().UTC()
				errs[i] = s.Register(ctx, contributor("dave", now), store.Session{TokenHash: identity.HashToken(fmt.Sprint(i)), CreatedAt: now})
			})
		}
		wg.Wait()
		wins := 0
		for _, err := range errs {
			if err == nil {
				wins++
				continue
			}
			require.ErrorIs(t, err, store.ErrAlreadyExists)
		}
		require.Equal(t, 1, wins)
	})

	runAttribution(t, newStore)
}

func contributor(handle string, now time.Time) store.Contributor {
	return store.Contributor{ID: uuid.NewString(), Handle: handle, TrustLevel: identity.TrustTOFU, CreatedAt: now.Truncate(time.Microsecond)}
}

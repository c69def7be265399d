package usecase_test

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
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

func handleOwner(handle string, now time.Time) store.Contributor {
	return store.Contributor{ID: uuid.NewString(), Handle: handle, TrustLevel: identity.TrustTOFU, CreatedAt: now.Truncate(time.Microsecond)}
}

func TestRegisterAndSessions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		now := e.clock.Now()
		c := handleOwner("alice", now)
		hash := identity.HashToken("token-a")
		require.NoError(t, e.app.Register(ctx, c, store.Session{TokenHash: hash, CreatedAt: now}))
		got, err := e.app.Authenticate(ctx, hash)
		require.NoError(t, err)
		require.Equal(t, authz.Principal{Kind: authz.Session, Role: authz.Contributor, ID: hash, ContributorID: c.ID, Name: "alice"}, got)
		contributor, err := e.app.Contributor(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, contributor, "microsecond timestamps round-trip")
		got, err = e.app.Authenticate(ctx, identity.HashToken("other"))
		require.NoError(t, err)
		require.Equal(t, authz.Principal{Kind: authz.Invalid, Problem: "invalid token"}, got)

		expiring := identity.HashToken("t")
		require.NoError(t, e.app.Register(ctx, handleOwner("bob", now), store.Session{TokenHash: expiring, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
		got, err = e.app.Authenticate(ctx, expiring)
		require.NoError(t, err)
		require.Equal(t, now.Add(time.Hour), got.ExpiresAt, "no session lifetime configured: the expiry stays")
		e.clock.Advance(time.Hour)
		got, err = e.app.Authenticate(ctx, expiring)
		require.NoError(t, err)
		require.Equal(t, authz.Principal{Kind: authz.Invalid, Problem: "session expired"}, got)
	})
}

func TestRegisterTakenHandleWritesNothing(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		now := time.Now().UTC()
		require.NoError(t, e.app.Register(ctx, handleOwner("carol", now), store.Session{TokenHash: identity.HashToken("1"), CreatedAt: now}))
		err := e.app.Register(ctx, handleOwner("carol", now), store.Session{TokenHash: identity.HashToken("2"), CreatedAt: now})
		require.ErrorIs(t, err, store.ErrAlreadyExists)
		p, err := e.app.Authenticate(ctx, identity.HashToken("2"))
		require.NoError(t, err)
		require.Equal(t, authz.Invalid, p.Kind, "the loser's session was rolled back")
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts["contributors"])
		require.Equal(t, 1, counts["sessions"])
	})
}

func TestConcurrentClaimsOfOneHandle(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		const racers = 10
		var wg sync.WaitGroup
		errs := make([]error, racers)
		for i := range racers {
			wg.Go(func() {
				now := time.Now().UTC()
				errs[i] = e.app.Register(ctx, handleOwner("dave", now), store.Session{TokenHash: identity.HashToken(fmt.Sprint(i)), CreatedAt: now})
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
		require.Equal(t, 1, wins, "exactly one claim wins")
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, counts["contributors"])
		require.Equal(t, 1, counts["sessions"])
	})
}

func TestCountsCoverTheWholeSchema(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "wire-1", Actor: "admin"}, nil)
		require.NoError(t, err)
		counts, err := e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{
			"contributors": 1, "sessions": 1, "api_tokens": 0,
			"assets": 0, "contributions": 0, "github_deliveries": 0, "github_commits": 0, "distributions": 0, "payouts": 0,
			"cc_entries": 1, "audit_entries": 0, "audit_queue": 2, "audit_tree": 0, "incidents": 0,
		}, counts, "the deposit's entry, and its audit entry and fee's, queued")

		sequence(t, e.app)
		counts, err = e.app.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{
			"contributors": 1, "sessions": 1, "api_tokens": 0,
			"assets": 0, "contributions": 0, "github_deliveries": 0, "github_commits": 0, "distributions": 0, "payouts": 0,
			"cc_entries": 1, "audit_entries": 2, "audit_queue": 0, "incidents": 0,
			"audit_tree": 4, // the genesis record and the two entries: three leaves and one node
		}, counts, "sequenced")
	})
}

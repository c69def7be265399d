package usecase_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// TestAuthenticateMany: each token is answered as Authenticate answers it,
// in order, from one read of the sessions and tokens (sessions, API
// tokens, revoked, expired and unknown ones alike); a session's expiry
// slides only when its token was used; and a bad request names each bad
// token.
func TestAuthenticateMany(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		fc := clock.NewFake(t0)
		const ttl = 24 * time.Hour
		app := usecase.New(dbtest.Open(t, engine, "ledger", store.Migrations()), repos, usecase.Config{Clock: fc, SessionTTL: ttl})
		now := fc.Now()
		ada, bob := handleOwner("ada", now), handleOwner("bob", now)
		adaHash, bobHash := identity.HashToken("ada-session"), identity.HashToken("bob-session")
		require.NoError(t, app.Register(ctx, ada, store.Session{TokenHash: adaHash, CreatedAt: now, ExpiresAt: now.Add(ttl)}))
		require.NoError(t, app.Register(ctx, bob, store.Session{TokenHash: bobHash, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}))
		worker, workerSecret, err := app.CreateToken(ctx, usecase.CreateTokenCmd{Name: "bot", Role: "worker"}, nil)
		require.NoError(t, err)
		revoked, revokedSecret, err := app.CreateToken(ctx, usecase.CreateTokenCmd{Name: "old", Role: "viewer"}, nil)
		require.NoError(t, err)
		_, err = app.RevokeToken(ctx, identity.Granter{}, revoked.ID)
		require.NoError(t, err)

		// Three hours on: ada's session is due a renewal (its expiry
		// would move by more than a tenth of its lifetime), bob's expired.
		fc.Advance(3 * time.Hour)
		checks := []usecase.TokenCheck{
			{Hash: adaHash, Used: false}, {Hash: identity.HashToken(workerSecret), Used: true},
			{Hash: identity.HashToken(revokedSecret)}, {Hash: bobHash, Used: true}, {Hash: identity.HashToken("nobody")},
		}
		got, err := app.AuthenticateMany(ctx, checks)
		require.NoError(t, err)
		require.Len(t, got, len(checks))
		for k, c := range checks {
			one, err := app.Authenticate(ctx, c.Hash)
			require.NoError(t, err)
			if k == 0 {
				// Authenticate is a use: it renewed ada's session, which
				// the refresh of an unused token did not.
				require.Equal(t, now.Add(ttl), got[k].ExpiresAt, "not used: its expiry as stored")
				require.Equal(t, fc.Now().Add(ttl), one.ExpiresAt)
				got[k].ExpiresAt = one.ExpiresAt
			}
			require.Equal(t, one, got[k], "token %d answered as Authenticate answers it", k)
		}
		require.Equal(t, authz.Principal{Kind: authz.Token, Role: authz.Worker, ID: worker.ID, Name: "bot"}, got[1])
		require.Equal(t, "token revoked", got[2].Problem)
		require.Equal(t, "session expired", got[3].Problem)
		require.Equal(t, "invalid token", got[4].Problem)

		// Used: the expiry slides, and the answer says so.
		fc.Advance(3 * time.Hour)
		got, err = app.AuthenticateMany(ctx, []usecase.TokenCheck{{Hash: adaHash, Used: true}})
		require.NoError(t, err)
		require.Equal(t, fc.Now().Add(ttl), got[0].ExpiresAt)
		again, err := app.AuthenticateMany(ctx, []usecase.TokenCheck{{Hash: adaHash}})
		require.NoError(t, err)
		require.Equal(t, fc.Now().Add(ttl), again[0].ExpiresAt, "stored")

		// Nothing to resolve; a hash missing; too many.
		got, err = app.AuthenticateMany(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, got)
		_, err = app.AuthenticateMany(ctx, []usecase.TokenCheck{{Hash: adaHash}, {Hash: ""}})
		fe, ok := fault.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, fault.Invalid, fe.Kind)
		require.Equal(t, "tokens[1].token_hash", fe.Fields[0].Field)
		many := make([]usecase.TokenCheck, usecase.MaxAuthenticateMany+1)
		for k := range many {
			many[k] = usecase.TokenCheck{Hash: strings.Repeat("a", 64)}
		}
		_, err = app.AuthenticateMany(ctx, many)
		fe, ok = fault.As(err)
		require.True(t, ok, "%v", err)
		require.Equal(t, "tokens", fe.Fields[0].Field)
	})
}

package usecase_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// TestATokenStaysWithinItsGrant: the reproduction. A 2-minute
// admin token minted a never-expiring admin token and revoked another
// administrator's token. Now what it mints expires with it (or sooner),
// a longer lifetime is refused, it revokes only itself and what it
// created, and the list shows each token's creator and the creator's
// revocation.
func TestATokenStaysWithinItsGrant(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		fc := clock.NewFake(t0)
		app := usecase.New(dbtest.Open(t, engine, "ledger", store.Migrations()), repos, usecase.Config{Clock: fc})
		key := identity.Granter{}
		short, _, err := app.CreateToken(ctx, usecase.CreateTokenCmd{Name: "short", Role: "admin", TTL: "2m", By: key}, nil)
		require.NoError(t, err)
		other, _, err := app.CreateToken(ctx, usecase.CreateTokenCmd{Name: "other admin", Role: "admin", By: key}, nil)
		require.NoError(t, err)
		asShort := identity.Granter{TokenID: short.ID, Role: short.Role, ExpiresAt: short.ExpiresAt}

		minted, _, err := app.CreateToken(ctx, usecase.CreateTokenCmd{Name: "forever?", Role: "admin", By: asShort}, nil)
		require.NoError(t, err)
		require.Equal(t, short.ExpiresAt, minted.ExpiresAt, "no ttl: its creator's expiry, not never")
		require.Equal(t, short.ID, minted.CreatedBy)
		_, _, err = app.CreateToken(ctx, usecase.CreateTokenCmd{Name: "longer", Role: "viewer", TTL: "1h", By: asShort}, nil)
		require.Equal(t, fault.Forbidden, fault.KindOf(err), "%v", err)

		_, err = app.RevokeToken(ctx, asShort, other.ID)
		require.Equal(t, fault.Forbidden, fault.KindOf(err), "another administrator's token")
		list, err := app.ListTokens(ctx)
		require.NoError(t, err)
		for _, tk := range list {
			if tk.ID == other.ID {
				require.True(t, tk.RevokedAt.IsZero(), "the refused revocation changed nothing")
			}
		}

		_, err = app.RevokeToken(ctx, key, short.ID)
		require.NoError(t, err)
		list, err = app.ListTokens(ctx)
		require.NoError(t, err)
		byID := map[string]store.APIToken{}
		for _, tk := range list {
			byID[tk.ID] = tk
		}
		require.Equal(t, short.ID, byID[minted.ID].CreatedBy)
		require.Equal(t, fc.Now(), byID[minted.ID].CreatorRevokedAt, "its creator's revocation shows on what it created")
		require.Empty(t, byID[other.ID].CreatedBy, "the administrator key's")
		require.True(t, byID[other.ID].CreatorRevokedAt.IsZero())
	})
}

// Package storetest is the ledger repositories' conformance suite: every
// engine's implementation must pass it. The repositories open no
// transactions, so the suite writes inside db.Tx as the use cases do; the
// use cases' own composite and concurrent behaviour is tested in the
// usecase package, on every engine too.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Harness is what the suite runs against: an empty, migrated database and
// the constructors of the repositories over a querier.
type Harness struct {
	DB          *database.DB
	Identity    func(q database.Querier) store.Identity
	Attribution func(q database.Querier) store.Attribution
	Credit      func(q database.Querier) store.Credit
	Audit       func(q database.Querier) store.Audit
}

// repos are the repositories over one querier.
type repos struct {
	identity    store.Identity
	attribution store.Attribution
	credit      store.Credit
	audit       store.Audit
}

func (h Harness) over(q database.Querier) repos {
	return repos{identity: h.Identity(q), attribution: h.Attribution(q), credit: h.Credit(q), audit: h.Audit(q)}
}

// read returns the repositories over the pool.
func (h Harness) read() repos { return h.over(h.DB) }

// write runs fn in one transaction, as a use case does.
func (h Harness) write(fn func(r repos) error) error {
	return h.DB.Tx(context.Background(), func(q database.Querier) error { return fn(h.over(q)) })
}

// Run runs the suite; newHarness returns a harness over an empty database
// for one subtest.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("register then find the session", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 123456000, time.UTC)
		c := contributor("alice", now)
		hash := identity.HashToken("token-a")
		require.NoError(t, h.write(func(r repos) error {
			return r.identity.Register(ctx, c, store.Session{TokenHash: hash, CreatedAt: now})
		}))

		got, err := h.read().identity.SessionByTokenHash(ctx, hash)
		require.NoError(t, err)
		require.Equal(t, c, got.Contributor)
		require.Equal(t, now, got.CreatedAt, "microsecond timestamps round-trip")
		require.True(t, got.ExpiresAt.IsZero())

		_, err = h.read().identity.SessionByTokenHash(ctx, identity.HashToken("other"))
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("session expiry round-trips", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		hash := identity.HashToken("t")
		require.NoError(t, h.write(func(r repos) error {
			return r.identity.Register(ctx, contributor("bob", now), store.Session{TokenHash: hash, CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
		}))
		got, err := h.read().identity.SessionByTokenHash(ctx, hash)
		require.NoError(t, err)
		require.Equal(t, now.Add(time.Hour), got.ExpiresAt)
	})

	t.Run("a taken handle is rejected and the transaction writes nothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := time.Now().UTC()
		register := func(handle, token string) error {
			return h.write(func(r repos) error {
				return r.identity.Register(ctx, contributor(handle, now), store.Session{TokenHash: identity.HashToken(token), CreatedAt: now})
			})
		}
		require.NoError(t, register("carol", "1"))
		require.ErrorIs(t, register("carol", "2"), store.ErrAlreadyExists)
		_, err := h.read().identity.SessionByTokenHash(ctx, identity.HashToken("2"))
		require.ErrorIs(t, err, store.ErrNotFound, "the loser's session was rolled back")
		counts, err := h.read().identity.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"contributors": 1, "sessions": 1, "api_tokens": 0}, counts)
	})

	t.Run("ensuring a contributor inserts it once and leaves an existing one as it is", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := base.Truncate(time.Microsecond)
		require.NoError(t, h.write(func(r repos) error { return r.identity.EnsureContributor(ctx, Implicit("someone", now)) }))
		got, err := h.read().identity.GetContributor(ctx, "someone")
		require.NoError(t, err)
		require.Equal(t, Implicit("someone", now), got)

		again := store.Contributor{ID: "someone", TrustLevel: attribution.TrustGitHub, CreatedAt: now.Add(time.Hour)}
		require.NoError(t, h.write(func(r repos) error { return r.identity.EnsureContributor(ctx, again) }))
		got, err = h.read().identity.GetContributor(ctx, "someone")
		require.NoError(t, err)
		require.Equal(t, Implicit("someone", now), got, "the first insert stays")

		registered := contributor("erin", now)
		require.NoError(t, h.write(func(r repos) error {
			if err := r.identity.Register(ctx, registered, store.Session{TokenHash: "h", CreatedAt: now}); err != nil {
				return err
			}
			return r.identity.EnsureContributor(ctx, Implicit(registered.ID, now.Add(time.Hour)))
		}))
		got, err = h.read().identity.GetContributor(ctx, registered.ID)
		require.NoError(t, err)
		require.Equal(t, registered, got, "handle and trust level untouched")

		_, err = h.read().identity.GetContributor(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		counts, err := h.read().identity.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"contributors": 2, "sessions": 1, "api_tokens": 0}, counts)
	})

	runAttribution(t, newHarness)
	runCredit(t, newHarness)
	runCreditRules(t, newHarness)
	runAudit(t, newHarness)
	runReconcile(t, newHarness)
	runQueue(t, newHarness)
}

func contributor(handle string, now time.Time) store.Contributor {
	return store.Contributor{ID: uuid.NewString(), Handle: handle, TrustLevel: identity.TrustTOFU, CreatedAt: now.Truncate(time.Microsecond)}
}

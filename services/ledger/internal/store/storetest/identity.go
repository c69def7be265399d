package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// runIdentity checks contributors and their sessions: registration, the
// handle's uniqueness, and the contributors a contribution creates.
func runIdentity(t *testing.T, newHarness func(t *testing.T) Harness) {
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

		got, found := sessionOf(t, h, hash)
		require.True(t, found)
		require.Equal(t, c, got.Contributor)
		require.Equal(t, now, got.CreatedAt, "microsecond timestamps round-trip")
		require.True(t, got.ExpiresAt.IsZero())

		_, found = sessionOf(t, h, identity.HashToken("other"))
		require.False(t, found)
	})

	t.Run("the credentials of many token hashes are read in one batch", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		ada, bob := contributor("ada", now), contributor("bob", now)
		adaHash, bobHash := identity.HashToken("ada"), identity.HashToken("bob")
		tok := store.APIToken{ID: "tok-1", Name: "bot", Role: "worker", TokenHash: identity.HashToken("secret"), CreatedAt: now,
			ExpiresAt: now.Add(time.Hour)}
		require.NoError(t, h.write(func(r repos) error {
			if err := r.identity.Register(ctx, ada, store.Session{TokenHash: adaHash, CreatedAt: now}); err != nil {
				return err
			}
			if err := r.identity.Register(ctx, bob, store.Session{TokenHash: bobHash, CreatedAt: now, ExpiresAt: now.Add(time.Hour)}); err != nil {
				return err
			}
			return r.identity.CreateToken(ctx, tok)
		}))
		sessions, tokens := map[string]store.Session{}, map[string]store.APIToken{}
		b := &database.Batch{}
		h.read().identity.QueueCredentials(b, []string{adaHash, tok.TokenHash, identity.HashToken("nobody"), bobHash}, sessions, tokens)
		require.NoError(t, h.DB.SendBatch(ctx, b))
		require.Len(t, sessions, 2)
		require.Equal(t, ada, sessions[adaHash].Contributor)
		require.Equal(t, now.Add(time.Hour), sessions[bobHash].ExpiresAt)
		require.Equal(t, map[string]store.APIToken{tok.TokenHash: tok}, tokens)

		b = &database.Batch{}
		h.read().identity.QueueCredentials(b, nil, sessions, tokens)
		require.Zero(t, b.Len(), "no hash, no statement")
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
		got, found := sessionOf(t, h, hash)
		require.True(t, found)
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
		_, found := sessionOf(t, h, identity.HashToken("2"))
		require.False(t, found, "the loser's session was rolled back")
		counts, err := h.read().identity.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"contributors": 1, "sessions": 1, "api_tokens": 0}, counts)
	})

	t.Run("Registered names the ids of registered contributors, never an implicit one", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := base.Truncate(time.Microsecond)
		ada := contributor("ada", now)
		require.NoError(t, h.write(func(r repos) error {
			return r.identity.Register(ctx, ada, store.Session{TokenHash: "h-ada", CreatedAt: now})
		}))
		require.NoError(t, h.write(func(r repos) error { return r.identity.EnsureContributor(ctx, Implicit("github:octo", now)) }))
		ids := []string{ada.ID, "github:octo", "email:nobody@example.com"}
		for i := range 600 { // past one statement's 500
			ids = append(ids, fmt.Sprint("ghost-", i))
		}
		got, err := h.read().identity.Registered(ctx, ids)
		require.NoError(t, err)
		require.Equal(t, map[string]bool{ada.ID: true}, got)
		got, err = h.read().identity.Registered(ctx, nil)
		require.NoError(t, err)
		require.Empty(t, got)
	})

	t.Run("contributors list oldest first, by handle when asked", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := base.Truncate(time.Microsecond)
		first, second := contributor("erin", now), contributor("finn", now.Add(time.Second))
		for i, c := range []store.Contributor{first, second} {
			require.NoError(t, h.write(func(r repos) error {
				return r.identity.Register(ctx, c, store.Session{TokenHash: fmt.Sprint("h", i), CreatedAt: now})
			}))
		}
		implicit := Implicit("github:octo", now.Add(2*time.Second))
		require.NoError(t, h.write(func(r repos) error { return r.identity.EnsureContributor(ctx, implicit) }))
		// The total is kept as rows are inserted (migration 0027): an
		// existing contributor ensured again, or a registration refused and
		// rolled back, counts nothing.
		require.NoError(t, h.write(func(r repos) error { return r.identity.EnsureContributor(ctx, implicit) }))
		require.ErrorIs(t, h.write(func(r repos) error {
			return r.identity.Register(ctx, contributor("erin", now), store.Session{TokenHash: "h-again", CreatedAt: now})
		}), store.ErrAlreadyExists)
		account := func(c store.Contributor) store.ContributorAccount { return store.ContributorAccount{Contributor: c} }
		got, total, err := h.read().identity.ListContributors(ctx, store.ContributorFilter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []store.ContributorAccount{account(first), account(second), account(implicit)}, got)
		require.Equal(t, 3, total)
		got, total, err = h.read().identity.ListContributors(ctx, store.ContributorFilter{Limit: 1, Offset: 1})
		require.NoError(t, err)
		require.Equal(t, []store.ContributorAccount{account(second)}, got)
		require.Equal(t, 3, total)
		got, total, err = h.read().identity.ListContributors(ctx, store.ContributorFilter{Handle: "finn", Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []store.ContributorAccount{account(second)}, got)
		require.Equal(t, 1, total)
		got, total, err = h.read().identity.ListContributors(ctx, store.ContributorFilter{Handle: "nobody", Limit: 10})
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Empty(t, got)
		require.Zero(t, total)
	})

	t.Run("the contributors list totals each one's balances, the cooling CC due by the filter's time apart", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		now := base.Truncate(time.Microsecond)
		ada, bob := register(t, h, "ada", now), register(t, h, "bob", now.Add(time.Second))
		mint(t, h, 1, ada.ID, 10*cc)
		apply(t, h, 2, ada.ID, "i:1", credit.Transfer(credit.KindStake, credit.Available(ada.ID), credit.Staked(ada.ID, "i:1"), 4*cc))
		apply(t, h, 3, ada.ID, "i:2", credit.Transfer(credit.KindStake, credit.Available(ada.ID), credit.Staked(ada.ID, "i:2"), 2*cc))
		unstake := apply(t, h, 4, ada.ID, "i:1", credit.Transfer(credit.KindUnstake, credit.Staked(ada.ID, "i:1"), credit.Cooling(ada.ID), 3*cc))
		for i, l := range []store.CoolingLot{
			{ID: "lot-due", ContributorID: ada.ID, IdeaID: "i:1", Amount: cc, AvailableAt: now.Add(time.Hour), EntryID: unstake.ID, CreatedAt: now},
			{ID: "lot-later", ContributorID: ada.ID, IdeaID: "i:1", Amount: 2 * cc, AvailableAt: now.Add(3 * time.Hour), EntryID: unstake.ID, CreatedAt: now},
		} {
			require.NoError(t, h.write(func(r repos) error { return r.credit.InsertCooling(ctx, l) }), "lot %d", i)
		}
		mint(t, h, 5, bob.ID, 1)

		balances := store.Balances{Available: 4 * cc, Staked: 3 * cc, Cooling: 3 * cc}
		got, total, err := h.read().identity.ListContributors(ctx, store.ContributorFilter{Limit: 10, DueBy: now})
		require.NoError(t, err)
		require.Equal(t, 2, total)
		require.Equal(t, []store.ContributorAccount{
			{Contributor: ada, Balances: balances},
			{Contributor: bob, Balances: store.Balances{Available: 1}},
		}, got, "staked over both ideas; nothing due yet")
		got, _, err = h.read().identity.ListContributors(ctx, store.ContributorFilter{Handle: "ada", Limit: 10, DueBy: now.Add(2 * time.Hour)})
		require.NoError(t, err)
		require.Equal(t, []store.ContributorAccount{{Contributor: ada, Balances: balances, DueCooling: cc}}, got, "one lot due")
		got, _, err = h.read().identity.ListContributors(ctx, store.ContributorFilter{Limit: 1, Offset: 1, DueBy: now.Add(4 * time.Hour)})
		require.NoError(t, err)
		require.Equal(t, []store.ContributorAccount{{Contributor: bob, Balances: store.Balances{Available: 1}}}, got, "a page's balances are its own")
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
}

// sessionOf reads the session of a token hash the one way the ledger
// reads credentials (QueueCredentials), and whether there is one.
func sessionOf(t *testing.T, h Harness, hash string) (store.Session, bool) {
	t.Helper()
	sessions := map[string]store.Session{}
	b := &database.Batch{}
	h.read().identity.QueueCredentials(b, []string{hash}, sessions, map[string]store.APIToken{})
	require.NoError(t, h.DB.SendBatch(context.Background(), b))
	s, ok := sessions[hash]
	return s, ok
}

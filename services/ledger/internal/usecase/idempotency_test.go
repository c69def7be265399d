package usecase_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/storetest"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

// spyCredit counts economy locks and idempotency key locks.
type spyCredit struct {
	store.Credit
	locks, keyLocks *atomic.Int32
}

func (s spyCredit) LockKey(ctx context.Context, scope, key string) error {
	s.keyLocks.Add(1)
	return s.Credit.LockKey(ctx, scope, key)
}

func (s spyCredit) LockEconomy(ctx context.Context) (store.Economy, error) {
	s.locks.Add(1)
	return s.Credit.LockEconomy(ctx)
}

// spyKeys counts the records refused on a taken key and can hide stored
// records from the next lookups, which is what a request sees when a
// concurrent one with the same key commits between its lookup and its
// insert.
type spyKeys struct {
	idempotency.Keys
	blind *atomic.Int32
	taken *atomic.Int32
}

func (s spyKeys) Save(ctx context.Context, r idempotency.Record) error {
	err := s.Keys.Save(ctx, r)
	if errors.Is(err, idempotency.ErrTaken) {
		s.taken.Add(1)
	}
	return err
}

func (s spyKeys) Lookup(ctx context.Context, scope, key string) (idempotency.Record, error) {
	if s.blind.Add(-1) >= 0 {
		return idempotency.Record{}, idempotency.ErrNotFound
	}
	return s.Keys.Lookup(ctx, scope, key)
}

type spyEnv struct {
	env
	// locks counts economy locks, taken the inserts refused on a taken key;
	// blind is how many lookups still miss.
	locks, keyLocks, blind, taken *atomic.Int32
}

func setupSpy(t *testing.T, engine database.Engine) spyEnv {
	t.Helper()
	db := dbtest.Open(t, engine, "ledger", store.Migrations())
	s := spyEnv{locks: new(atomic.Int32), keyLocks: new(atomic.Int32), blind: new(atomic.Int32), taken: new(atomic.Int32)}
	open := func(q database.Querier) usecase.Repos {
		r := repos(q)
		r.Credit = spyCredit{Credit: r.Credit, locks: s.locks, keyLocks: s.keyLocks}
		r.Keys = spyKeys{Keys: r.Keys, blind: s.blind, taken: s.taken}
		return r
	}
	fc := clock.NewFake(t0)
	s.env = env{app: usecase.New(db, open, usecase.Config{Clock: fc, Ideas: ideas{}}), db: db, clock: fc}
	return s
}

// requireOneContribution checks that the asset holds exactly want.
func requireOneContribution(t *testing.T, e env, assetID string, want store.Contribution) {
	t.Helper()
	ctx := context.Background()
	a, err := e.app.GetAsset(ctx, assetID)
	require.NoError(t, err)
	require.Equal(t, want.Cost, a.TotalCost, "the cost counted once")
	require.Equal(t, 1, a.ContributionCount)
	list, err := items(e.app.ListAssetContributions(ctx, assetID, page(10, 0)))
	require.NoError(t, err)
	require.Equal(t, []store.Contribution{want}, list)
}

func TestContributionIdempotencyKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setupSpy(t, engine)
		ctx := context.Background()
		a := createAsset(t, e.env)
		key := &idempotency.Request{Scope: "contribution:ada", Key: "k1", Hash: "h1"}

		first := storetest.NewContribution("ada", a.ID, 2_500_000, t0)
		first.Metadata = map[string]any{"has_tests": true, "nested": map[string]any{"n": 2.0}}
		got, err := e.app.AddContribution(ctx, first, storetest.Implicit("ada", t0), key)
		require.NoError(t, err)
		require.Equal(t, first, got)

		retry := storetest.NewContribution("ada", a.ID, 2_500_000, t0.Add(1))
		again, err := e.app.AddContribution(ctx, retry, storetest.Implicit("ada", t0), key)
		require.NoError(t, err)
		require.Equal(t, first, again, "a retry answers the original contribution")
		requireOneContribution(t, e.env, a.ID, first)
		_, err = e.app.GetContribution(ctx, retry.ID)
		require.ErrorIs(t, err, store.ErrNotFound, "the retry recorded nothing")

		_, err = e.app.AddContribution(ctx, storetest.NewContribution("ada", a.ID, 1, t0), storetest.Implicit("ada", t0),
			&idempotency.Request{Scope: "contribution:ada", Key: "k1", Hash: "h2"})
		fe, ok := fault.As(err)
		require.True(t, ok, "want a classified error, got %v", err)
		require.Equal(t, fault.Invalid, fe.Kind)
		require.Equal(t, []fault.FieldError{{Field: "Idempotency-Key", Message: "was used before with a different request body"}}, fe.Fields)
		requireOneContribution(t, e.env, a.ID, first)

		require.Equal(t, int32(0), e.locks.Load(), "contributions never take the economy lock")

		// Another contributor's same key is another record.
		bob := storetest.NewContribution("bob", a.ID, 1_000_000, t0)
		got, err = e.app.AddContribution(ctx, bob, storetest.Implicit("bob", t0),
			&idempotency.Request{Scope: "contribution:bob", Key: "k1", Hash: "h1"})
		require.NoError(t, err)
		require.Equal(t, bob, got)
		asset, err := e.app.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(3_500_000), asset.TotalCost)
		require.Equal(t, 2, asset.ContributionCount)
	})
}

func TestContributionWithoutKeyRecordsEachRequest(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setupSpy(t, engine)
		ctx := context.Background()
		a := createAsset(t, e.env)
		for _, key := range []*idempotency.Request{nil, {Scope: "contribution:ada", Hash: "h1"}} {
			c := storetest.NewContribution("ada", a.ID, 1_000_000, t0)
			got, err := e.app.AddContribution(ctx, c, storetest.Implicit("ada", t0), key)
			require.NoError(t, err)
			require.Equal(t, c, got)
		}
		asset, err := e.app.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(2_000_000), asset.TotalCost)
		require.Equal(t, 2, asset.ContributionCount)
	})
}

// TestIdempotencyKeyLostRace makes the race deterministic: the retry's
// lookup misses the record the first request stored, as when both looked
// before either committed, so the unique key is what refuses it.
func TestIdempotencyKeyLostRace(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setupSpy(t, engine)
		ctx := context.Background()
		a := createAsset(t, e.env)
		key := &idempotency.Request{Scope: "contribution:ada", Key: "race", Hash: "h1"}
		first := storetest.NewContribution("ada", a.ID, 7_000_000, t0)
		first.Metadata = map[string]any{"k": "v"}
		_, err := e.app.AddContribution(ctx, first, storetest.Implicit("ada", t0), key)
		require.NoError(t, err)

		e.blind.Store(1)
		loser := storetest.NewContribution("ada", a.ID, 7_000_000, t0.Add(1))
		loser.Metadata = map[string]any{"other": "key"}
		got, err := e.app.AddContribution(ctx, loser, storetest.Implicit("ada", t0), key)
		require.NoError(t, err)
		require.Equal(t, int32(-1), e.blind.Load(), "the in-transaction lookup was blinded, the answer's was not")
		require.Equal(t, int32(1), e.taken.Load(), "the unique key refused the loser's record")
		require.Equal(t, first, got, "the loser answers the winner's record, not a merge with its own")
		requireOneContribution(t, e.env, a.ID, first)
		_, err = e.app.GetContribution(ctx, loser.ID)
		require.ErrorIs(t, err, store.ErrNotFound, "the loser's contribution rolled back")

		e.blind.Store(1)
		_, err = e.app.AddContribution(ctx, loser, storetest.Implicit("ada", t0),
			&idempotency.Request{Scope: "contribution:ada", Key: "race", Hash: "h2"})
		k, _ := kindOf(t, err)
		require.Equal(t, fault.Invalid, k, "another body losing the race is a 422 too")
		requireOneContribution(t, e.env, a.ID, first)

		// Money takes the same path behind the key's lock.
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		require.Positive(t, e.locks.Load(), "minting locks the economy")
		stake := usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(100 * cc)}
		skey := &idempotency.Request{Scope: "stake:ada", Key: "race", Hash: "s1"}
		ecoLocks := e.locks.Load()
		s1, err := e.app.Stake(ctx, stake, skey)
		require.NoError(t, err)
		keyLocks := e.keyLocks.Load()
		require.Positive(t, keyLocks, "a keyed movement locks its key")
		e.blind.Store(1)
		s2, err := e.app.Stake(ctx, stake, skey)
		require.NoError(t, err)
		require.Equal(t, s1, s2)
		require.Greater(t, e.keyLocks.Load(), keyLocks)
		require.Equal(t, ecoLocks, e.locks.Load(), "a stake never locks the economy row")
		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, money.Micros(100*cc), b.Staked, "staked once")
	})
}

func TestContributionConcurrentRetriesRecordOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setupSpy(t, engine)
		ctx := context.Background()
		a := createAsset(t, e.env)
		if engine == database.Postgres {
			warmPool(t, e.db)
		}
		key := &idempotency.Request{Scope: "contribution:ada", Key: "burst", Hash: "h1"}
		const n = 8
		got := make([]store.Contribution, n)
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				c := storetest.NewContribution("ada", a.ID, 3_000_000, t0)
				<-start
				got[i], errs[i] = e.app.AddContribution(ctx, c, storetest.Implicit("ada", t0), key)
			})
		}
		close(start)
		wg.Wait()
		for i := range n {
			require.NoError(t, errs[i])
			require.Equal(t, got[0], got[i], "every retry answers the one contribution")
		}
		requireOneContribution(t, e.env, a.ID, got[0])
		require.Equal(t, int32(0), e.locks.Load())
		// How many lost the race to the unique key (rather than finding the
		// record) depends on timing; either way they answer the same.
		t.Logf("%s: %d of %d requests lost the race on the unique key", engine, e.taken.Load(), n-1)
	})
}

// warmPool opens the pool's connections up front, so the requests that
// follow overlap instead of queueing behind the first connection's dial.
func warmPool(t *testing.T, db *database.DB) {
	t.Helper()
	const conns = 4 // dbtest's pool size
	var ready sync.WaitGroup
	ready.Add(conns)
	var wg sync.WaitGroup
	for range conns {
		wg.Go(func() {
			_ = db.Tx(context.Background(), func(database.Querier) error {
				ready.Done()
				ready.Wait()
				return nil
			})
		})
	}
	wg.Wait()
}

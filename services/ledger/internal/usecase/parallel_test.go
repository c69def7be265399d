package usecase_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// stillBlocked is how long a test waits to see that a call it expects to
// be blocked has not returned.
const stillBlocked = 200 * time.Millisecond

// waitFor is how long a test waits for what must happen.
const waitFor = 20 * time.Second

// gate stops the first call that passes it once armed, inside that call's
// transaction: it reports the call on reached and holds it until open.
type gate struct {
	armed            atomic.Bool
	reached, release chan struct{}
	once             sync.Once
}

// newGate returns a gate that opens when the test ends at the latest, so
// a failed test never leaves a transaction open.
func newGate(t *testing.T) *gate {
	g := &gate{reached: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(g.open)
	return g
}

func (g *gate) pass() {
	if g.armed.CompareAndSwap(true, false) {
		close(g.reached)
		<-g.release
	}
}

// open lets the held call go on.
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// await waits for the gate to be reached.
func (g *gate) await(t *testing.T, what string) {
	t.Helper()
	select {
	case <-g.reached:
	case <-time.After(waitFor):
		t.Fatalf("%s never reached its gate", what)
	}
}

// gatedCredit holds a movement inside its transaction right after Apply
// (afterApply), or a change of mode right after it took the mode lock
// exclusively (afterModes); a barrier, when set, holds each Apply until
// that many are inside their transactions at once.
type gatedCredit struct {
	store.Credit
	afterApply, afterModes *gate
	barrier                *barrier
}

func (c gatedCredit) Apply(ctx context.Context, m store.Movement) (store.Applied, error) {
	out, err := c.Credit.Apply(ctx, m)
	if err == nil {
		if c.afterApply != nil {
			c.afterApply.pass()
		}
		if c.barrier != nil {
			if berr := c.barrier.wait(); berr != nil {
				return store.Applied{}, berr
			}
		}
	}
	return out, err
}

func (c gatedCredit) LockModes(ctx context.Context, exclusive bool) error {
	err := c.Credit.LockModes(ctx, exclusive)
	if err == nil && exclusive && c.afterModes != nil {
		c.afterModes.pass()
	}
	return err
}

// barrier lets its callers on once n of them wait together, or fails them
// after a timeout.
type barrier struct {
	n       int
	mu      sync.Mutex
	arrived int
	all     chan struct{}
}

func newBarrier(n int) *barrier { return &barrier{n: n, all: make(chan struct{})} }

func (b *barrier) wait() error {
	b.mu.Lock()
	b.arrived++
	if b.arrived == b.n {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-time.After(waitFor):
		return fmt.Errorf("only %d of %d movements were inside their transactions at once", b.arrived, b.n)
	}
}

// gatedEnv is a ledger whose credit repository is wrapped by wrap, with
// the ops freeze signer.
func gatedEnv(t *testing.T, engine database.Engine, wrap func(store.Credit) store.Credit, contributors ...string) env {
	t.Helper()
	db := dbtest.Open(t, engine, "ledger", store.Migrations())
	fc := clock.NewFake(t0)
	app := usecase.New(db, func(q database.Querier) usecase.Repos {
		r := repos(q)
		r.Credit = wrap(r.Credit)
		return r
	}, usecase.Config{Clock: fc, Ideas: ideas{}, Signers: map[string]string{"ops": opsSecret}})
	for i, c := range contributors {
		require.NoError(t, app.Register(context.Background(),
			store.Contributor{ID: c, Handle: c, TrustLevel: "tofu", CreatedAt: t0},
			store.Session{TokenHash: fmt.Sprintf("hash-%d", i), CreatedAt: t0}))
	}
	return env{app: app, db: db, clock: fc}
}

// result runs fn in a goroutine and returns where its error arrives.
func result(fn func() error) <-chan error {
	out := make(chan error, 1)
	go func() { out <- fn() }()
	return out
}

// requireBlocked checks that nothing arrives on done for a while.
func requireBlocked(t *testing.T, done <-chan error, what string) {
	t.Helper()
	select {
	case err := <-done:
		t.Fatalf("%s returned (%v) while it should wait", what, err)
	case <-time.After(stillBlocked):
	}
}

// receive waits for fn's error.
func receive(t *testing.T, done <-chan error, what string) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(waitFor):
		t.Fatalf("%s never returned", what)
		return nil
	}
}

// TestFreezeInterleavedWithMovements: a movement that commits after a
// freeze committed is impossible. A stake held inside its transaction
// (after its journal entry and audit entry were written) keeps a freeze
// waiting (Postgres: the freeze waits for the stake's shared mode lock;
// SQLite: for the write lock); the stake commits first and its audit
// entry precedes the freeze's. Conversely, a stake and a deposit that
// start while a freeze holds the mode lock exclusively wait for it, and
// then read the new mode and are refused.
func TestFreezeInterleavedWithMovements(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		var afterApply, afterModes *gate
		e := gatedEnv(t, engine, func(c store.Credit) store.Credit {
			return gatedCredit{Credit: c, afterApply: afterApply, afterModes: afterModes}
		}, "ada")
		// Made after the database, so they open before it closes.
		afterApply, afterModes = newGate(t), newGate(t)
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		stake := func(amount money.Micros) func() error {
			return func() error {
				_, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(amount)}, nil)
				return err
			}
		}

		// A stake inside its transaction; then a freeze.
		afterApply.armed.Store(true)
		staked := result(stake(100 * cc))
		afterApply.await(t, "the stake")
		frozen := result(func() error {
			_, err := e.app.Freeze(ctx, signed(opsSecret, "ops", t0, nonceN(0), "drill"))
			return err
		})
		requireBlocked(t, frozen, "the freeze, while a stake's transaction is open,")
		afterApply.open()
		require.NoError(t, receive(t, staked, "the stake"), "the stake read the mode before the freeze: it commits")
		require.NoError(t, receive(t, frozen, "the freeze"))

		sequence(t, e.app)
		recs, err := e.app.AuditEntries(ctx, 10, 0)
		require.NoError(t, err)
		seqOf := map[string]int64{}
		for _, r := range recs {
			seqOf[r.Entry.Kind] = r.Entry.Seq
		}
		require.Positive(t, seqOf["stake"])
		require.Positive(t, seqOf["freeze"])
		require.Less(t, seqOf["stake"], seqOf["freeze"], "the stake committed before the freeze, and the log says so")
		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, money.Micros(100*cc), b.Staked)

		err = stake(cc)()
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Equal(t, "frozen", detail)

		// A freeze holding the mode lock exclusively; then a stake and a
		// deposit.
		e.clock.Advance(time.Second)
		_, err = e.app.Unfreeze(ctx, "drill over", "admin")
		require.NoError(t, err)
		afterModes.armed.Store(true)
		frozen = result(func() error {
			_, err := e.app.Freeze(ctx, signed(opsSecret, "ops", t0, nonceN(1), "drill again"))
			return err
		})
		afterModes.await(t, "the freeze")
		staked = result(stake(cc))
		deposited := result(func() error {
			_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(cc), Reference: "r2"}, nil)
			return err
		})
		requireBlocked(t, staked, "the stake, while a freeze holds the mode lock,")
		requireBlocked(t, deposited, "the deposit, while a freeze holds the mode lock,")
		afterModes.open()
		require.NoError(t, receive(t, frozen, "the freeze"))
		for what, done := range map[string]<-chan error{"the stake": staked, "the deposit": deposited} {
			k, detail := kindOf(t, receive(t, done, what))
			require.Equal(t, fault.Rejected, k, what)
			require.Equal(t, "frozen", detail, "%s read the mode the freeze committed", what)
		}
		b, err = e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, store.Balances{Available: 895 * cc, Staked: 100 * cc}, b, "neither moved anything")
		requireSound(t, e)
		recs, err = e.app.AuditEntries(ctx, 1, 0)
		require.NoError(t, err)
		require.Equal(t, "freeze", recs[0].Entry.Kind, "nothing was recorded after the second freeze")
	})
}

// TestStakesDoNotTakeTheEconomyRow: stakes and unstakes from many
// contributors in parallel never lock the economy row (deposits do), and
// on Postgres several are inside their transactions at the same time;
// concurrent stakes and unstakes of one contributor lose nothing: the
// balances equal what succeeded, the journal and the audit log agree.
func TestStakesDoNotTakeTheEconomyRow(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		names := []string{"c00", "c01", "c02", "c03", "c04", "c05"}
		var (
			locks, keyLocks atomic.Int32
			bar             atomic.Pointer[barrier]
		)
		e := gatedEnv(t, engine, func(c store.Credit) store.Credit {
			return gatedCredit{Credit: spyCredit{Credit: c, locks: &locks, keyLocks: &keyLocks}, barrier: bar.Load()}
		}, names...)
		ctx := context.Background()
		for _, name := range names {
			_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: name, AmountUSD: units(10 * cc), Reference: name}, nil)
			require.NoError(t, err)
		}
		require.Equal(t, int32(len(names)), locks.Load(), "each deposit locks the economy row once")
		locks.Store(0)

		if engine == database.Postgres {
			// Three stakes of three contributors are inside their
			// transactions at once: none waits for another's commit.
			bar.Store(newBarrier(3))
			var wg sync.WaitGroup
			errs := make([]error, 3)
			for i, name := range names[:3] {
				wg.Go(func() {
					_, errs[i] = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: name, IdeaID: "idea-0", AmountCC: units(cc)}, nil)
				})
			}
			wg.Wait()
			bar.Store(nil)
			for _, err := range errs {
				require.NoError(t, err)
			}
		}

		// Every contributor moves in its own goroutine; c00 in four.
		// c00's first unstakes take it past the instant tier on both ideas,
		// so its later unstakes cool (see
		// TestConcurrentStakeAndInstantUnstakeOfOnePosition for unstakes
		// released at once).
		for _, idea := range []string{"idea-0", "idea-1"} {
			_, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "c00", IdeaID: idea, AmountCC: units(200 * cc)}, nil)
			require.NoError(t, err)
			u, err := e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "c00", IdeaID: idea, AmountCC: units(100 * cc)}, nil)
			require.NoError(t, err)
			require.Equal(t, "cooling", u.Status)
		}
		type tally struct{ staked, unstaked atomic.Int64 }
		tallies := map[string]*tally{}
		for _, name := range names {
			tallies[name] = &tally{}
		}
		ops := 40
		if testing.Short() {
			ops = 15
		}
		var (
			wg        sync.WaitGroup
			succeeded atomic.Int64
		)
		run := func(name string, seed uint64) {
			rnd := rand.New(rand.NewPCG(seed, 11))
			for n := range ops {
				amount := money.Micros(rnd.Int64N(40*cc) + cc)
				idea := fmt.Sprintf("idea-%d", rnd.IntN(2))
				var err error
				if n%3 == 2 {
					_, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: name, IdeaID: idea, AmountCC: units(amount)}, nil)
					if err == nil {
						tallies[name].unstaked.Add(int64(amount))
					}
				} else {
					_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: name, IdeaID: idea, AmountCC: units(amount)}, nil)
					if err == nil {
						tallies[name].staked.Add(int64(amount))
					}
				}
				if err == nil {
					succeeded.Add(1)
				} else if fault.KindOf(err) != fault.Rejected {
					t.Errorf("%s op %d: %v", name, n, err)
					return
				}
			}
		}
		for i, name := range names {
			wg.Go(func() { run(name, uint64(i)) })
		}
		for i := range 3 {
			wg.Go(func() { run("c00", uint64(100+i)) })
		}
		wg.Wait()
		require.Zero(t, locks.Load(), "no stake or unstake locked the economy row")
		require.Positive(t, succeeded.Load())

		for _, name := range names {
			b, err := e.app.Balances(ctx, name)
			require.NoError(t, err)
			want := money.Micros(tallies[name].staked.Load() - tallies[name].unstaked.Load())
			if name == "c00" {
				want += 200 * cc // staked 200 and unstaked 100 on each idea before
			}
			if engine == database.Postgres && name <= "c02" {
				want += cc // the barrier's stake
			}
			require.Equal(t, want, b.Staked, "%s: every stake and unstake that succeeded, and nothing else", name)
			require.Equal(t, money.Micros(995*cc), b.Available+b.Staked+b.Cooling, "%s: no CC lost or made", name)
			ps, err := e.app.Investments(ctx, name, usecase.Page{})
			require.NoError(t, err)
			var positions money.Micros
			for _, p := range ps.Positions {
				positions += p.Amount
			}
			require.Equal(t, b.Staked, positions, name)
		}
		var entries int64
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM cc_entries WHERE kind IN ('stake', 'unstake')`).Scan(&entries))
		want := succeeded.Load() + 4
		if engine == database.Postgres {
			want += 3
		}
		require.Equal(t, want, entries, "one journal entry per movement that succeeded")

		sequence(t, e.app)
		c, err := e.app.CheckCoherence(ctx)
		require.NoError(t, err)
		require.Empty(t, c.Mismatched, "JournalMismatches")
		require.Empty(t, c.Unreconciled)
		require.True(t, c.Trail().OK, "%+v", c.Trail())
		require.Zero(t, c.Backlog.Entries)
		requireSound(t, e)
	})
}

// TestConcurrentStakeAndInstantUnstakeOfOnePosition: stakes and unstakes
// released at once (below the instant tier) of one position, concurrently,
// all succeed without waiting on each other in a cycle.
func TestConcurrentStakeAndInstantUnstakeOfOnePosition(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(100 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(1000 * cc)}, nil)
		require.NoError(t, err)
		start := time.Now()
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Go(func() {
				for range 25 {
					var err error
					if g%2 == 0 {
						_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(cc / 100)}, nil)
					} else {
						_, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(cc / 100)}, nil)
					}
					if err != nil {
						t.Errorf("%v", err)
						return
					}
				}
			})
		}
		wg.Wait()
		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, store.Balances{Available: 9950*cc - 1000*cc, Staked: 1000 * cc}, b)
		require.Less(t, time.Since(start), 10*time.Second, "no movement waited for a deadlock to be detected")
		requireSound(t, e)
	})
}

// countingQuerier counts what is sent to the database: each call, and
// each statement (a batch's every statement).
type countingQuerier struct {
	database.Querier
	calls, statements *atomic.Int64
}

func (q countingQuerier) count(statements int) {
	q.calls.Add(1)
	q.statements.Add(int64(statements))
}

func (q countingQuerier) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	q.count(1)
	return q.Querier.Exec(ctx, query, args...)
}

func (q countingQuerier) Query(ctx context.Context, query string, args ...any) (database.Rows, error) {
	q.count(1)
	return q.Querier.Query(ctx, query, args...)
}

func (q countingQuerier) QueryRow(ctx context.Context, query string, args ...any) database.Row {
	q.count(1)
	return q.Querier.QueryRow(ctx, query, args...)
}

func (q countingQuerier) SendBatch(ctx context.Context, b *database.Batch) error {
	q.count(b.Len())
	return q.Querier.SendBatch(ctx, b)
}

// TestStakeIsFlatInHistory: a stake does the same work whatever the
// contributor's history: after 0 and after 200 earlier movements of the
// same contributor on the same idea, one stake sends the same statements,
// in one round trip.
func TestStakeIsFlatInHistory(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "ledger", store.Migrations())
		var calls, statements atomic.Int64
		app := usecase.New(db, func(q database.Querier) usecase.Repos {
			return repos(countingQuerier{Querier: q, calls: &calls, statements: &statements})
		}, usecase.Config{Clock: clock.NewFake(t0), Ideas: ideas{}})
		ctx := context.Background()
		require.NoError(t, app.Register(ctx, store.Contributor{ID: "ada", Handle: "ada", TrustLevel: "tofu", CreatedAt: t0},
			store.Session{TokenHash: "h", CreatedAt: t0}))
		_, err := app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(100 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		sequence(t, app)

		stake := func() (int64, int64) {
			t.Helper()
			calls.Store(0)
			statements.Store(0)
			_, err := app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(cc)}, nil)
			require.NoError(t, err)
			return calls.Load(), statements.Load()
		}
		calls0, statements0 := stake()
		require.Equal(t, int64(1), calls0, "one round trip: the movement's batch")
		require.Positive(t, statements0)

		for i := range 100 {
			_, err := app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(2 * cc)}, nil)
			require.NoError(t, err, i)
			_, err = app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(cc)}, nil)
			require.NoError(t, err, i)
		}
		sequence(t, app)
		hist, err := flow(app.History(ctx, "ada", page(300, 0)))
		require.NoError(t, err)
		require.Len(t, hist, 202, "the deposit, the first stake and 200 movements since")

		calls200, statements200 := stake()
		require.Equal(t, calls0, calls200, "round trips after 200 movements")
		require.Equal(t, statements0, statements200, "statements after 200 movements")
		b, err := app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, money.Micros(102*cc), b.Staked)
		require.Equal(t, money.Micros(9950*cc-102*cc), b.Available+b.Cooling)
	})
}

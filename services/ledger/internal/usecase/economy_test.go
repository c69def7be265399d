package usecase_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
)

const cc = money.Scale

// units is an amount as a request sends it (a JSON number), for commands.
func units(m money.Micros) float64 { return m.Float64() }

// page is a list request's page with a limit.
func page(limit, offset int) usecase.Page {
	l := int32(limit)
	return usecase.Page{Limit: &l, Offset: int32(offset)}
}

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

// ideas is a portfolio stand-in: every idea whose id starts with "idea-"
// exists; "idea-pending-<contributor>" waits for an operator's review and
// was created by that contributor.
type ideas struct{}

func (ideas) Idea(_ context.Context, id string) (usecase.IdeaInfo, error) {
	if !strings.HasPrefix(id, "idea-") {
		return usecase.IdeaInfo{}, fault.New(fault.NotFound, "idea %s not found", id)
	}
	info := usecase.IdeaInfo{ID: id, Stage: "specced", Confidence: 0.5}
	if creator, ok := strings.CutPrefix(id, "idea-pending-"); ok {
		info.Pending, info.CreatedBy = true, creator
	}
	return info, nil
}

// repos builds every repository over q, as the ledger module does.
func repos(q database.Querier) usecase.Repos {
	return usecase.Repos{
		Credit: sqlstore.NewCredit(q), Audit: sqlstore.NewAudit(q), Integrity: sqlstore.NewIntegrity(q),
		Identity: sqlstore.NewIdentity(q), Attribution: sqlstore.NewAttribution(q), Impact: sqlstore.NewImpact(q),
		Keys: idempotency.SQL{Q: q}, Send: q.SendBatch,
	}
}

// testSigner signs every test ledger's checkpoints: an App over a
// database another App wrote (a restart, a second replica) is the same
// ledger only with the same key.
var testSigner = func() *audit.Signer {
	skey, _, err := audit.GenerateKey(usecase.EphemeralAuditKeyName)
	if err != nil {
		panic(err)
	}
	s, err := audit.NewSigner(skey)
	if err != nil {
		panic(err)
	}
	return s
}()

type env struct {
	app   *usecase.App
	db    *database.DB
	clock *clock.Fake
}

func setup(t testing.TB, engine database.Engine, contributors ...string) env {
	t.Helper()
	return setupWith(t, engine, nil, contributors...)
}

// setupWith is setup with configure's changes to the use cases' Config.
func setupWith(t testing.TB, engine database.Engine, configure func(*usecase.Config), contributors ...string) env {
	t.Helper()
	db := dbtest.Open(t, engine, "ledger", store.Migrations())
	fc := clock.NewFake(t0)
	cfg := usecase.Config{Clock: fc, Ideas: ideas{}, Signers: map[string]string{"ops": opsSecret}, AuditSigner: testSigner}
	if configure != nil {
		configure(&cfg)
	}
	app := usecase.New(db, repos, cfg)
	for i, c := range contributors {
		require.NoError(t, app.Register(context.Background(),
			store.Contributor{ID: c, Handle: c, TrustLevel: "tofu", CreatedAt: t0},
			store.Session{TokenHash: fmt.Sprintf("hash-%d", i), CreatedAt: t0}))
	}
	return env{app: app, db: db, clock: fc}
}

// sequence integrates every queued audit entry into the log, as the
// ledger's sequencer does in the background: what a test reads of the log
// after a movement.
func sequence(t testing.TB, app *usecase.App) {
	t.Helper()
	for {
		n, err := app.Sequence(context.Background())
		require.NoError(t, err)
		if n == 0 {
			return
		}
	}
}

func kindOf(t *testing.T, err error) (fault.Kind, string) {
	t.Helper()
	require.Error(t, err)
	fe, ok := fault.As(err)
	require.True(t, ok, "want a classified error, got %v", err)
	return fe.Kind, fe.Detail
}

func TestDepositWithdrawAndTheChain(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()

		d, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "wire-1", Actor: "admin"}, nil)
		require.NoError(t, err)
		require.Equal(t, money.Micros(995*cc), d.MintedCC, "10 USD at the 99.5 buy rate")
		require.Equal(t, money.Micros(50_000), d.FeeUSD)
		require.False(t, d.Duplicate)

		again, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "wire-1", Actor: "admin"}, nil)
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, d.MintedCC, again.MintedCC)
		require.Equal(t, d.BuyRate, again.BuyRate, "the duplicate answers the original's rate")
		require.Equal(t, d.FeeUSD, again.FeeUSD)
		require.Equal(t, d.CreatedAt, again.CreatedAt)
		k, _ := kindOf(t, func() error {
			_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(11 * cc), Reference: "wire-1"}, nil)
			return err
		}())
		require.Equal(t, fault.Conflict, k)

		s, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, money.Micros(995*cc), s.OutstandingCC)
		require.Equal(t, money.Micros(10*cc), s.TreasuryUSD)
		require.InDelta(t, 1.005025, s.ReserveRatio, 1e-6)

		w, err := e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(201 * cc)}, nil)
		require.NoError(t, err)
		require.Equal(t, money.Micros(2*cc), w.AmountUSD, "201 CC at the 100.5 sell rate")
		require.Equal(t, money.Micros(10_000), w.FeeUSD)

		k, detail := kindOf(t, func() error {
			_, err := e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(1000 * cc)}, nil)
			return err
		}())
		require.Equal(t, fault.Rejected, k)
		require.Contains(t, detail, "insufficient balance")

		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, store.Balances{Available: 794 * cc}, b)

		sequence(t, e.app)
		res, err := e.app.VerifyAudit(ctx, false)
		require.NoError(t, err)
		require.True(t, res.OK, "%+v", res)
		require.Equal(t, int64(4), res.LastVerified, "deposit, its fee, withdraw, its fee")
		sequence(t, e.app)
		recs, err := e.app.AuditEntries(ctx, 10, 0)
		require.NoError(t, err)
		require.Equal(t, []string{"spread_fee", "withdraw", "spread_fee", "deposit"},
			[]string{recs[0].Entry.Kind, recs[1].Entry.Kind, recs[2].Entry.Kind, recs[3].Entry.Kind})

		_, err = e.app.Balances(ctx, "nobody")
		k, _ = kindOf(t, err)
		require.Equal(t, fault.NotFound, k)
	})
}

func TestStakeUnstakeCooldowns(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(20 * cc), Reference: "r"}, nil)
		require.NoError(t, err) // 1990 CC

		dry, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(1500 * cc), DryRun: true}, nil)
		require.NoError(t, err)
		require.True(t, dry.DryRun)
		require.Equal(t, money.Micros(490*cc), dry.AvailableAfter)
		require.Equal(t, credit.Project("specced", 0.5), dry.Projection)
		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, money.Micros(1990*cc), b.Available, "a dry run writes nothing")

		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "nope", AmountCC: units(cc)}, nil)
		k, _ := kindOf(t, err)
		require.Equal(t, fault.NotFound, k)

		st, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(1500 * cc)}, nil)
		require.NoError(t, err)
		require.Equal(t, money.Micros(1500*cc), st.PositionCC)
		require.Equal(t, money.Micros(490*cc), st.AvailableAfter)

		for _, c := range []struct {
			amount money.Micros
			status string
			wait   time.Duration
		}{{50 * cc, "released", 0}, {100 * cc, "cooling", 24 * time.Hour}, {1001 * cc, "cooling", 72 * time.Hour}} {
			u, err := e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(c.amount)}, nil)
			require.NoError(t, err)
			require.Equal(t, c.status, u.Status)
			require.Equal(t, c.wait, u.Cooldown)
			require.Equal(t, t0.Add(c.wait), u.AvailableAt)
		}
		b, err = e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, store.Balances{Available: 540 * cc, Staked: 349 * cc, Cooling: 1101 * cc}, b)

		e.clock.Advance(24 * time.Hour)
		b, err = e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, store.Balances{Available: 640 * cc, Staked: 349 * cc, Cooling: 1001 * cc}, b, "the 24 h lot is available")

		// A movement releases the cooled lot into the journal first.
		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(600 * cc)}, nil)
		require.NoError(t, err)
		e.clock.Advance(48 * time.Hour)
		b, err = e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, store.Balances{Available: 1041 * cc, Staked: 349 * cc}, b)

		_, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(350 * cc)}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Contains(t, detail, "staked on idea idea-1")

		inv, err := e.app.Investments(ctx, "ada", usecase.Page{})
		require.NoError(t, err)
		require.Len(t, inv.Positions, 1)
		require.Equal(t, []int{1, credit.DefaultPositionPage, 0}, []int{inv.Total, inv.Limit, inv.Offset}, "the default page holds it")
		require.Equal(t, money.Micros(349*cc), inv.Positions[0].Amount)
		hist, err := flow(e.app.History(ctx, "ada", page(50, 0)))
		require.NoError(t, err)
		kinds := make([]credit.Kind, len(hist))
		for i, h := range hist {
			kinds[i] = h.Entry.Kind
		}
		require.Equal(t, []credit.Kind{"withdraw", "release", "unstake", "unstake", "unstake", "stake", "deposit"}, kinds)
		requireSound(t, e)
	})
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		idem := &idempotency.Request{Scope: "stake:ada", Key: "k1", Hash: "h1"}
		cmd := usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(100 * cc)}
		first, err := e.app.Stake(ctx, cmd, idem)
		require.NoError(t, err)
		second, err := e.app.Stake(ctx, cmd, idem)
		require.NoError(t, err)
		require.Equal(t, first, second, "the same key and body answer the same response")
		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, money.Micros(100*cc), b.Staked, "and move nothing twice")

		_, err = e.app.Stake(ctx, cmd, &idempotency.Request{Scope: "stake:ada", Key: "k1", Hash: "other"})
		k, _ := kindOf(t, err)
		require.Equal(t, fault.Invalid, k)
	})
}

// TestIdempotencyKeysLastTheirRetention: a stake's key is pruned once
// past its retention (PruneIdempotencyKeys, the retention runner's
// prune); a retry with it then stakes again.
func TestIdempotencyKeysLastTheirRetention(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		idem := &idempotency.Request{Scope: "stake:ada", Key: "k1", Hash: "h1"}
		cmd := usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(100 * cc)}
		_, err = e.app.Stake(ctx, cmd, idem)
		require.NoError(t, err)
		n, err := e.app.PruneIdempotencyKeys(ctx, e.clock.Now().Add(-usecase.DefaultIdempotencyRetention), 10)
		require.NoError(t, err)
		require.Zero(t, n, "a fresh key is kept")

		e.clock.Advance(usecase.DefaultIdempotencyRetention + time.Second)
		n, err = e.app.PruneIdempotencyKeys(ctx, e.clock.Now().Add(-usecase.DefaultIdempotencyRetention), 10)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		_, err = e.app.Stake(ctx, cmd, idem)
		require.NoError(t, err)
		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, money.Micros(200*cc), b.Staked, "past its retention the key stakes again")
	})
}

func TestOracleBreakerAndBacking(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		for _, p := range []money.Micros{100 * cc, 100 * cc} {
			e.clock.Advance(time.Minute)
			rd, err := e.app.ObservePrice(ctx, p, "test", "oracle")
			require.NoError(t, err)
			require.Equal(t, credit.Accepted, rd.Verdict)
		}
		e.clock.Advance(time.Minute)
		rd, err := e.app.ObservePrice(ctx, 130*cc, "test", "oracle")
		require.NoError(t, err)
		require.Equal(t, credit.Tripped, rd.Verdict)
		rate, err := e.app.ExchangeRate(ctx)
		require.NoError(t, err)
		require.Equal(t, money.Micros(100*cc), rate.Quote.Mid, "the rate stays at the last good value")
		require.True(t, rate.Breaker.Tripped)

		// Three clean readings at 90 (within 20% of the average of the
		// accepted readings), the last 6 minutes after the trip: the
		// breaker recovers and 90 CC per USD is the rate: each CC is now
		// worth more USD than the treasury holds for it.
		for range 3 {
			e.clock.Advance(2 * time.Minute)
			_, err := e.app.ObservePrice(ctx, 90*cc, "test", "oracle")
			require.NoError(t, err)
		}
		rate, err = e.app.ExchangeRate(ctx)
		require.NoError(t, err)
		require.False(t, rate.Breaker.Tripped)
		require.Equal(t, money.Micros(90*cc), rate.Quote.Mid)

		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(100 * cc)}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Contains(t, detail, "backing")
		s, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Less(t, s.ReserveRatio, 1.0)
		require.Equal(t, money.Micros(995*cc), s.OutstandingCC, "the refused withdrawal changed nothing")

		incidents, err := items(e.app.Incidents(ctx, page(10, 0)))
		require.NoError(t, err)
		require.Equal(t, "oracle_tripped", incidents[0].Kind)

		// Under-reserved (0.9045): a small deposit, far from filling the
		// hole, is accepted because it raises the ratio; so is one while
		// the monitor has paused minting. (Both were refused: only a
		// deposit that restored 1.0 at once went through.)
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 1, Reference: "small"}, nil)
		require.NoError(t, err, "a deposit that raises the ratio")
		raised, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Greater(t, raised.ReserveRatio, s.ReserveRatio)
		require.Less(t, raised.ReserveRatio, 1.0, "still under-reserved")
		_, err = e.app.SetMode(ctx, usecase.ModeMintingPaused, "reserve ratio below 1.0", "monitor")
		require.NoError(t, err)
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 2, Reference: "paused"}, nil)
		require.NoError(t, err, "minting is paused, but a deposit that raises the ratio is accepted")
		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: 1}, nil)
		k, detail = kindOf(t, err)
		require.Equal(t, fault.Rejected, k, "a withdrawal must leave the ratio at 1.0 or more")
		require.Contains(t, detail, "backing")

		// Backed again (10 000 USD more): a withdrawal that leaves the
		// ratio at or above 1.0 is paid.
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 10_000, Reference: "fill"}, nil)
		require.NoError(t, err)
		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: 1}, nil)
		require.NoError(t, err)
		backed, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.GreaterOrEqual(t, backed.ReserveRatio, 1.0)
		requireSound(t, e)
	})
}

// requireSound checks every invariant of the economy: each cached balance
// equals the sum of its journal lines, none is negative, the CC outstanding
// equals minus the issuance account, the supply is backed and the chain
// verifies.
// appendingAudit commits more movements, through app, just before the
// first page of a verification is read: what a busy economy does to a
// check that runs outside the movements' transactions.
type appendingAudit struct {
	store.Audit
	once   *sync.Once
	append func()
}

func (a appendingAudit) Range(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	a.once.Do(a.append)
	return a.Audit.Range(ctx, after, limit)
}

// TestVerifyWhileMovementsAppend: entries sequenced after the verification
// read the latest checkpoint are the next check's, not "entries missing"
// (the monitor freezes the economy on a broken chain).
func TestVerifyWhileMovementsAppend(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		deposit := func(ref string) {
			_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(cc), Reference: ref}, nil)
			require.NoError(t, err)
		}
		deposit("before")
		sequence(t, e.app)
		before, err := e.app.VerifyAudit(ctx, false)
		require.NoError(t, err)
		require.True(t, before.OK)
		require.Positive(t, before.LastVerified)

		once := &sync.Once{}
		verifier := usecase.New(e.db, func(q database.Querier) usecase.Repos {
			r := repos(q)
			r.Audit = appendingAudit{Audit: r.Audit, once: once, append: func() {
				deposit("during-1")
				deposit("during-2")
				sequence(t, e.app) // the sequencer, on another replica
			}}
			return r
		}, usecase.Config{AuditSigner: testSigner, Clock: e.clock, Ideas: ideas{}})
		res, err := verifier.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, res.OK, "%+v", res)
		require.Equal(t, before.LastVerified, res.LastVerified, "the walk ends at the head it read")

		sequence(t, e.app)
		after, err := e.app.VerifyAudit(ctx, false)
		require.NoError(t, err)
		require.True(t, after.OK, "%+v", after)
		require.Greater(t, after.LastVerified, before.LastVerified, "the next check covers the appended entries")
	})
}

func requireSound(t *testing.T, e env) {
	t.Helper()
	ctx := context.Background()
	sequence(t, e.app)
	c, err := e.app.CheckCoherence(ctx)
	require.NoError(t, err)
	require.Empty(t, c.Mismatched, "balances that differ from their journal")
	require.True(t, c.Chain.OK, "%+v", c.Chain)
	var negative, issuance int64
	require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM cc_accounts WHERE account <> 'issuance' AND balance < 0`).Scan(&negative))
	require.Zero(t, negative)
	err = e.db.QueryRow(ctx, `SELECT balance FROM cc_accounts WHERE account = 'issuance'`).Scan(&issuance)
	if err == nil {
		require.Equal(t, -issuance, int64(c.Supply.OutstandingCC))
	}
	if c.Supply.Rate.Quote.Mid == usecase.DefaultCCPerUSD {
		require.True(t, credit.Backed(c.Supply.OutstandingCC, c.Supply.TreasuryUSD, c.Supply.Rate.Quote.Mid))
	}
}

// TestConcurrentMovements: 32 clients × 200 random deposits, stakes,
// unstakes and withdrawals. Afterwards every balance equals its journal,
// none is negative, the chain verifies, and a sampler saw the backing
// invariant hold at every point it looked.
func TestConcurrentMovements(t *testing.T) {
	t.Parallel()
	clients, ops := 32, 200
	if testing.Short() {
		clients, ops = 8, 50
	}
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		names := make([]string, clients)
		for i := range names {
			names[i] = fmt.Sprintf("c%02d", i)
		}
		e := setup(t, engine, names...)
		ctx := context.Background()

		var (
			done    atomic.Bool
			samples atomic.Int64
			sampler sync.WaitGroup
		)
		sampler.Go(func() {
			for !done.Load() {
				s, err := e.app.Supply(ctx)
				if err == nil {
					samples.Add(1)
					if !credit.Backed(s.OutstandingCC, s.TreasuryUSD, s.Rate.Quote.Mid) {
						t.Errorf("invariant broken at a sample: %+v", s)
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
		})

		var (
			wg        sync.WaitGroup
			succeeded atomic.Int64
		)
		for i, name := range names {
			wg.Go(func() {
				rnd := rand.New(rand.NewPCG(uint64(i), 7))
				for n := range ops {
					amount := money.Micros(rnd.Int64N(150*cc) + cc)
					idea := fmt.Sprintf("idea-%d", rnd.IntN(4))
					var err error
					switch rnd.IntN(4) {
					case 0:
						_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: name, AmountUSD: units(amount / 50),
							Reference: fmt.Sprintf("%s-%d", name, n)}, nil)
					case 1:
						_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: name, IdeaID: idea, AmountCC: units(amount)}, nil)
					case 2:
						_, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: name, IdeaID: idea, AmountCC: units(amount)}, nil)
					default:
						_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: name, AmountCC: units(amount)}, nil)
					}
					if err == nil {
						succeeded.Add(1)
						continue
					}
					if fault.KindOf(err) != fault.Rejected {
						t.Errorf("%s op %d: %v", name, n, err)
						return
					}
				}
			})
		}
		wg.Wait()
		done.Store(true)
		sampler.Wait()
		require.Positive(t, samples.Load())
		require.Greater(t, succeeded.Load(), int64(clients*ops/4), "most operations should succeed")
		requireSound(t, e)
		var entries int
		require.NoError(t, e.db.QueryRow(ctx, `SELECT COUNT(*) FROM cc_entries`).Scan(&entries))
		require.GreaterOrEqual(t, entries, int(succeeded.Load()))
	})
}

func TestDistributionPaysCC(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada", "bob", "cyd")
		ctx := context.Background()
		// 100 USD deposited mints 9 950 CC against 10 000 CC of backing:
		// 50 CC of surplus (the spread) the treasury can pay out.
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(100 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		asset := createAsset(t, e)
		contribute(t, e, "bob", asset.ID, 30*cc, t0)
		contribute(t, e, "cyd", asset.ID, 10*cc, t0)

		plain, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "d0", AssetID: asset.ID, Value: 40 * cc, CreatedAt: t0})
		require.NoError(t, err)
		require.False(t, plain.PaidCC)
		b, err := e.app.Balances(ctx, "bob")
		require.NoError(t, err)
		require.Zero(t, b.Available, "an unpaid distribution moves no CC")

		d, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "d1", AssetID: asset.ID, Value: 40 * cc, CreatedAt: t0, PaidCC: true})
		require.NoError(t, err)
		require.True(t, d.PaidCC)
		b, err = e.app.Balances(ctx, "bob")
		require.NoError(t, err)
		require.Equal(t, money.Micros(30*cc), b.Available, "bob's payout minted as CC")
		b, err = e.app.Balances(ctx, "cyd")
		require.NoError(t, err)
		require.Equal(t, money.Micros(10*cc), b.Available)
		back, err := e.app.GetDistribution(ctx, "d1", page(10, 0))
		require.NoError(t, err)
		require.True(t, back.PaidCC, "paid_cc round-trips")
		for _, p := range back.Payouts {
			require.False(t, p.Unpaid, "%s registered: paid", p.ContributorID)
		}

		_, err = e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "d2", AssetID: asset.ID, Value: 40 * cc, CreatedAt: t0, PaidCC: true})
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k, "only 10 CC of surplus is left")
		require.Contains(t, detail, "backing")
		_, err = e.app.GetDistribution(ctx, "d2", page(10, 0))
		require.ErrorIs(t, err, store.ErrNotFound, "the refused distribution wrote nothing")
		requireSound(t, e)
	})
}

// TestDistributionPaysNoCCToAPayeeThatNeverRegistered is the issue's: CC
// paid to github: and email: ids could never be moved, since only a
// contributor's own session moves its CC. Such a payee's share is
// computed and recorded unpaid, nothing is minted for it, and the
// registered payee gets its share and no more.
func TestDistributionPaysNoCCToAPayeeThatNeverRegistered(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada", "bob")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(100 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		asset := createAsset(t, e)
		contribute(t, e, "bob", asset.ID, 30*cc, t0)
		contribute(t, e, "github:octo", asset.ID, 10*cc, t0)
		before, err := e.app.Supply(ctx)
		require.NoError(t, err)

		d, err := e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "d1", AssetID: asset.ID, Value: 40 * cc, CreatedAt: t0, PaidCC: true})
		require.NoError(t, err)
		unpaid := map[string]bool{}
		for _, p := range d.Payouts {
			unpaid[p.ContributorID] = p.Unpaid
		}
		require.Equal(t, map[string]bool{"bob": false, "github:octo": true}, unpaid)
		require.Equal(t, map[string][2]money.Micros{"bob": {30 * cc, 0}, "github:octo": {10 * cc, 0}}, payouts(d), "the shares as computed")
		b, err := e.app.Balances(ctx, "github:octo")
		require.NoError(t, err)
		require.Zero(t, b.Available, "nothing minted where nobody could move it")
		after, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, before.OutstandingCC+30*cc, after.OutstandingCC, "bob's share alone was minted")
		back, err := e.app.GetDistribution(ctx, "d1", page(10, 0))
		require.NoError(t, err)
		require.Equal(t, d.Payouts, back.Payouts, "unpaid is recorded")
		requireSound(t, e)
	})
}

// items is a list use case's page as its items alone.
func items[T any](l usecase.Listed[T], err error) ([]T, error) { return l.Items, err }

// flow is a contributor's history as its movements alone.
func flow(f usecase.Flow, err error) ([]store.JournalEntry, error) { return f.Items, err }

// TestReadsNameTheContributorByHandle: the reads that answer for one
// contributor carry it, handle included, from the read that checks it
// exists; an implicit contributor has none. The audit log names its
// entries' actor and subject by handle when they are registered.
func TestReadsNameTheContributorByHandle(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 1, Reference: "wire-1", Actor: "admin"}, nil)
		require.NoError(t, err)
		a := createAsset(t, e)
		contribute(t, e, "octo", a.ID, money.Scale, t0)

		for id, handle := range map[string]string{"ada": "ada", "octo": ""} {
			acc, err := e.app.Account(ctx, id)
			require.NoError(t, err)
			require.Equal(t, handle, acc.Contributor.Handle, id)
			f, err := e.app.History(ctx, id, usecase.Page{})
			require.NoError(t, err)
			require.Equal(t, handle, f.Contributor.Handle, id)
			inv, err := e.app.Investments(ctx, id, usecase.Page{})
			require.NoError(t, err)
			require.Equal(t, handle, inv.Contributor.Handle, id)
		}
		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		acc, err := e.app.Account(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, b, acc.Balances, "the same balances")
		_, err = e.app.Account(ctx, "nobody")
		k, _ := kindOf(t, err)
		require.Equal(t, fault.NotFound, k)

		sequence(t, e.app)
		recs, err := e.app.AuditEntries(ctx, 10, 0)
		require.NoError(t, err)
		require.Len(t, recs, 2, "the deposit and its spread fee")
		for _, r := range recs {
			require.Equal(t, "admin", r.Entry.Actor)
			require.Empty(t, r.ActorHandle, "the administrator is no contributor")
			require.Equal(t, "ada", r.SubjectHandle, r.Entry.Kind)
		}
		page, err := e.app.AuditPage(ctx, usecase.Page{})
		require.NoError(t, err)
		require.Equal(t, recs, page.Items)
	})
}

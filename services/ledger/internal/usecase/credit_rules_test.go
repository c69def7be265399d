package usecase_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// requireField checks err is a validation error naming field.
func requireField(t *testing.T, err error, field string) {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want a classified error, got %v", err)
	require.Equal(t, fault.Invalid, fe.Kind, "%v", err)
	var fields []string
	for _, f := range fe.Fields {
		fields = append(fields, f.Field)
	}
	require.Contains(t, fields, field, "%v", err)
}

func auditCount(t *testing.T, e env) int {
	t.Helper()
	var n int
	require.NoError(t, e.db.QueryRow(context.Background(), `SELECT COUNT(*) FROM audit_entries`).Scan(&n))
	return n
}

// TestUnstakeCooldownCountsTheWindow: splitting an exit into unstakes under
// 100 CC no longer releases it at once. The tier is that of everything the
// contributor unstaked from the idea over the last 24 hours.
func TestUnstakeCooldownCountsTheWindow(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada", "bob")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(30 * cc), Reference: "a"}, nil)
		require.NoError(t, err) // 2 985 CC
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "bob", AmountUSD: units(30 * cc), Reference: "b"}, nil)
		require.NoError(t, err)
		for _, s := range []usecase.StakeCmd{
			{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(2500 * cc)},
			{ContributorID: "ada", IdeaID: "idea-2", AmountCC: units(200 * cc)},
			{ContributorID: "bob", IdeaID: "idea-1", AmountCC: units(2500 * cc)},
		} {
			_, err := e.app.Stake(ctx, s, nil)
			require.NoError(t, err)
		}

		// 2 000 CC at once cools 72 h; so do 21 unstakes of 99.999999 CC.
		u, err := e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "bob", IdeaID: "idea-1", AmountCC: units(2000 * cc)}, nil)
		require.NoError(t, err)
		require.Equal(t, credit.LongCooldown, u.Cooldown)
		var cooldowns []time.Duration
		for range 21 {
			u, err := e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(99_999_999)}, nil)
			require.NoError(t, err)
			cooldowns = append(cooldowns, u.Cooldown)
		}
		require.Equal(t, time.Duration(0), cooldowns[0], "the first 99.999999 CC is released")
		for i := 1; i < 10; i++ {
			require.Equal(t, credit.ShortCooldown, cooldowns[i], "unstake %d: 100 to 1 000 CC in the window", i+1)
		}
		for i := 10; i < 21; i++ {
			require.Equal(t, credit.LongCooldown, cooldowns[i], "unstake %d: more than 1 000 CC in the window", i+1)
		}
		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, money.Micros(20*99_999_999), b.Cooling, "only the first was released")

		// Per idea: another idea's window is empty; and bob's 2 000 CC are
		// not ada's.
		u, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-2", AmountCC: units(99 * cc)}, nil)
		require.NoError(t, err)
		require.Equal(t, "released", u.Status)

		// The window rolls: a microsecond short of 24 hours the unstakes
		// still count; at 24 hours they do not.
		e.clock.Advance(24*time.Hour - time.Microsecond)
		u, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(cc)}, nil)
		require.NoError(t, err)
		require.Equal(t, credit.LongCooldown, u.Cooldown, "1 CC on top of 2 099.999979 CC")
		e.clock.Advance(time.Microsecond)
		u, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(98 * cc)}, nil)
		require.NoError(t, err)
		require.Equal(t, "released", u.Status, "1 + 98 CC in the last 24 hours")
		requireSound(t, e)
	})
}

// TestConcurrentUnstakesShareTheWindow: unstakes racing each other are
// serialised by the lock on their position's account, so each sees the
// ones before it: of ten concurrent unstakes of 99 CC, exactly one is
// released.
func TestConcurrentUnstakesShareTheWindow(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(20 * cc), Reference: "a"}, nil)
		require.NoError(t, err)
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(990 * cc)}, nil)
		require.NoError(t, err)
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			statuses = map[string]int{}
		)
		for range 10 {
			wg.Go(func() {
				u, err := e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(99 * cc)}, nil)
				if err != nil {
					t.Errorf("unstake: %v", err)
					return
				}
				mu.Lock()
				statuses[u.Status]++
				mu.Unlock()
			})
		}
		wg.Wait()
		require.Equal(t, map[string]int{"released": 1, "cooling": 9}, statuses)
		requireSound(t, e)
	})
}

// TestMinimumMovement: a stake, an unstake or a withdrawal of less than
// 0.01 CC, or a deposit that would mint less, is a 422 naming the amount,
// and nothing is written.
func TestMinimumMovement(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(cc), Reference: "a"}, nil)
		require.NoError(t, err)
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(10 * cc)}, nil)
		require.NoError(t, err)
		before := auditCount(t, e)
		const dust = credit.MinMovement - 1 // 0.009999 CC
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(dust)}, nil)
		requireField(t, err, "amount_cc")
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(dust), DryRun: true}, nil)
		requireField(t, err, "amount_cc")
		_, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(dust)}, nil)
		requireField(t, err, "amount_cc")
		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(dust)}, nil)
		requireField(t, err, "amount_cc")
		// 0.0001 USD mints 0.00995 CC at 99.5.
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(100), Reference: "dust"}, nil)
		requireField(t, err, "amount_usd")
		require.Equal(t, before, auditCount(t, e), "nothing recorded")

		// 0.01 CC exactly is allowed, and so is a deposit minting it.
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(credit.MinMovement)}, nil)
		require.NoError(t, err)
		_, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(credit.MinMovement)}, nil)
		require.NoError(t, err)
		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(credit.MinMovement)}, nil)
		require.NoError(t, err)
		d, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(101), Reference: "small"}, nil)
		require.NoError(t, err)
		require.Equal(t, money.Micros(10_049), d.MintedCC, "0.000101 USD mints 0.010049 CC")
		requireSound(t, e)
	})
}

// TestBlankIdeaIsAFieldError: an idea id of only spaces is a 422 naming
// idea_id, for an unstake (it used to reach the journal and fail there as
// an empty stake, 400) as for a stake.
func TestBlankIdeaIsAFieldError(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		for _, id := range []string{"", " ", "\t \n"} {
			_, err := e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: id, AmountCC: units(cc)}, nil)
			requireField(t, err, "idea_id")
			_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: id, AmountCC: units(cc)}, nil)
			requireField(t, err, "idea_id")
		}
	})
}

// TestBreakerPausesExchangeAtOnce: from the reading that trips the breaker,
// every movement between USD and CC (deposits, withdrawals, CC payouts) is
// refused in the same serialised order as the movements, without waiting
// for the monitor; stakes and unstakes go on; a recovery reopens them.
func TestBreakerPausesExchangeAtOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(100 * cc), Reference: "r"}, nil)
		require.NoError(t, err)
		asset := createAsset(t, e)
		contribute(t, e, "ada", asset.ID, cc, t0)
		for _, p := range []money.Micros{100 * cc, 150 * cc} {
			e.clock.Advance(time.Minute)
			_, err := e.app.ObservePrice(ctx, p, "test", "oracle")
			require.NoError(t, err)
		}
		before := auditCount(t, e)
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r2"}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Equal(t, usecase.BreakerOpen, detail)
		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(100 * cc)}, nil)
		_, detail = kindOf(t, err)
		require.Equal(t, usecase.BreakerOpen, detail)
		_, err = e.app.CreateStoreDistribution(ctx, store.Distribution{ID: "d1", AssetID: asset.ID, Value: cc, CreatedAt: t0, PaidCC: true})
		_, detail = kindOf(t, err)
		require.Equal(t, usecase.BreakerOpen, detail)
		require.Equal(t, before, auditCount(t, e), "nothing moved")
		dup, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(100 * cc), Reference: "r"}, nil)
		require.NoError(t, err, "a repeated reference answers the original deposit: nothing is exchanged")
		require.True(t, dup.Duplicate)
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(10 * cc)}, nil)
		require.NoError(t, err, "a stake exchanges nothing")
		_, err = e.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: units(10 * cc)}, nil)
		require.NoError(t, err)
		s, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, usecase.ModeNormal, s.Mode, "the mode is the monitor's; the refusal is the breaker's own")

		// A mode that refuses the movement answers with its name first.
		_, err = e.app.SetMode(ctx, usecase.ModeReadOnly, "drill", "monitor")
		require.NoError(t, err)
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r3"}, nil)
		_, detail = kindOf(t, err)
		require.Equal(t, usecase.ModeReadOnly, detail)
		_, err = e.app.SetMode(ctx, usecase.ModeNormal, "drill over", "monitor")
		require.NoError(t, err)

		// Three clean readings 1 to 3 minutes after the trip: held, since
		// the breaker stays open 5 minutes (the trip time is read back from
		// the stored state), and deposits are still refused.
		for i := range 3 {
			e.clock.Advance(time.Minute)
			rd, err := e.app.ObservePrice(ctx, 100*cc, "test", "oracle")
			require.NoError(t, err)
			require.Equal(t, credit.Held, rd.Verdict)
			require.Equal(t, i+1, rd.State.Clean)
		}
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r4"}, nil)
		_, detail = kindOf(t, err)
		require.Equal(t, usecase.BreakerOpen, detail)
		// The next clean reading, 5 minutes after the trip, recovers.
		e.clock.Advance(2 * time.Minute)
		rd, err := e.app.ObservePrice(ctx, 100*cc, "test", "oracle")
		require.NoError(t, err)
		require.Equal(t, credit.Recovered, rd.Verdict)
		rate, err := e.app.ExchangeRate(ctx)
		require.NoError(t, err)
		require.False(t, rate.Breaker.Tripped)
		_, err = e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(10 * cc), Reference: "r4"}, nil)
		require.NoError(t, err)
		_, err = e.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: "ada", AmountCC: units(100 * cc)}, nil)
		require.NoError(t, err)
		requireSound(t, e)
	})
}

// TestBreakerWalkIsHeld is the sequence through the use case and
// the store, on both engines: 100, then 150 four times, the fifth used to
// recover at 150. The refused readings stay out of the average, the trip
// time survives in the stored state, and only a second source agreeing on
// the new level, after the minimum time, moves the rate there.
func TestBreakerWalkIsHeld(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine)
		ctx := context.Background()
		observe := func(p money.Micros, source string) usecase.Reading {
			t.Helper()
			e.clock.Advance(time.Minute)
			rd, err := e.app.ObservePrice(ctx, p, source, "oracle")
			require.NoError(t, err)
			return rd
		}
		var verdicts []credit.Verdict
		for _, p := range []money.Micros{100 * cc, 150 * cc, 150 * cc, 150 * cc, 150 * cc} {
			verdicts = append(verdicts, observe(p, "http").Verdict)
		}
		require.Equal(t, []credit.Verdict{credit.Accepted, credit.Tripped, credit.Held, credit.Held, credit.Held}, verdicts)
		for range 20 {
			require.Equal(t, credit.Held, observe(150*cc, "http").Verdict)
		}
		rate, err := e.app.ExchangeRate(ctx)
		require.NoError(t, err)
		require.True(t, rate.Breaker.Tripped)
		require.Equal(t, money.Micros(100*cc), rate.Quote.Mid)
		require.Equal(t, t0.Add(2*time.Minute), rate.Breaker.TrippedAt, "the trip time is kept with every reading")

		rd := observe(150*cc, "manual")
		require.Equal(t, credit.Recovered, rd.Verdict, "a second source confirms the new level")
		require.Equal(t, money.Micros(150*cc), rd.State.LastGood)
		require.Equal(t, credit.Accepted, observe(150*cc, "http").Verdict, "and the level is the average from then on")
		sequence(t, e.app)
		recs, err := e.app.AuditEntries(ctx, 10, 0)
		require.NoError(t, err)
		require.Equal(t, "oracle_recovered", recs[0].Entry.Kind)
		require.Equal(t, "manual", recs[0].Entry.Attrs["source"])
		require.Equal(t, "oracle_tripped", recs[1].Entry.Kind)
	})
}

// TestSupplyLimit: a deposit that would take the CC outstanding past an
// int64 of micro-CC is refused as "supply limit reached" (it used to wrap
// around and answer "backing", or fail in the database), and writes
// nothing.
func TestSupplyLimit(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		const usd = 1_000_000_000 * cc                         // the largest deposit a request may confirm
		const minted = money.Micros(1_000_000_000 * 99.5 * cc) // at the buy rate of 99.5
		n := int(math.MaxInt64 / minted)
		require.Equal(t, 92, n)
		for i := range n {
			_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(usd), Reference: fmt.Sprint("w-", i)}, nil)
			require.NoError(t, err, "deposit %d", i)
		}
		before := auditCount(t, e)
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: units(usd), Reference: "over"}, nil)
		k, detail := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Contains(t, detail, "supply limit reached")
		require.Equal(t, before, auditCount(t, e))
		s, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, money.Micros(n)*minted, s.OutstandingCC)
		requireSound(t, e)
	})
}

// TestOnlyItsCreatorStakesOnAPendingIdea: while an idea's values wait for
// an operator, its creator may still rewrite them, so nobody else may bet
// on them: another contributor's stake, dry run included, is a 409 that
// moves nothing. Its creator stakes, and so does anyone on an accepted
// idea.
func TestOnlyItsCreatorStakesOnAPendingIdea(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada", "bob")
		ctx := context.Background()
		for _, c := range []string{"ada", "bob"} {
			_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: c, AmountUSD: units(10 * cc), Reference: c}, nil)
			require.NoError(t, err)
		}
		for _, dry := range []bool{true, false} {
			_, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "bob", IdeaID: "idea-pending-ada", AmountCC: 10, DryRun: dry}, nil)
			k, detail := kindOf(t, err)
			require.Equal(t, fault.Conflict, k, "dry run %v", dry)
			require.Equal(t, "idea idea-pending-ada waits for an operator to accept its name and values: until then only its creator may stake on it", detail)
		}
		b, err := e.app.Balances(ctx, "bob")
		require.NoError(t, err)
		require.Equal(t, money.Micros(995*cc), b.Available, "nothing moved")
		require.Zero(t, b.Staked)

		own, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-pending-ada", AmountCC: 10}, nil)
		require.NoError(t, err, "its creator stakes on its own claims")
		require.Equal(t, money.Micros(10*cc), own.PositionCC)
		accepted, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "bob", IdeaID: "idea-1", AmountCC: 10}, nil)
		require.NoError(t, err, "anyone stakes on an accepted idea")
		require.Equal(t, money.Micros(10*cc), accepted.PositionCC)
	})
}

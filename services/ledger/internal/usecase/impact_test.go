package usecase_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// position is a contributor's position on idea-1 as Investments answers it.
func position(t *testing.T, e env, contributor string) store.Position {
	t.Helper()
	inv, err := e.app.Investments(context.Background(), contributor, usecase.Page{})
	require.NoError(t, err)
	for _, p := range inv.Positions {
		if p.IdeaID == "idea-1" {
			return p
		}
	}
	t.Fatalf("%s has no position on idea-1: %+v", contributor, inv.Positions)
	return store.Position{}
}

func usage(t *testing.T, e env, ref string, quantity money.Micros) usecase.ImpactResult {
	t.Helper()
	out, err := e.app.RecordImpact(context.Background(), usecase.ImpactCmd{IdeaID: "idea-1", Kind: impact.KindUsage, Reference: ref,
		Quantity: units(quantity), Unit: "requests", Evidence: "https://metrics.example/" + ref, Actor: "worker"}, nil)
	require.NoError(t, err)
	return out
}

// TestImpactAttributesAndPays: three contributors stake at different
// times; usage records grow the attribution of the positions active at
// each record; a revenue record of 100 USD mints 9 950 CC and pays it in
// proportion to the attribution earned, exactly, into the stakers'
// available balances; a replay changes nothing.
func TestImpactAttributesAndPays(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada", "bob", "cyd")
		ctx := context.Background()
		for _, c := range []string{"ada", "bob", "cyd"} {
			_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: c, AmountUSD: units(20 * cc), Reference: "r-" + c}, nil)
			require.NoError(t, err) // 1990 CC each
		}
		stake := func(c string, amount money.Micros) {
			_, err := e.app.Stake(ctx, usecase.StakeCmd{ContributorID: c, IdeaID: "idea-1", AmountCC: units(amount)}, nil)
			require.NoError(t, err)
		}
		stake("ada", 1000*cc)
		stake("bob", 500*cc)
		u := usage(t, e, "week-1", 10*cc)
		require.Equal(t, money.Micros(150*cc), u.Record.EarnedCC, "1 % of each stake per unit: 100 + 50")
		require.Equal(t, 2, u.Record.Positions)
		e.clock.Advance(time.Hour)
		stake("cyd", 100*cc) // after the first record: it earns only from the second
		usage(t, e, "week-2", 2*cc)

		require.Equal(t, money.Micros(120*cc), position(t, e, "ada").Earned)
		require.Equal(t, money.Micros(60*cc), position(t, e, "bob").Earned)
		require.Equal(t, money.Micros(2*cc), position(t, e, "cyd").Earned)

		before, err := e.app.Supply(ctx)
		require.NoError(t, err)
		rev, err := e.app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: "idea-1", Kind: impact.KindRevenue, Reference: "invoice-7",
			AmountUSD: 100, Evidence: "invoice 7, paid", Actor: "admin"}, nil)
		require.NoError(t, err)
		require.Equal(t, money.Micros(9950*cc), rev.Record.MintedCC, "minted at the buy rate, the spread kept")
		require.Equal(t, money.Micros(50*cc/100), rev.Record.FeeUSD)
		// 9 950 CC × 120/182, × 60/182, × 2/182: the one micro-CC left
		// over goes to the largest remainder (ada's).
		require.Equal(t, []usecase.ImpactPayout{
			{ContributorID: "ada", AmountCC: 6_560_439_561}, {ContributorID: "bob", AmountCC: 3_280_219_780},
			{ContributorID: "cyd", AmountCC: 109_340_659},
		}, rev.Payouts)
		var paid money.Micros
		for _, p := range rev.Payouts {
			paid += p.AmountCC
		}
		require.Equal(t, rev.Record.MintedCC, paid, "the parts sum to what was minted")

		after, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, before.OutstandingCC+9950*cc, after.OutstandingCC)
		require.Equal(t, before.TreasuryUSD+100*cc, after.TreasuryUSD)
		require.GreaterOrEqual(t, after.ReserveRatio, 1.0, "backed by construction")

		ada := position(t, e, "ada")
		require.Equal(t, money.Micros(1000*cc), ada.Amount, "the stake itself does not move")
		require.Equal(t, money.Micros(6_560_439_561), ada.Realized)
		require.Equal(t, 656.04, impact.GainPct(ada.Realized, ada.Amount))
		b, err := e.app.Balances(ctx, "ada")
		require.NoError(t, err)
		require.Equal(t, money.Micros(990*cc+6_560_439_561), b.Available, "paid into the available balance: withdrawable")

		again, err := e.app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: "idea-1", Kind: impact.KindRevenue, Reference: "invoice-7",
			AmountUSD: 100, Evidence: "invoice 7, paid", Actor: "admin"}, nil)
		require.NoError(t, err)
		require.True(t, again.Duplicate)
		require.Equal(t, rev.Record, again.Record)
		replayed, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, after.OutstandingCC, replayed.OutstandingCC, "a replayed record mints nothing")
		require.Equal(t, money.Micros(6_560_439_561), position(t, e, "ada").Realized)
		again2 := usage(t, e, "week-2", 2*cc)
		require.True(t, again2.Duplicate)
		require.Equal(t, money.Micros(120*cc), position(t, e, "ada").Earned, "a replayed usage record adds nothing")

		_, err = e.app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: "idea-1", Kind: impact.KindRevenue, Reference: "invoice-7",
			AmountUSD: 101, Evidence: "invoice 7, paid", Actor: "admin"}, nil)
		k, _ := kindOf(t, err)
		require.Equal(t, fault.Conflict, k, "the same reference with another amount")

		list, err := e.app.Impact(ctx, "idea-1", usecase.Page{})
		require.NoError(t, err)
		require.Equal(t, 3, list.Total)
		require.Equal(t, "invoice-7", list.Items[0].Reference, "newest first")
		require.Equal(t, store.ImpactTotals{UsageRecords: 2, RevenueRecords: 1,
			Usage:    []store.UnitQuantity{{Unit: "requests", Quantity: 12 * cc}},
			EarnedCC: 150*cc + 32*cc, RevenueUSD: 100 * cc, PaidCC: 9950 * cc, LastAt: list.Items[0].CreatedAt}, list.Totals)
		sequence(t, e.app)
		v, err := e.app.VerifyAudit(ctx, true)
		require.NoError(t, err)
		require.True(t, v.Valid(), "every record is in the log: %+v", v)
	})
}

// TestImpactRefuses: bad records are field errors naming every field at
// once; revenue for an idea nobody staked on records nothing.
func TestImpactRefuses(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: "idea-1", Kind: impact.KindUsage, AmountUSD: 3}, nil)
		k, _ := kindOf(t, err)
		require.Equal(t, fault.Invalid, k)
		fe, _ := fault.As(err)
		fields := map[string]bool{}
		for _, f := range fe.Fields {
			fields[f.Field] = true
		}
		require.Equal(t, map[string]bool{"reference": true, "evidence": true, "quantity": true, "unit": true, "amount_usd": true}, fields)

		_, err = e.app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: "idea-1", Kind: "views", Reference: "r", Evidence: "e"}, nil)
		k, _ = kindOf(t, err)
		require.Equal(t, fault.Invalid, k)

		_, err = e.app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: "nope", Kind: impact.KindUsage, Reference: "r", Evidence: "e",
			Quantity: 1, Unit: "u"}, nil)
		k, _ = kindOf(t, err)
		require.Equal(t, fault.NotFound, k)

		before, err := e.app.Supply(ctx)
		require.NoError(t, err)
		_, err = e.app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: "idea-1", Kind: impact.KindRevenue, Reference: "r", Evidence: "e",
			AmountUSD: 10}, nil)
		k, msg := kindOf(t, err)
		require.Equal(t, fault.Rejected, k)
		require.Contains(t, msg, "no position on idea idea-1 is active")
		after, err := e.app.Supply(ctx)
		require.NoError(t, err)
		require.Equal(t, before.TreasuryUSD, after.TreasuryUSD, "nothing entered the treasury")
		list, err := e.app.Impact(ctx, "idea-1", usecase.Page{})
		require.NoError(t, err)
		require.Zero(t, list.Total)
	})
}

// TestConcurrentUsageRecordsCountOnce: eight usage records with one
// reference at once (they take the mode lock shared only) make one
// record, add the attribution once, and all answer that record.
func TestConcurrentUsageRecordsCountOnce(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		e := setup(t, engine, "ada")
		ctx := context.Background()
		_, err := e.app.Deposit(ctx, usecase.DepositCmd{ContributorID: "ada", AmountUSD: 20, Reference: "r"}, nil)
		require.NoError(t, err)
		_, err = e.app.Stake(ctx, usecase.StakeCmd{ContributorID: "ada", IdeaID: "idea-1", AmountCC: 100}, nil)
		require.NoError(t, err)
		const n = 8
		ids := make([]string, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				out, err := e.app.RecordImpact(ctx, usecase.ImpactCmd{IdeaID: "idea-1", Kind: impact.KindUsage, Reference: "same",
					Quantity: 1, Unit: "requests", Evidence: "e", Actor: "worker"}, nil)
				require.NoError(t, err)
				ids[i] = out.Record.ID
			})
		}
		wg.Wait()
		for _, id := range ids {
			require.Equal(t, ids[0], id, "every answer is the one record")
		}
		require.Equal(t, money.Micros(cc), position(t, e, "ada").Earned, "100 × 0.01 × 1, once")
		list, err := e.app.Impact(ctx, "idea-1", usecase.Page{})
		require.NoError(t, err)
		require.Equal(t, 1, list.Total)
	})
}

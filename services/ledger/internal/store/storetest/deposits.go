package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runDeposits checks the records of deposits, cooling unstakes and pledges,
// and the unstakes of a rolling window (the cooldown tier).
func runDeposits(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("unstakes since a time, by contributor and idea", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		mint(t, h, 1, "ada", 100*cc)
		mint(t, h, 2, "bob", 100*cc)
		stake := func(seq int64, who, idea string, amount money.Micros) {
			apply(t, h, seq, who, idea, credit.Transfer(credit.KindStake, credit.Available(who), credit.Staked(who, idea), amount))
		}
		unstake := func(seq int64, who, idea string, amount money.Micros) {
			apply(t, h, seq, who, idea, credit.Transfer(credit.KindUnstake, credit.Staked(who, idea), credit.Available(who), amount))
		}
		stake(3, "ada", "i1", 50*cc)
		stake(4, "ada", "i2", 20*cc)
		stake(5, "bob", "i1", 30*cc)
		unstake(10, "ada", "i1", 5*cc) // at base+10s
		unstake(11, "ada", "i1", 7*cc)
		unstake(12, "ada", "i2", 3*cc)
		unstake(13, "bob", "i1", 11*cc)
		unstake(14, "ada", "i1", 1) // one micro-CC

		sum := func(who, idea string, since time.Time) money.Micros {
			t.Helper()
			got, err := h.read().credit.UnstakedSince(ctx, who, idea, since)
			require.NoError(t, err)
			return got
		}
		require.Equal(t, money.Micros(12*cc+1), sum("ada", "i1", base), "ada's unstakes from i1 only")
		require.Equal(t, money.Micros(7*cc+1), sum("ada", "i1", base.Add(10*time.Second)), "an unstake exactly at since is outside")
		require.Equal(t, money.Micros(7*cc+1), sum("ada", "i1", base.Add(10*time.Second+999*time.Microsecond)))
		require.Equal(t, money.Micros(1), sum("ada", "i1", base.Add(13*time.Second)))
		require.Zero(t, sum("ada", "i1", base.Add(14*time.Second)))
		require.Equal(t, money.Micros(3*cc), sum("ada", "i2", base), "the stake of 20 CC is not an unstake")
		require.Equal(t, money.Micros(11*cc), sum("bob", "i1", base))
		require.Zero(t, sum("bob", "i2", base), "none: zero")
		require.Zero(t, sum("nobody", "i1", base))
	})

	t.Run("a deposit is recorded once per reference and found by it", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		minted := mint(t, h, 1, "ada", 97*cc)
		d := store.Deposit{Reference: "stripe:pi_123", EntryID: minted.ID, ContributorID: "ada", AmountUSD: 100 * cc,
			MintedCC: 97 * cc, BuyRate: 970_000, FeeUSD: 3 * cc, CreatedAt: base.Add(123 * time.Microsecond)}
		insertDeposit := func(d store.Deposit) error {
			return h.write(func(r repos) error { return r.credit.InsertDeposit(ctx, d) })
		}
		require.NoError(t, insertDeposit(d))
		got, err := h.read().credit.DepositByReference(ctx, "stripe:pi_123")
		require.NoError(t, err)
		require.Equal(t, d, got)

		again := d
		again.AmountUSD, again.MintedCC, again.ContributorID = 5*cc, 5*cc, "bob"
		require.ErrorIs(t, insertDeposit(again), store.ErrAlreadyExists, "a reference is deposited once")
		got, err = h.read().credit.DepositByReference(ctx, "stripe:pi_123")
		require.NoError(t, err)
		require.Equal(t, d, got, "the first deposit stays")
		_, err = h.read().credit.DepositByReference(ctx, "stripe:other")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("cooling lots come due by their time, oldest first, until released once", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		// The lots' unstakes and releases are journal entries.
		unstake, release := mint(t, h, 1, "ada", cc), mint(t, h, 2, "ada", cc)
		lot := func(id, who, idea string, amount money.Micros, available time.Duration) store.CoolingLot {
			return store.CoolingLot{ID: id, ContributorID: who, IdeaID: idea, Amount: amount, AvailableAt: base.Add(available),
				EntryID: unstake.ID, CreatedAt: base.Add(time.Microsecond)}
		}
		l1 := lot("lot-1", "ada", "i:1", 2*cc, time.Hour)
		l2 := lot("lot-2", "ada", "i:2", cc, 30*time.Minute)
		l3 := lot("lot-3", "ada", "i:1", 3*cc, 2*time.Hour)
		l0 := lot("lot-0", "ada", "i:3", 5, time.Hour) // due with lot-1: the smaller id first
		other := lot("lot-9", "bob", "i:1", cc, 0)
		for _, l := range []store.CoolingLot{l1, l2, l3, l0, other} {
			require.NoError(t, h.write(func(r repos) error { return r.credit.InsertCooling(ctx, l) }))
		}
		due := func(who string, now time.Time) []store.CoolingLot {
			t.Helper()
			got, err := h.read().credit.DueCooling(ctx, who, now)
			require.NoError(t, err)
			return got
		}
		require.Empty(t, due("ada", base.Add(30*time.Minute-time.Microsecond)), "none available yet")
		require.Equal(t, []store.CoolingLot{l2, l0, l1}, due("ada", base.Add(time.Hour)),
			"available at or before now, by time then id; bob's are his")
		require.Equal(t, []store.CoolingLot{other}, due("bob", base))

		releaseLot := func(id string) error {
			return h.write(func(r repos) error { return r.credit.ReleaseCooling(ctx, id, release.ID) })
		}
		require.NoError(t, releaseLot("lot-2"))
		require.Equal(t, []store.CoolingLot{l0, l1, l3}, due("ada", base.Add(24*time.Hour)), "a released lot is no longer due")
		require.ErrorIs(t, releaseLot("lot-2"), store.ErrNotFound, "released once")
		require.ErrorIs(t, releaseLot("missing"), store.ErrNotFound)
	})

	t.Run("a pledge is recorded as given", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		p := store.Pledge{ID: "p-1", ContributorID: "ada", IdeaID: "i:1", MicroHours: 2_500_000, CCEquivalent: 1250 * cc,
			CreatedAt: base.Add(7 * time.Microsecond)}
		require.NoError(t, h.write(func(r repos) error { return r.credit.InsertPledge(ctx, p) }))
		var (
			got     store.Pledge
			created int64
		)
		require.NoError(t, h.DB.QueryRow(ctx, `SELECT id, contributor_id, idea_id, micro_hours, cc_equivalent, created_at
			FROM cc_pledges`).Scan(&got.ID, &got.ContributorID, &got.IdeaID, &got.MicroHours, &got.CCEquivalent, &created))
		got.CreatedAt = time.UnixMicro(created).UTC()
		require.Equal(t, p, got)
		err := h.write(func(r repos) error { return r.credit.InsertPledge(ctx, p) })
		require.Error(t, err, "a pledge id is recorded once")
	})
}

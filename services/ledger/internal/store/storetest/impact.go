package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runImpact checks the impact records (once per idea and reference, a
// page newest first, the totals) and the attribution of positions (the
// active stakes with what they earned, additions that lose nothing under
// concurrency, the cap, the positions answering it).
func runImpact(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()
	record := func(idea, ref, kind string, at time.Time) store.ImpactRecord {
		rec := store.ImpactRecord{ID: uuid.NewString(), IdeaID: idea, Reference: ref, Kind: kind, Evidence: "https://e.example/" + ref,
			Actor: "worker", Source: "api", CreatedAt: at.Truncate(time.Microsecond)}
		if kind == impact.KindUsage {
			rec.Quantity, rec.Unit, rec.EarnedCC, rec.Positions = 3*cc, "requests", 7*cc, 2
		} else {
			rec.AmountUSD, rec.MintedCC, rec.FeeUSD, rec.EntryID, rec.Positions = 10*cc, 995*cc, cc/20, uuid.NewString(), 1
		}
		return rec
	}

	t.Run("records once per idea and reference, listed newest first with their totals", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		recs := []store.ImpactRecord{
			record("idea-1", "w1", impact.KindUsage, base),
			record("idea-1", "w2", impact.KindUsage, base.Add(time.Second)),
			record("idea-1", "inv-1", impact.KindRevenue, base.Add(2*time.Second)),
			record("idea-2", "w1", impact.KindUsage, base),
		}
		recs[1].Unit = "installs"
		for _, rec := range recs {
			require.NoError(t, h.write(func(r repos) error { return r.impact.InsertImpact(ctx, rec) }))
		}
		dup := record("idea-1", "w1", impact.KindUsage, base.Add(time.Hour))
		err := h.write(func(r repos) error { return r.impact.InsertImpact(ctx, dup) })
		require.ErrorIs(t, err, store.ErrAlreadyExists, "the same reference for the same idea")

		got, err := h.read().impact.ImpactByReference(ctx, "idea-1", "inv-1")
		require.NoError(t, err)
		require.Equal(t, recs[2], got, "every field round-trips")
		_, err = h.read().impact.ImpactByReference(ctx, "idea-1", "nope")
		require.ErrorIs(t, err, store.ErrNotFound)

		page, total, err := h.read().impact.ListImpact(ctx, "idea-1", 2, 0)
		require.NoError(t, err)
		require.Equal(t, 3, total)
		require.Equal(t, []store.ImpactRecord{recs[2], recs[1]}, page, "newest first")
		page, _, err = h.read().impact.ListImpact(ctx, "idea-1", 2, 2)
		require.NoError(t, err)
		require.Equal(t, []store.ImpactRecord{recs[0]}, page)

		totals, err := h.read().impact.ImpactTotals(ctx, "idea-1")
		require.NoError(t, err)
		require.Equal(t, store.ImpactTotals{UsageRecords: 2, RevenueRecords: 1,
			Usage:    []store.UnitQuantity{{Unit: "installs", Quantity: 3 * cc}, {Unit: "requests", Quantity: 3 * cc}},
			EarnedCC: 14 * cc, RevenueUSD: 10 * cc, PaidCC: 995 * cc, LastAt: recs[2].CreatedAt}, totals)
		none, err := h.read().impact.ImpactTotals(ctx, "idea-3")
		require.NoError(t, err)
		require.Equal(t, store.ImpactTotals{Usage: []store.UnitQuantity{}}, none)
	})

	t.Run("active stakes carry their attribution; additions add up and are capped", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		for i, c := range []string{"bob", "ada", "cyd"} {
			mint(t, h, int64(3*i+1), c, 100*cc)
			apply(t, h, int64(3*i+2), c, "idea-1", credit.Transfer(credit.KindStake, credit.Available(c), credit.Staked(c, "idea-1"), money.Micros(10*(i+1))*cc))
		}
		// cyd leaves: no longer active.
		apply(t, h, 20, "cyd", "idea-1", credit.Transfer(credit.KindUnstake, credit.Staked("cyd", "idea-1"), credit.Cooling("cyd"), 30*cc))

		// Concurrent additions to one position lose nothing.
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				require.NoError(t, h.write(func(r repos) error {
					return r.impact.AddAttribution(ctx, "idea-1", []store.AttributionDelta{{ContributorID: "ada", Earned: cc, Realized: 2 * cc},
						{ContributorID: "bob", Earned: cc}})
				}))
			})
		}
		wg.Wait()
		stakes, n, err := h.read().impact.ActiveStakes(ctx, "idea-1", 10)
		require.NoError(t, err)
		require.Equal(t, 2, n)
		require.Equal(t, []store.Stake{{ContributorID: "ada", Amount: 20 * cc, Earned: 8 * cc, Realized: 16 * cc},
			{ContributorID: "bob", Amount: 10 * cc, Earned: 8 * cc}}, stakes, "by contributor id, the one that left not among them")
		page, n, err := h.read().impact.ActiveStakes(ctx, "idea-1", 1)
		require.NoError(t, err)
		require.Equal(t, 2, n, "the count is of all of them")
		require.Len(t, page, 1)

		require.NoError(t, h.write(func(r repos) error {
			return r.impact.AddAttribution(ctx, "idea-1", []store.AttributionDelta{{ContributorID: "ada", Earned: impact.MaxEarned}})
		}))
		stakes, _, err = h.read().impact.ActiveStakes(ctx, "idea-1", 10)
		require.NoError(t, err)
		require.Equal(t, impact.MaxEarned, stakes[0].Earned, "capped, not wrapped")

		ps, _, err := h.read().credit.Positions(ctx, "bob", 10, 0)
		require.NoError(t, err)
		require.Len(t, ps, 1)
		require.Equal(t, money.Micros(8*cc), ps[0].Earned, "the position answers what it earned")
		require.Zero(t, ps[0].Realized)
	})

	t.Run("notices count up, oldest first, and clear only when nothing was added since they were read", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		note := func(idea string, at time.Time) {
			require.NoError(t, h.write(func(r repos) error { return r.impact.NoteImpact(ctx, idea, at) }))
		}
		note("idea-2", base.Add(time.Second))
		note("idea-1", base)
		note("idea-1", base.Add(time.Hour))
		got, err := h.read().impact.ImpactNotices(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []store.ImpactNotice{{IdeaID: "idea-1", Pending: 2, QueuedAt: base}, {IdeaID: "idea-2", Pending: 1,
			QueuedAt: base.Add(time.Second)}}, got, "one row per idea, counting, keeping when it was first queued")
		first, err := h.read().impact.ImpactNotices(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, got[:1], first)
		one, err := h.read().impact.ImpactNoticeOf(ctx, "idea-2")
		require.NoError(t, err)
		require.Equal(t, got[1], one)
		_, err = h.read().impact.ImpactNoticeOf(ctx, "idea-3")
		require.ErrorIs(t, err, store.ErrNotFound)

		// A record noted after the notice was read: its push read older
		// totals, so the notice stays for the next one.
		note("idea-1", base.Add(2*time.Hour))
		var cleared bool
		require.NoError(t, h.write(func(r repos) (err error) { cleared, err = r.impact.ClearImpactNotice(ctx, got[0]); return err }))
		require.False(t, cleared)
		require.NoError(t, h.write(func(r repos) (err error) {
			cleared, err = r.impact.ClearImpactNotice(ctx, store.ImpactNotice{IdeaID: "idea-1", Pending: 3})
			return err
		}))
		require.True(t, cleared)
		left, err := h.read().impact.ImpactNotices(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, got[1:], left)
	})
}

package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// runContributions checks contributions: each grows its asset's total
// exactly, up to its ceiling, and they list in time order.
func runContributions(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("a contribution grows the total and round-trips", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		c := NewContribution("someone", a.ID, 1_234_567, base.Add(time.Second))
		c.Coherence = 800
		c.Metadata = map[string]any{"has_docs": true, "n": 2.0, "nested": map[string]any{"k": "v"}}
		require.NoError(t, add(h, c, base))

		s := h.read()
		got, err := s.attribution.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
		asset, err := s.attribution.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(1_234_567), asset.TotalCost)
		require.Equal(t, 1, asset.ContributionCount)
		who, err := s.identity.GetContributor(ctx, "someone")
		require.NoError(t, err)
		require.Equal(t, Implicit("someone", base), who)

		_, err = s.attribution.GetContribution(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("an asset's contribution count passes 32 bits", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		_, err := h.DB.Exec(ctx, `UPDATE assets SET contribution_count = 2147483647 WHERE id = $1`, a.ID)
		require.NoError(t, err)
		require.NoError(t, add(h, NewContribution("someone", a.ID, 5, base.Add(time.Second)), base))
		asset, err := h.read().attribution.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, 2147483648, asset.ContributionCount, "one past the largest 32-bit integer")
	})

	t.Run("a contribution names its contributor's handle when it registered one", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		ada := register(t, h, "ada", base)
		var added store.Contribution
		registered := NewContribution(ada.ID, a.ID, 5, base.Add(time.Second))
		require.NoError(t, h.write(func(r repos) error {
			var err error
			added, err = r.attribution.AddContribution(ctx, registered, Implicit(ada.ID, base))
			return err
		}))
		registered.ContributorHandle = "ada"
		require.Equal(t, registered, added, "the write answers the handle")
		who, err := h.read().identity.GetContributor(ctx, ada.ID)
		require.NoError(t, err)
		require.Equal(t, ada, who, "an existing contributor is left as it is (handle and trust level)")
		implicit := contribute(t, h, "someone", a.ID, 7, base.Add(2*time.Second))

		s := h.read().attribution
		got, err := s.GetContribution(ctx, registered.ID)
		require.NoError(t, err)
		require.Equal(t, registered, got)
		got, err = s.GetContribution(ctx, implicit.ID)
		require.NoError(t, err)
		require.Empty(t, got.ContributorHandle, "an implicit contributor has none")
		list, _, err := s.ListContributions(ctx, store.ContributionFilter{AssetID: a.ID, Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []store.Contribution{registered, implicit}, list)
		list, _, err = s.ListContributorContributions(ctx, ada.ID, 10, 0)
		require.NoError(t, err)
		require.Equal(t, []store.Contribution{registered}, list)
	})

	t.Run("a contribution to an unknown asset: not found, and its transaction writes nothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		err := add(h, NewContribution("ghost", "no-such-asset", 1, base), base)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = h.read().identity.GetContributor(ctx, "ghost")
		require.ErrorIs(t, err, store.ErrNotFound, "the contributor was rolled back")
		counts, err := h.read().attribution.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 0, counts["contributions"])
	})

	t.Run("the asset total has a ceiling and a refused contribution writes nothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		for range 9 {
			contribute(t, h, "big", a.ID, attribution.MaxAmount, base)
		}
		err := add(h, NewContribution("big", a.ID, 1, base), base)
		require.ErrorIs(t, err, store.ErrTotalTooLarge)
		got, err := h.read().attribution.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		require.Equal(t, attribution.MaxAssetTotal, got.TotalCost)
		require.Equal(t, 9, got.ContributionCount)
		counts, err := h.read().attribution.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 9, counts["contributions"])
	})

	t.Run("a queued contribution in a transaction's final batch: recorded with its handle, or refused having changed nothing", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		ada := register(t, h, "ada", base)
		// send sends c's queued statements as the transaction's final
		// batch (on Postgres its COMMIT rides with it, so whatever the
		// batch did is kept even when it answers a refusal).
		send := func(c *store.Contribution, who store.Contributor) error {
			return h.DB.Tx(ctx, func(q database.Querier) error {
				var b database.Batch
				if err := h.over(q).attribution.QueueAddContribution(&b, c, who); err != nil {
					return err
				}
				b.Final()
				return q.SendBatch(ctx, &b)
			})
		}
		c := NewContribution(ada.ID, a.ID, 5, base.Add(time.Second))
		require.NoError(t, send(&c, Implicit(ada.ID, base)))
		require.Equal(t, "ada", c.ContributorHandle, "the send fills in the handle")
		got, err := h.read().attribution.GetContribution(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, c, got)
		fresh := NewContribution("newcomer", a.ID, 7, base.Add(2*time.Second))
		require.NoError(t, send(&fresh, Implicit("newcomer", base)))
		require.Empty(t, fresh.ContributorHandle)
		who, err := h.read().identity.GetContributor(ctx, "newcomer")
		require.NoError(t, err)
		require.Equal(t, Implicit("newcomer", base), who, "the contributor is created with it")

		// Refused: an unknown asset, then a total past the ceiling.
		ghost := NewContribution("ghost", "no-such-asset", 1, base)
		require.ErrorIs(t, send(&ghost, Implicit("ghost", base)), store.ErrRefused)
		require.ErrorIs(t, h.read().attribution.ContributionRefusal(ctx, "no-such-asset"), store.ErrNotFound)
		_, err = h.read().identity.GetContributor(ctx, "ghost")
		require.ErrorIs(t, err, store.ErrNotFound, "no contributor for a refused contribution")
		full := createAsset(t, h, base)
		for range 9 {
			contribute(t, h, "big", full.ID, attribution.MaxAmount, base)
		}
		over := NewContribution("late", full.ID, 1, base)
		require.ErrorIs(t, send(&over, Implicit("late", base)), store.ErrRefused)
		require.ErrorIs(t, h.read().attribution.ContributionRefusal(ctx, full.ID), store.ErrTotalTooLarge)
		_, err = h.read().identity.GetContributor(ctx, "late")
		require.ErrorIs(t, err, store.ErrNotFound, "no contributor for a refused contribution")
		asset, err := h.read().attribution.GetAsset(ctx, full.ID)
		require.NoError(t, err)
		require.Equal(t, attribution.MaxAssetTotal, asset.TotalCost)
		require.Equal(t, 9, asset.ContributionCount)
		counts, err := h.read().attribution.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, 11, counts["contributions"], "two recorded, nine to fill the asset, none refused")
		// The contributors' kept total (migration 0027) counted the ones a
		// contribution created, not those a refused one would have.
		_, total, err := h.read().identity.ListContributors(ctx, store.ContributorFilter{Limit: 1})
		require.NoError(t, err)
		people, err := h.read().identity.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, people["contributors"], total)
		require.Equal(t, 3, total, "ada, the newcomer and big")
	})

	t.Run("contribution lists are ordered by time then id", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := createAsset(t, h, base)
		other := createAsset(t, h, base)
		late := contribute(t, h, "amy", a.ID, 1, base.Add(2*time.Second))
		early := contribute(t, h, "bob", a.ID, 2, base.Add(time.Second))
		same1 := contribute(t, h, "amy", a.ID, 3, base.Add(3*time.Second))
		same2 := contribute(t, h, "amy", other.ID, 4, base.Add(3*time.Second))
		if same2.ID < same1.ID {
			same1, same2 = same2, same1
		}

		s := h.read().attribution
		got, total, err := s.ListAssetContributions(ctx, a.ID, 500, 0)
		require.NoError(t, err)
		var wantAsset []string
		for _, c := range []store.Contribution{early, late, same1, same2} {
			if c.AssetID == a.ID {
				wantAsset = append(wantAsset, c.ID)
			}
		}
		require.Equal(t, wantAsset, contributionIDs(got))
		require.Equal(t, len(wantAsset), total)

		got, total, err = s.ListContributorContributions(ctx, "amy", 500, 0)
		require.NoError(t, err)
		require.Equal(t, []string{late.ID, same1.ID, same2.ID}, contributionIDs(got))
		require.Equal(t, 3, total)
		got, total, err = s.ListContributorContributions(ctx, "amy", 2, 1)
		require.NoError(t, err)
		require.Equal(t, []string{same1.ID, same2.ID}, contributionIDs(got), "paged")
		require.Equal(t, 3, total, "the whole list's count")
		got, total, err = s.ListAssetContributions(ctx, a.ID, 1, 0)
		require.NoError(t, err)
		require.Equal(t, wantAsset[:1], contributionIDs(got), "paged")
		require.Equal(t, len(wantAsset), total)

		_, _, err = s.ListAssetContributions(ctx, "missing", 500, 0)
		require.ErrorIs(t, err, store.ErrNotFound)
		_, _, err = s.ListContributorContributions(ctx, "missing", 500, 0)
		require.ErrorIs(t, err, store.ErrNotFound)

		empty := createAsset(t, h, base)
		got, total, err = s.ListAssetContributions(ctx, empty.ID, 500, 0)
		require.NoError(t, err)
		require.NotNil(t, got)
		require.Zero(t, total)
		require.Empty(t, got)

		// The general list: filters, an offset page, a keyset page.
		list := func(f store.ContributionFilter) ([]string, int) {
			t.Helper()
			got, total, err := s.ListContributions(ctx, f)
			require.NoError(t, err)
			require.NotNil(t, got)
			return contributionIDs(got), total
		}
		all := []string{early.ID, late.ID, same1.ID, same2.ID}
		ids, n := list(store.ContributionFilter{Limit: 10})
		require.Equal(t, all, ids)
		require.Equal(t, 4, n)
		var amysOnA []string
		for _, c := range []store.Contribution{early, late, same1, same2} {
			if c.ContributorID == "amy" && c.AssetID == a.ID {
				amysOnA = append(amysOnA, c.ID)
			}
		}
		ids, n = list(store.ContributionFilter{ContributorID: "amy", AssetID: a.ID, Limit: 10})
		require.Equal(t, amysOnA, ids, "both filters")
		require.Equal(t, len(amysOnA), n)
		ids, n = list(store.ContributionFilter{Limit: 2, Offset: 1})
		require.Equal(t, all[1:3], ids)
		require.Equal(t, 4, n)
		second := store.ContributionKey{CreatedAt: late.CreatedAt, ID: late.ID}
		ids, n = list(store.ContributionFilter{After: &second, Limit: 10, Offset: 1})
		require.Equal(t, all[2:], ids, "after the second: the rest, the offset ignored")
		require.Equal(t, 4, n)
		ids, n = list(store.ContributionFilter{ContributorID: "nobody", Limit: 10})
		require.Empty(t, ids)
		require.Zero(t, n)
	})

	t.Run("thousands of tenths add up exactly", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		a := createAsset(t, h, base)
		for range 2000 {
			contribute(t, h, "tenths", a.ID, 100_000, base) // 0.1
		}
		got, err := h.read().attribution.GetAsset(context.Background(), a.ID)
		require.NoError(t, err)
		require.Equal(t, money.Micros(200*money.Scale), got.TotalCost)
		require.Equal(t, 200.0, got.TotalCost.Float64())
	})
}

package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// runAssets checks assets: their round trip, their uniqueness and their
// list.
func runAssets(t *testing.T, newHarness func(t *testing.T) Harness) {
	t.Run("assets round-trip and start at zero", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		a := newAsset(attribution.TypeModel, base.Add(123*time.Microsecond))
		a.TotalCost, a.ContributionCount = 99, 7 // ignored on create
		create := func() error { return h.write(func(r repos) error { return r.attribution.CreateAsset(ctx, a) }) }
		require.NoError(t, create())
		got, err := h.read().attribution.GetAsset(ctx, a.ID)
		require.NoError(t, err)
		a.TotalCost, a.ContributionCount = 0, 0
		require.Equal(t, a, got)

		_, err = h.read().attribution.GetAsset(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		require.ErrorIs(t, create(), store.ErrAlreadyExists)
	})

	t.Run("assets list newest first, paged", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		ctx := context.Background()
		var ids []string
		for i := range 5 {
			ids = append(ids, createAsset(t, h, base.Add(time.Duration(i)*time.Second)).ID)
		}
		s := h.read().attribution
		page, total, err := s.ListAssets(ctx, 2, 0)
		require.NoError(t, err)
		require.Equal(t, []string{ids[4], ids[3]}, assetIDs(page))
		require.Equal(t, 5, total, "every asset, whatever the page")
		page, total, err = s.ListAssets(ctx, 2, 4)
		require.NoError(t, err)
		require.Equal(t, []string{ids[0]}, assetIDs(page))
		require.Equal(t, 5, total)
		page, total, err = s.ListAssets(ctx, 10, 5)
		require.NoError(t, err)
		require.Equal(t, 5, total, "past the end, the total still counts")
		require.NotNil(t, page, "an empty page is empty, not nil")
		require.Empty(t, page)
	})
}

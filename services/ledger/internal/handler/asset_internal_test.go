package handler

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// TestAssetCountsStayPositive: an asset's contribution count past 32 bits
// (the store's is 64-bit) answers the largest 32-bit count, not a
// negative one.
func TestAssetCountsStayPositive(t *testing.T) {
	t.Parallel()
	require.Equal(t, int32(7), assetProto(store.Asset{ContributionCount: 7}).GetContributionCount())
	require.Equal(t, int32(math.MaxInt32), assetProto(store.Asset{ContributionCount: math.MaxInt32 + 1}).GetContributionCount())
}

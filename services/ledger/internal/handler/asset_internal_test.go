package handler

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// TestAssetCountsPass32Bits: an asset's contribution count past 32 bits
// (the store's is 64-bit) is answered as it is, not clamped or negative.
func TestAssetCountsPass32Bits(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(7), assetProto(store.Asset{ContributionCount: 7}).GetContributionCount())
	require.Equal(t, int64(math.MaxInt32)+1, assetProto(store.Asset{ContributionCount: math.MaxInt32 + 1}).GetContributionCount())
}

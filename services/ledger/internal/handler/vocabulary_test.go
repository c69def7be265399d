package handler

import (
	"testing"

	"github.com/stretchr/testify/require"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// TestModesAreTheEnumsWords pins the use cases' economy modes to the API's
// EconomyMode enum: the same words in the same order (mildest first), each
// mapping there and back.
func TestModesAreTheEnumsWords(t *testing.T) {
	t.Parallel()
	require.Len(t, ledgerv1.EconomyMode_name, len(usecase.Modes)+1, "the enum has the modes and its zero")
	for i, m := range usecase.Modes {
		e := mode(m)
		require.Equal(t, ledgerv1.EconomyMode(i+1), e, "mode %s is the enum's value %d", m, i+1)
		require.Equal(t, m, wire.Word(ledgerv1.EconomyMode_name, e))
	}
	require.Equal(t, ledgerv1.EconomyMode_economy_mode_unspecified, mode("panic"))
}

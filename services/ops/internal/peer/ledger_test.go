package peer

import (
	"testing"

	"github.com/stretchr/testify/require"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// TestMonitorModesAreTheLedgersWords pins the monitor's modes to the
// ledger's EconomyMode enum, which the ledger's own tests pin to its use
// cases: the two services share one list of modes, in one order of
// severity, through the proto.
func TestMonitorModesAreTheLedgersWords(t *testing.T) {
	t.Parallel()
	require.Len(t, ledgerv1.EconomyMode_name, len(monitor.Modes)+1, "the enum has the modes and its zero")
	for i, m := range monitor.Modes {
		e := wire.Enum[ledgerv1.EconomyMode](ledgerv1.EconomyMode_value, m)
		require.Equal(t, ledgerv1.EconomyMode(i+1), e, "mode %s is the enum's value %d", m, i+1)
		require.Equal(t, m, wire.Word(ledgerv1.EconomyMode_name, e))
	}
}

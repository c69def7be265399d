package wire_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/wire"
)

func TestTime(t *testing.T) {
	t.Parallel()
	paris := time.FixedZone("CET", 3600)
	require.Equal(t, "2026-11-25T06:15:46.1234Z", wire.Time(time.Date(2026, 11, 25, 7, 15, 46, 123_400_000, paris)))
	require.Equal(t, "2026-11-25T06:15:46Z", wire.Time(time.Date(2026, 11, 25, 6, 15, 46, 0, time.UTC)))
}

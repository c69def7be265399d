package cursor

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	c := Encode("tasks", "1764060000000000", "0192f0c1-aaaa")
	require.NotContains(t, c, "tasks", "opaque")
	key, err := Decode("tasks", c, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"1764060000000000", "0192f0c1-aaaa"}, key)
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]string{
		"another list's": Encode("audit", "7"),
		"too few parts":  Encode("tasks", "1"),
		"not base64":     "%%%",
		"empty":          "",
	} {
		_, err := Decode("tasks", c, 2)
		fe, ok := fault.As(err)
		require.True(t, ok, name)
		require.Equal(t, fault.Invalid, fe.Kind, name)
		require.Equal(t, "cursor", fe.Fields[0].Field, name)
	}
}

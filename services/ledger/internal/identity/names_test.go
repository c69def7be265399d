package identity_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
)

// TestTokenNamesRefuseHiddenCharacters: a token's name is shown to every
// administrator; a right-to-left override or a zero-width character in it
// is refused with the character named.
func TestTokenNamesRefuseHiddenCharacters(t *testing.T) {
	t.Parallel()
	_, err := identity.ValidateTokenRequest("ci \u202Eresu-nimda", "viewer", "")
	require.EqualError(t, err, "invalid: name: must not contain invisible or bidirectional control characters (U+202E at byte 3)")
	_, err = identity.ValidateTokenRequest("bot\a", "viewer", "")
	require.ErrorContains(t, err, "name: must not contain control characters (U+0007 at byte 3)")
	ok, err := identity.ValidateTokenRequest("ビルド bot", "viewer", "")
	require.NoError(t, err)
	require.Equal(t, "ビルド bot", ok.Name)
}

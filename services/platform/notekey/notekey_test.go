package notekey

import (
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"
)

// TestParseDerivesTheVerifierKey: the verifier key derived from a signing
// key is the one note.GenerateKey made beside it, and verifies what the
// key signs; what is not an Ed25519 signing key is refused.
func TestParseDerivesTheVerifierKey(t *testing.T) {
	skey, vkey, err := note.GenerateKey(rand.Reader, "foundry-test")
	require.NoError(t, err)
	k, err := Parse(skey)
	require.NoError(t, err)
	require.Equal(t, vkey, k.VerifierKey)
	require.Len(t, k.Seed, 32)
	sig, err := k.Signer.Sign([]byte("msg"))
	require.NoError(t, err)
	require.True(t, k.Verifier.Verify([]byte("msg"), sig))
	require.False(t, k.Verifier.Verify([]byte("other"), sig))

	for _, bad := range []string{"", "not a key", vkey, "PRIVATE+KEY+n+00000000+AQ=="} {
		_, err := Parse(bad)
		require.ErrorIs(t, err, ErrNotEd25519, "%q", bad)
	}
}

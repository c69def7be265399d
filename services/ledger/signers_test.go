package ledger

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseSigners: spaces around ":" and "," are not part of an id or a
// secret, and a secret shorter than 32 bytes, which is no HMAC key, stops
// the startup.
func TestParseSigners(t *testing.T) {
	t.Parallel()
	secret := strings.Repeat("0123456789abcdef", 2)
	got, err := parseSigners(" ops : " + secret + " ,audit:\t" + secret + "x:y ")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"ops": secret, "audit": secret + "x:y"}, got)

	for v, want := range map[string]string{
		"s1:a":                               `FOUNDRY_SIGNERS: the secret of signer "s1" is 1 bytes; want at least 32`,
		"ops:" + secret[:31]:                 `FOUNDRY_SIGNERS: the secret of signer "ops" is 31 bytes; want at least 32`,
		"ops:   " + secret[:31] + " ":        `the secret of signer "ops" is 31 bytes`,
		"ops|x:" + secret:                    `FOUNDRY_SIGNERS: signer id "ops|x" must not contain |`,
		"ops :" + " ":                        "FOUNDRY_SIGNERS: want id:secret pairs", // a blank secret
		" : " + secret:                       "FOUNDRY_SIGNERS: want id:secret pairs",
		"ops:" + secret + ", ops :" + secret: `FOUNDRY_SIGNERS: signer "ops" appears twice`,
	} {
		_, err := parseSigners(v)
		require.ErrorContains(t, err, want, v)
		require.NotContains(t, err.Error(), secret[:31], "a secret is never printed")
	}
}

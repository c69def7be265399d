package identity_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// handleOK is the documented rule [a-z0-9_-]{3,40}, checked byte by byte
// (no regexp, no case folding, no trimming).
func handleOK(h string) bool {
	if len(h) < 3 || len(h) > 40 {
		return false
	}
	for _, c := range []byte(h) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// FuzzValidateHandle checks registration accepts exactly the handles of
// [a-z0-9_-]{3,40} and refuses the rest with a 422 on the handle field.
func FuzzValidateHandle(f *testing.F) {
	for _, s := range []string{"ada", "ab", "a_b-c", "Ada", " ada", "ada\n", strings.Repeat("a", 40), strings.Repeat("a", 41),
		"", "ａｄａ", "ad\x00a", "\xff\xfe\xfd", "ada\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, handle string) {
		err := identity.ValidateHandle(handle)
		if handleOK(handle) {
			require.NoError(t, err, "handle %q", handle)
			return
		}
		fe, ok := fault.As(err)
		require.True(t, ok, "handle %q: %v", handle, err)
		require.Equal(t, fault.Invalid, fe.Kind)
		require.Len(t, fe.Fields, 1)
		require.Equal(t, "handle", fe.Fields[0].Field)
	})
}

// FuzzNewToken checks a session token is 64 lowercase hex characters
// encoding exactly the random bytes drawn, that only its SHA-256 is kept,
// and that a short random source is an error, not a weak token.
func FuzzNewToken(f *testing.F) {
	f.Add(bytes.Repeat([]byte{0}, 32))
	f.Add(bytes.Repeat([]byte{0xff}, 40))
	f.Add([]byte("short"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, random []byte) {
		token, hash, err := identity.NewToken(bytes.NewReader(random))
		if len(random) < 32 {
			require.Error(t, err)
			require.Empty(t, token)
			return
		}
		require.NoError(t, err)
		require.Regexp(t, `^[0-9a-f]{64}$`, token)
		require.Equal(t, hex.EncodeToString(random[:32]), token)
		sum := sha256.Sum256([]byte(token))
		require.Equal(t, hex.EncodeToString(sum[:]), hash)
		require.Equal(t, hash, identity.HashToken(token))
		require.NotEqual(t, token, hash)
	})
}

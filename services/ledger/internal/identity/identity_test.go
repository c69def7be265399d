package identity_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestValidateHandle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		handle string
		ok     bool
	}{
		{"abc", true},
		{"a_b-c9", true},
		{strings.Repeat("x", 40), true},
		{"ab", false},
		{strings.Repeat("x", 41), false},
		{"Bad Handle!", false},
		{"ABC", false},
		{" abc", false},
		{"abc\n", false},
		{"ab.c", false},
		{"", false},
	}
	for _, tt := range tests {
		err := identity.ValidateHandle(tt.handle)
		if tt.ok {
			require.NoError(t, err, "handle %q", tt.handle)
			continue
		}
		require.Equal(t, fault.Invalid, fault.KindOf(err), "handle %q", tt.handle)
	}
}

func TestNewToken(t *testing.T) {
	t.Parallel()
	token, hash, err := identity.NewToken(nil)
	require.NoError(t, err)
	require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{64}$`), token)
	require.Equal(t, identity.HashToken(token), hash)
	require.NotEqual(t, token, hash)

	other, _, err := identity.NewToken(nil)
	require.NoError(t, err)
	require.NotEqual(t, token, other, "two draws differ")

	fixed, _, err := identity.NewToken(bytes.NewReader(make([]byte, 32)))
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("0", 64), fixed)

	_, _, err = identity.NewToken(bytes.NewReader(make([]byte, 3)))
	require.Error(t, err, "a short random source is an error, not a weak token")
}

func TestHashTokenIsSHA256Hex(t *testing.T) {
	t.Parallel()
	require.Equal(t, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", identity.HashToken("abc"))
}

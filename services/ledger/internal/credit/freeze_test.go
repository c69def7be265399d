package credit_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
)

func TestSignFreeze(t *testing.T) {
	t.Parallel()
	f := credit.SignedFreeze{SignerID: "ops", IssuedAt: "2026-01-02T15:04:05Z", Nonce: "00112233445566778899aabbccddeeff",
		Reason: "oracle compromised"}
	const secret = "0123456789abcdef0123456789abcdef"
	require.Equal(t, "ops|2026-01-02T15:04:05Z|00112233445566778899aabbccddeeff|oracle compromised", f.Message())
	// Cross-checked with: printf '%s' "$MESSAGE" | openssl dgst -sha256 -hmac "$SECRET".
	f.Signature = credit.SignFreeze(secret, f)
	require.Equal(t, "ad98e598358ec029ee88bdab8cd6477bbd547a89a8d0631b476b4a183b2507b2", f.Signature)

	require.True(t, credit.VerifyFreeze(secret, true, f))
	upper := f
	upper.Signature = strings.ToUpper(f.Signature)
	require.True(t, credit.VerifyFreeze(secret, true, upper), "hex digits in either case")
	require.False(t, credit.VerifyFreeze(secret, false, f), "an unknown signer")
	require.False(t, credit.VerifyFreeze(secret+"x", true, f))
	for name, change := range map[string]func(*credit.SignedFreeze){
		"signer":    func(f *credit.SignedFreeze) { f.SignerID = "op" },
		"time":      func(f *credit.SignedFreeze) { f.IssuedAt = "2026-01-02T15:04:06Z" },
		"nonce":     func(f *credit.SignedFreeze) { f.Nonce = "10112233445566778899aabbccddeeff" },
		"reason":    func(f *credit.SignedFreeze) { f.Reason += "!" },
		"truncated": func(f *credit.SignedFreeze) { f.Signature = f.Signature[:62] },
		"not hex":   func(f *credit.SignedFreeze) { f.Signature = "zz" + f.Signature[2:] },
		"reason's HMAC alone": func(f *credit.SignedFreeze) {
			f.Signature = credit.SignFreeze(secret, credit.SignedFreeze{Reason: f.Reason})
		},
	} {
		g := f
		change(&g)
		require.False(t, credit.VerifyFreeze(secret, true, g), name)
	}
}

func TestFreezeFields(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"2026-01-02T15:04:05Z", "2026-01-02T15:04:05.123456Z"} {
		_, err := credit.ParseIssuedAt(s)
		require.NoError(t, err, s)
	}
	for _, s := range []string{"", "2026-01-02T15:04:05+00:00", "2026-01-02T16:04:05+01:00", "2026-01-02 15:04:05Z",
		"2026-01-02T15:04:05", "2026-01-02", "1767366245", "2026-01-02T15:04:05z"} {
		_, err := credit.ParseIssuedAt(s)
		require.Error(t, err, s)
	}

	for _, s := range []string{strings.Repeat("a", 16), strings.Repeat("F", 64), "0123456789abcdefABCDEF"} {
		require.True(t, credit.ValidNonce(s), s)
	}
	for _, s := range []string{"", strings.Repeat("a", 15), strings.Repeat("a", 65), strings.Repeat("g", 16), "0123456789abcdef-", "0123456789abcdé"} {
		require.False(t, credit.ValidNonce(s), s)
	}

	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	for d, fresh := range map[time.Duration]bool{
		0: true, credit.FreezeWindow: true, -credit.FreezeWindow: true,
		credit.FreezeWindow + time.Microsecond: false, -credit.FreezeWindow - time.Microsecond: false, 24 * time.Hour: false,
	} {
		require.Equal(t, fresh, credit.FreshFreeze(now.Add(d), now), d)
	}
}

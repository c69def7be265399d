package credit

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/platform/wire"
)

// The signed emergency freeze (docs/ledger.md). A signature over the reason
// alone could be replayed forever by anyone who saw it once, and the reason
// is published (GET /api/incidents): the signature therefore covers who
// signs, when and a nonce too, the ledger refuses a time too far from its
// own, and remembers every nonce for longer than that.
const (
	// FreezeWindow is how far a freeze's issued_at may be from the
	// ledger's clock, either way.
	FreezeWindow = 5 * time.Minute
	// FreezeNonceTTL is how long a nonce is remembered after it was
	// issued: twice the window, so a replica whose clock is a little ahead
	// never forgets a nonce another replica would still accept by time.
	FreezeNonceTTL = 2 * FreezeWindow
	// MinSignerSecret is the shortest signer secret accepted, in bytes: an
	// HMAC key is as strong as it is long, and "s1:a" is not a key.
	MinSignerSecret = 32
	// MinNonceHex is the fewest hex digits a nonce has (8 random bytes).
	MinNonceHex = 16
	// MaxNonceHex is the most hex digits a nonce has (32 random bytes).
	MaxNonceHex = 64
)

// SignedFreeze is a freeze as a signer sends it.
type SignedFreeze struct {
	SignerID string
	// IssuedAt is when it was signed, in RFC 3339 UTC, exactly as sent
	// (the signature covers the text).
	IssuedAt string
	// Nonce is 16 to 64 hex digits, never used before by this signer.
	Nonce  string
	Reason string
	// Signature is hex HMAC-SHA256(secret, Message()).
	Signature string
}

// Message is what the signature covers: signer_id|issued_at|nonce|reason.
// It is unambiguous: a signer id holds no "|" (the configuration refuses
// one), the time and the nonce have fixed alphabets without it, and the
// reason comes last.
func (f SignedFreeze) Message() string {
	return f.SignerID + "|" + f.IssuedAt + "|" + f.Nonce + "|" + f.Reason
}

// SignFreeze is the signature a signer with secret sends with f: hex
// HMAC-SHA256(secret, f.Message()).
func SignFreeze(secret string, f SignedFreeze) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(f.Message()))
	return hex.EncodeToString(m.Sum(nil))
}

// VerifyFreeze reports whether f carries the signature of its signer, whose
// secret is secret (known: whether the signer exists). The comparison is
// constant-time, and an unknown signer is checked against a signature
// under the empty secret, so both refusals take as long.
func VerifyFreeze(secret string, known bool, f SignedFreeze) bool {
	got, err := hex.DecodeString(strings.ToLower(f.Signature))
	want, _ := hex.DecodeString(SignFreeze(secret, f))
	return hmac.Equal(got, want) && known && err == nil
}

// ParseIssuedAt reads a freeze's issued_at: RFC 3339 in UTC ("Z"), with or
// without fractional seconds.
func ParseIssuedAt(s string) (time.Time, error) {
	t, err := wire.ParseTime(s)
	if err != nil || !strings.HasSuffix(s, "Z") {
		return time.Time{}, errors.New("must be an RFC 3339 time in UTC, such as 2026-01-02T15:04:05Z")
	}
	return t, nil
}

// ValidNonce reports whether s is 16 to 64 hex digits.
func ValidNonce(s string) bool {
	if len(s) < MinNonceHex || len(s) > MaxNonceHex {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// FreshFreeze reports whether a freeze issued at issued may be accepted at
// now: at most FreezeWindow before or after.
func FreshFreeze(issued, now time.Time) bool {
	d := now.Sub(issued)
	return d <= FreezeWindow && d >= -FreezeWindow
}

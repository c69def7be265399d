// Package identity holds the onboarding rules: what a handle may be, how
// session tokens are made, and how they are kept (only as a hash).
package identity

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"regexp"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// TrustTOFU is the trust level of a handle claimed on first use.
const TrustTOFU = "tofu"

// HandleTaken is the machine-readable detail of a duplicate registration.
const HandleTaken = "handle_taken"

// tokenBytes is the entropy of a session token: 256 bits, so an unsalted
// SHA-256 of it is as strong as the token itself.
const tokenBytes = 32

var handlePattern = regexp.MustCompile(`^[a-z0-9_-]{3,40}$`)

// ValidateHandle checks a handle against [a-z0-9_-]{3,40}, exactly: no case
// folding, no trimming.
func ValidateHandle(handle string) error {
	if !handlePattern.MatchString(handle) {
		return fault.Validation(fault.Field("handle", "must match [a-z0-9_-]{3,40}"))
	}
	return nil
}

// NewToken draws a session token (64 lowercase hex characters) from random
// and returns it with its hash; only the hash is ever stored.
func NewToken(random io.Reader) (token, hash string, err error) {
	if random == nil {
		random = rand.Reader
	}
	b := make([]byte, tokenBytes)
	if _, err := io.ReadFull(random, b); err != nil {
		return "", "", fmt.Errorf("draw session token: %w", err)
	}
	token = hex.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken is the stored form of a token: hex SHA-256.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Package identity holds the onboarding rules: what a handle may be, how
// session tokens are made, and how they are kept (only as a hash).
package identity

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/textrule"
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

// HashToken is the stored form of a token: authz.HashToken, the one the
// edge verifier looks tokens up by, so what the ledger stores and what it is
// asked for cannot drift apart.
func HashToken(token string) string { return authz.HashToken(token) }

// APITokenPrefix starts every API token, so a leaked one is recognisable
// (secret scanners, logs) and never mistaken for a session token.
const APITokenPrefix = "fdt_"

// NewAPIToken draws an API token ("fdt_" and 64 lowercase hex characters)
// and returns it with its hash.
func NewAPIToken(random io.Reader) (token, hash string, err error) {
	t, _, err := NewToken(random)
	if err != nil {
		return "", "", err
	}
	token = APITokenPrefix + t
	return token, HashToken(token), nil
}

// TokenRoles are the roles an API token may hold. Contributor is not one:
// a contributor's credential is its session.
var TokenRoles = []string{"viewer", "worker", "operator", "admin"}

// Limits of an API token request.
const (
	maxTokenName = 100
	// MaxTokenTTL is the longest lifetime a token may be given: ten years.
	MaxTokenTTL = 10 * 365 * 24 * time.Hour
)

// TokenRequest is a validated request for an API token.
type TokenRequest struct {
	Name string
	Role string
	// TTL is zero for a token that never expires.
	TTL time.Duration
}

// ValidateTokenRequest checks a token's name (1-100 characters, not
// blank, no control characters), role (TokenRoles) and lifetime (a Go
// duration such as "720h" or whole days such as "30d"; empty for none),
// reporting every bad field at once.
func ValidateTokenRequest(name, role, ttl string) (TokenRequest, error) {
	var errs []fault.FieldError
	switch {
	case strings.TrimSpace(name) == "":
		errs = append(errs, fault.Field("name", "is required"))
	case utf8.RuneCountInString(name) > maxTokenName:
		errs = append(errs, fault.Field("name", "must be at most %d characters", maxTokenName))
	default:
		if err := textrule.Check(name, false); err != nil {
			errs = append(errs, fault.Field("name", "%s", err.Error()))
		}
	}
	if !slices.Contains(TokenRoles, role) {
		errs = append(errs, fault.Field("role", "must be one of %s", strings.Join(TokenRoles, ", ")))
	}
	d, err := parseTTL(ttl)
	if err != nil {
		errs = append(errs, fault.Field("ttl", "%s", err.Error()))
	}
	if len(errs) > 0 {
		return TokenRequest{}, fault.Validation(errs...)
	}
	return TokenRequest{Name: name, Role: role, TTL: d}, nil
}

// parseTTL reads a lifetime: "" (none), a Go duration, or whole days "Nd".
func parseTTL(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n <= 0 || n > int(MaxTokenTTL/(24*time.Hour)) {
			return 0, fmt.Errorf("must be a duration such as 720h or 30d, at most %d days", int(MaxTokenTTL/(24*time.Hour)))
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, fmt.Errorf("must be a duration such as 720h or 30d, at most %d days", int(MaxTokenTTL/(24*time.Hour)))
		}
	}
	switch {
	case d < time.Minute:
		return 0, errors.New("must be at least 1m")
	case d > MaxTokenTTL:
		return 0, fmt.Errorf("must be at most %d days", int(MaxTokenTTL/(24*time.Hour)))
	}
	return d, nil
}

// DefaultSessionTTL is a session's lifetime when none is configured: 30
// days, renewed as the session is used.
const DefaultSessionTTL = 30 * 24 * time.Hour

// RenewSession is the sliding lifetime of a session: used at now, a
// session whose expiry is more than a step older than now+ttl gets
// now+ttl. The step (a tenth of the lifetime, at most an hour) keeps a
// busy session from writing its row on every request. ok is false when
// nothing changes (the session does not expire, or was renewed lately).
func RenewSession(expiresAt, now time.Time, ttl time.Duration) (time.Time, bool) {
	if ttl <= 0 || expiresAt.IsZero() {
		return expiresAt, false
	}
	step := min(ttl/10, time.Hour)
	next := now.Add(ttl)
	if next.Sub(expiresAt) < step {
		return expiresAt, false
	}
	return next, true
}

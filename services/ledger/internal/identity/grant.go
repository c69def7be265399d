package identity

import (
	"slices"
	"time"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// Granter is the credential that asks for or revokes an API token: the
// administrator key (TokenID "") or an API token of Role that expires at
// ExpiresAt (zero: never).
type Granter struct {
	TokenID   string
	Role      string
	ExpiresAt time.Time
}

// CheckGrant is the rule that keeps a token within its grant: a token
// creates only tokens of a role at most its own, expiring no later than
// itself. Without one, a 2-minute admin token minted a never-expiring
// admin token, outliving what it was given. A request naming no lifetime
// from a token that expires gets its creator's expiry; one naming a later
// expiry is refused. The administrator key, the bootstrap credential,
// grants anything. It returns the new token's expiry (zero: never).
func CheckGrant(g Granter, req TokenRequest, now time.Time) (time.Time, error) {
	var expires time.Time
	if req.TTL > 0 {
		expires = now.Add(req.TTL)
	}
	if g.TokenID == "" {
		return expires, nil
	}
	if slices.Index(TokenRoles, req.Role) > slices.Index(TokenRoles, g.Role) {
		return time.Time{}, fault.New(fault.Forbidden, "a token of role %s creates only tokens of a role at most its own, not %s", g.Role, req.Role)
	}
	if g.ExpiresAt.IsZero() {
		return expires, nil
	}
	switch {
	case expires.IsZero():
		return g.ExpiresAt, nil
	case expires.After(g.ExpiresAt):
		return time.Time{}, fault.New(fault.Forbidden, "a token expiring at %s creates only tokens expiring no later: give a ttl of at most %s",
			g.ExpiresAt.UTC().Format(time.RFC3339), g.ExpiresAt.Sub(now).Truncate(time.Second))
	}
	return expires, nil
}

// CheckRevoke is who may revoke an API token: the administrator key any,
// a token itself and the tokens it created. A token revoking another
// administrator's token would let a short-lived grant undo a longer one.
func CheckRevoke(g Granter, tokenID, createdBy string) error {
	if g.TokenID == "" || g.TokenID == tokenID || g.TokenID == createdBy {
		return nil
	}
	return fault.New(fault.Forbidden, "a token revokes only itself and the tokens it created; the administrator key revokes any")
}

package usecase

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Authenticate resolves a Bearer token's hash to its principal: a
// session's contributor or an API token's role. It is AuthenticateMany of
// the one token, presented now: a session in use slides its expiry forward
// (identity.RenewSession), in a write only when the renewal is due.
// Unknown, expired and revoked credentials are an Invalid principal saying
// which, never an error; a missing hash is one (a fault.Validation naming
// token_hash).
func (a *App) Authenticate(ctx context.Context, tokenHash string) (authz.Principal, error) {
	if err := required("token_hash", tokenHash); err != nil {
		return authz.Principal{}, err
	}
	ps, err := a.AuthenticateMany(ctx, []TokenCheck{{Hash: tokenHash, Used: true}})
	if err != nil {
		return authz.Principal{}, err
	}
	return ps[0], nil
}

// MaxAuthenticateMany bounds the tokens of one AuthenticateMany.
const MaxAuthenticateMany = 1000

// TokenCheck is one token AuthenticateMany resolves.
type TokenCheck struct {
	// Hash is the token's hex SHA-256.
	Hash string
	// Used says the token was presented since it was last resolved: only
	// then does a session's expiry slide (the verifier refreshing a token
	// its client is using is not a use).
	Used bool
}

// AuthenticateMany resolves each token as Authenticate does, in order: the
// sessions and API tokens of all of them in one trip, then, when a used
// session's renewal is due, those renewals in one transaction (at most
// once an hour per session). Every hash must be given, and at most
// MaxAuthenticateMany of them (a fault.Validation naming each bad one).
func (a *App) AuthenticateMany(ctx context.Context, checks []TokenCheck) ([]authz.Principal, error) {
	var errs []fault.FieldError
	if len(checks) > MaxAuthenticateMany {
		errs = append(errs, fault.Field("tokens", "must be at most %d", MaxAuthenticateMany))
	}
	hashes := make([]string, 0, len(checks))
	for k, c := range checks {
		if c.Hash == "" {
			errs = append(errs, fault.Field(fmt.Sprintf("tokens[%d].token_hash", k), "is required"))
		}
		hashes = append(hashes, c.Hash)
	}
	if len(errs) > 0 {
		return nil, fault.Validation(errs...)
	}
	now := a.now()
	r := a.read()
	sessions, tokens := map[string]store.Session{}, map[string]store.APIToken{}
	var b database.Batch
	r.Identity.QueueCredentials(&b, hashes, sessions, tokens)
	if err := r.Send(ctx, &b); err != nil {
		return nil, wrap("find sessions and tokens", err)
	}
	out := make([]authz.Principal, len(checks))
	renewals := map[string]time.Time{} // by hash, to the new expiry
	for k, c := range checks {
		if sess, ok := sessions[c.Hash]; ok {
			p, next, renew := a.sessionPrincipal(sess, now)
			out[k] = p
			if renew && c.Used {
				renewals[c.Hash] = next
			} else if renew {
				out[k].ExpiresAt = sess.ExpiresAt // not renewed: as stored
			}
			continue
		}
		t, ok := tokens[c.Hash]
		if !ok {
			out[k] = authz.Principal{Kind: authz.Invalid, Problem: "invalid token"}
			continue
		}
		p, err := tokenPrincipal(t, now)
		if err != nil {
			return nil, err
		}
		out[k] = p
	}
	if len(renewals) == 0 {
		return out, nil
	}
	gone := map[string]bool{}
	err := a.tx(ctx, func(r Repos) error {
		clear(gone)
		for hash, next := range renewals {
			err := r.Identity.ExtendSession(ctx, hash, next)
			if errors.Is(err, store.ErrNotFound) { // logged out meanwhile
				gone[hash] = true
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, wrap("renew sessions", err)
	}
	for k, c := range checks {
		if gone[c.Hash] {
			out[k] = authz.Principal{Kind: authz.Invalid, Problem: "invalid token"}
		}
	}
	return out, nil
}

// sessionPrincipal is a session's principal at now: Invalid once it
// expired; otherwise its contributor's, with the expiry a renewal due now
// would give it (renew says whether one is due, and next is that expiry).
func (a *App) sessionPrincipal(sess store.Session, now time.Time) (p authz.Principal, next time.Time, renew bool) {
	if !sess.ExpiresAt.IsZero() && !now.Before(sess.ExpiresAt) {
		return authz.Principal{Kind: authz.Invalid, Problem: "session expired"}, time.Time{}, false
	}
	next, renew = identity.RenewSession(sess.ExpiresAt, now, a.cfg.SessionTTL)
	return authz.Principal{Kind: authz.Session, Role: authz.Contributor, ID: sess.TokenHash,
		ContributorID: sess.Contributor.ID, Name: sess.Contributor.Handle, ExpiresAt: next}, next, renew
}

// tokenPrincipal is an API token's principal at now: Invalid once revoked
// or expired.
func tokenPrincipal(t store.APIToken, now time.Time) (authz.Principal, error) {
	switch {
	case !t.RevokedAt.IsZero():
		return authz.Principal{Kind: authz.Invalid, Problem: "token revoked"}, nil
	case !t.ExpiresAt.IsZero() && !now.Before(t.ExpiresAt):
		return authz.Principal{Kind: authz.Invalid, Problem: "token expired"}, nil
	}
	role, ok := authz.ParseRole(t.Role)
	if !ok {
		return authz.Principal{}, fmt.Errorf("token %s has unknown role %q", t.ID, t.Role)
	}
	return authz.Principal{Kind: authz.Token, Role: role, ID: t.ID, Name: t.Name, ExpiresAt: t.ExpiresAt}, nil
}

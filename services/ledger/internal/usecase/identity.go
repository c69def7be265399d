package usecase

import (
	"context"
	"io"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Register creates a contributor with a handle and its first session in
// one transaction, so a contributor never exists without the session its
// registration answered with. store.ErrAlreadyExists when the handle is
// taken: the unique index on handle decides races, so of two concurrent
// claims one wins and the other gets the error. The handle is checked
// first (identity.ValidateHandle): exactly as the request sent it.
func (a *App) Register(ctx context.Context, c store.Contributor, s store.Session) error {
	if err := identity.ValidateHandle(c.Handle); err != nil {
		return err
	}
	return a.tx(ctx, func(r Repos) error { return r.Identity.Register(ctx, c, s) })
}

// Contributor returns a contributor. store.ErrNotFound when there is none.
func (a *App) Contributor(ctx context.Context, id string) (store.Contributor, error) {
	return a.read().Identity.GetContributor(ctx, id)
}

// Counts returns row counts by table of the whole ledger schema (identity,
// attribution, the CC journal, the audit chain and incidents), for storage
// reports.
func (a *App) Counts(ctx context.Context) (map[string]int, error) {
	r := a.read()
	out := map[string]int{}
	for _, counts := range []func(context.Context) (map[string]int, error){
		r.Identity.Counts, r.Attribution.Counts, r.Credit.Counts, r.Audit.Counts,
	} {
		n, err := counts(ctx)
		if err != nil {
			return nil, wrap("count rows", err)
		}
		for table, rows := range n {
			out[table] = rows
		}
	}
	return out, nil
}

// Logout revokes a session at once. store.ErrNotFound when it is gone.
func (a *App) Logout(ctx context.Context, tokenHash string) error {
	return a.tx(ctx, func(r Repos) error { return r.Identity.DeleteSession(ctx, tokenHash) })
}

// CreateTokenCmd asks for an API token, as the request named it.
type CreateTokenCmd struct {
	Name string
	// Role is one of identity.TokenRoles.
	Role string
	// TTL is the token's lifetime ("720h", "30d"); empty for none.
	TTL string
	// By is the credential asking (identity.CheckGrant): the token's
	// lifetime and role are bounded by it.
	By identity.Granter
}

// CreateToken issues an API token drawn from random (crypto/rand when
// nil); the answer is the only place the token itself appears. Every bad
// field of the command is named at once (identity.ValidateTokenRequest).
func (a *App) CreateToken(ctx context.Context, cmd CreateTokenCmd, random io.Reader) (store.APIToken, string, error) {
	req, err := identity.ValidateTokenRequest(cmd.Name, cmd.Role, cmd.TTL)
	if err != nil {
		return store.APIToken{}, "", err
	}
	token, hash, err := identity.NewAPIToken(random)
	if err != nil {
		return store.APIToken{}, "", err
	}
	now := a.now()
	expires, err := identity.CheckGrant(cmd.By, req, now)
	if err != nil {
		return store.APIToken{}, "", err
	}
	t := store.APIToken{ID: a.cfg.NewID(), TokenHash: hash, Name: req.Name, Role: req.Role, CreatedAt: now, ExpiresAt: expires,
		CreatedBy: cmd.By.TokenID}
	if err := a.tx(ctx, func(r Repos) error { return r.Identity.CreateToken(ctx, t) }); err != nil {
		return store.APIToken{}, "", wrap("create token", err)
	}
	return t, token, nil
}

// ListTokens lists every API token, newest first.
func (a *App) ListTokens(ctx context.Context) ([]store.APIToken, error) {
	ts, err := a.read().Identity.ListTokens(ctx)
	return ts, wrap("list tokens", err)
}

// RevokeToken revokes an API token, when by may (identity.CheckRevoke);
// revoking it again answers it as it is. store.ErrNotFound for an unknown
// id.
func (a *App) RevokeToken(ctx context.Context, by identity.Granter, id string) (store.APIToken, error) {
	if err := required("id", id); err != nil {
		return store.APIToken{}, err
	}
	var t store.APIToken
	err := a.tx(ctx, func(r Repos) error {
		cur, err := r.Identity.GetToken(ctx, id)
		if err != nil {
			return err
		}
		if err := identity.CheckRevoke(by, cur.ID, cur.CreatedBy); err != nil {
			return err
		}
		if t, err = r.Identity.RevokeToken(ctx, id, a.now()); err != nil {
			return err
		}
		t.CreatedBy, t.CreatorRevokedAt = cur.CreatedBy, cur.CreatorRevokedAt
		return nil
	})
	return t, err
}

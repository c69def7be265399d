package handler

import (
	"context"
	"errors"
	"net/http"

	"google.golang.org/protobuf/types/known/wrapperspb"

	ledgerinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// Authenticate implements LedgerInternalService.Authenticate: the gateway's
// (and any service's) token look-up. A credential that does not verify is
// Unauthenticated with the reason.
func (h *Handler) Authenticate(ctx context.Context, req *ledgerinternalv1.AuthenticateRequest) (*ledgerinternalv1.AuthenticateResponse, error) {
	p, err := h.app.Authenticate(ctx, req.GetTokenHash())
	if err != nil {
		return nil, err
	}
	if p.Kind == authz.Invalid {
		return nil, fault.New(fault.Unauthenticated, "%s", p.Problem)
	}
	return p.AuthenticateResponse(), nil
}

// AuthenticateMany implements LedgerInternalService.AuthenticateMany: a
// verifier's refresh of the tokens its clients are using, each answered
// as Authenticate answers it (a principal, or the reason it has none).
func (h *Handler) AuthenticateMany(ctx context.Context, req *ledgerinternalv1.AuthenticateManyRequest) (*ledgerinternalv1.AuthenticateManyResponse, error) {
	checks := make([]usecase.TokenCheck, len(req.GetTokens()))
	for k, t := range req.GetTokens() {
		checks[k] = usecase.TokenCheck{Hash: t.GetTokenHash(), Used: t.GetUsed()}
	}
	ps, err := h.app.AuthenticateMany(ctx, checks)
	if err != nil {
		return nil, err
	}
	out := &ledgerinternalv1.AuthenticateManyResponse{Verdicts: make([]*ledgerinternalv1.TokenVerdict, len(ps))}
	for k, p := range ps {
		if p.Kind == authz.Invalid {
			out.Verdicts[k] = &ledgerinternalv1.TokenVerdict{Problem: p.Problem}
			continue
		}
		out.Verdicts[k] = &ledgerinternalv1.TokenVerdict{Principal: p.AuthenticateResponse()}
	}
	return out, nil
}

// Logout implements LedgerService.Logout: the request's session stops
// working at once on every replica (the edge caches a verified token for
// at most authz.DefaultCacheTTL).
func (h *Handler) Logout(ctx context.Context, _ *ledgerv1.LogoutRequest) (*ledgerv1.LogoutResponse, error) {
	p, err := session(ctx)
	if err != nil {
		return nil, err
	}
	err = h.app.Logout(ctx, p.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fault.New(fault.Unauthenticated, "invalid token")
	}
	if err != nil {
		return nil, err
	}
	return &ledgerv1.LogoutResponse{Revoked: true}, nil
}

// GetPrincipal implements LedgerService.GetPrincipal ("who am I").
func (h *Handler) GetPrincipal(ctx context.Context, _ *ledgerv1.GetPrincipalRequest) (*ledgerv1.GetPrincipalResponse, error) {
	p := authz.FromContext(ctx)
	if p.Kind == authz.Invalid {
		return nil, fault.New(fault.Unauthenticated, "%s", p.Problem)
	}
	resp := &ledgerv1.GetPrincipalResponse{Kind: string(p.Kind), Role: authz.RoleName(p.Role), PublicReads: h.publicReads}
	switch p.Kind {
	case authz.Session:
		resp.ContributorId, resp.Handle = wrapperspb.String(p.ContributorID), wrapperspb.String(p.Name)
	case authz.Token:
		resp.TokenId, resp.Name = wrapperspb.String(p.ID), wrapperspb.String(p.Name)
	}
	if !p.ExpiresAt.IsZero() {
		resp.ExpiresAt = wrapperspb.String(wire.Time(p.ExpiresAt))
	}
	return resp, nil
}

// CreateToken implements LedgerService.CreateToken (administrator).
func (h *Handler) CreateToken(ctx context.Context, req *ledgerv1.CreateTokenRequest) (*ledgerv1.CreateTokenResponse, error) {
	t, token, err := h.app.CreateToken(ctx, usecase.CreateTokenCmd{Name: req.GetName(), Role: req.GetRole(), TTL: req.GetTtl(),
		By: granter(ctx)}, h.random)
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &ledgerv1.CreateTokenResponse{ApiToken: tokenProto(t), Token: token}, nil
}

// ListTokens implements LedgerService.ListTokens (administrator).
func (h *Handler) ListTokens(ctx context.Context, _ *ledgerv1.ListTokensRequest) (*ledgerv1.ListTokensResponse, error) {
	ts, err := h.app.ListTokens(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*ledgerv1.APIToken, len(ts))
	for i, t := range ts {
		out[i] = tokenProto(t)
	}
	return &ledgerv1.ListTokensResponse{Tokens: out}, nil
}

// RevokeToken implements LedgerService.RevokeToken (administrator).
func (h *Handler) RevokeToken(ctx context.Context, req *ledgerv1.RevokeTokenRequest) (*ledgerv1.RevokeTokenResponse, error) {
	t, err := h.app.RevokeToken(ctx, granter(ctx), req.GetId())
	if err != nil {
		return nil, notFound(err, "token %q not found", req.GetId())
	}
	return &ledgerv1.RevokeTokenResponse{ApiToken: tokenProto(t)}, nil
}

func tokenProto(t store.APIToken) *ledgerv1.APIToken {
	out := &ledgerv1.APIToken{Id: t.ID, Name: t.Name, Role: t.Role, CreatedAt: wire.Time(t.CreatedAt)}
	if !t.ExpiresAt.IsZero() {
		out.ExpiresAt = wrapperspb.String(wire.Time(t.ExpiresAt))
	}
	if !t.RevokedAt.IsZero() {
		out.RevokedAt = wrapperspb.String(wire.Time(t.RevokedAt))
	}
	if t.CreatedBy != "" {
		out.CreatedBy = wrapperspb.String(t.CreatedBy)
	}
	if !t.CreatorRevokedAt.IsZero() {
		out.CreatorRevokedAt = wrapperspb.String(wire.Time(t.CreatorRevokedAt))
	}
	return out
}

// granter is the credential of a token request: an API token is bounded
// by its own grant; the administrator key and a service (the bootstrap
// credential, and Foundry itself) are not.
func granter(ctx context.Context) identity.Granter {
	p := authz.FromContext(ctx)
	if p.Kind != authz.Token {
		return identity.Granter{}
	}
	return identity.Granter{TokenID: p.ID, Role: authz.RoleName(p.Role), ExpiresAt: p.ExpiresAt}
}

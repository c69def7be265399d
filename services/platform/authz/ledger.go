package authz

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	ledgerinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
)

// LedgerLookup resolves tokens with the ledger, which keeps sessions and
// API tokens (LedgerInternalService.Authenticate). dial is called on each
// look-up, so a process whose ledger address is missing still starts and
// answers that tokens cannot be verified.
func LedgerLookup(dial func() (*grpc.ClientConn, error)) Lookup {
	return func(ctx context.Context, hash string) (Principal, error) {
		ledger, err := ledgerClient(dial)
		if err != nil {
			return Principal{}, fmt.Errorf("verify token: %w", err)
		}
		resp, err := ledger.Authenticate(ctx, &ledgerinternalv1.AuthenticateRequest{TokenHash: hash})
		if status.Code(err) == codes.Unauthenticated {
			return invalid(status.Convert(err).Message()), nil
		}
		if err != nil {
			return Principal{}, fmt.Errorf("verify token: %w", err)
		}
		return FromAuthenticateResponse(resp)
	}
}

// LedgerLookupMany is LookupMany through the ledger's AuthenticateMany.
func LedgerLookupMany(dial func() (*grpc.ClientConn, error)) LookupMany {
	return func(ctx context.Context, tokens []TokenUse) ([]Principal, error) {
		ledger, err := ledgerClient(dial)
		if err != nil {
			return nil, fmt.Errorf("verify tokens: %w", err)
		}
		req := &ledgerinternalv1.AuthenticateManyRequest{Tokens: make([]*ledgerinternalv1.TokenCheck, len(tokens))}
		for k, t := range tokens {
			req.Tokens[k] = &ledgerinternalv1.TokenCheck{TokenHash: t.Hash, Used: t.Used}
		}
		resp, err := ledger.AuthenticateMany(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("verify tokens: %w", err)
		}
		if len(resp.GetVerdicts()) != len(tokens) {
			return nil, fmt.Errorf("verify tokens: the ledger answered %d of %d", len(resp.GetVerdicts()), len(tokens))
		}
		out := make([]Principal, len(tokens))
		for k, v := range resp.GetVerdicts() {
			if v.GetPrincipal() == nil {
				out[k] = invalid(v.GetProblem())
				continue
			}
			if out[k], err = FromAuthenticateResponse(v.GetPrincipal()); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
}

// ledgerClient is the ledger's internal service over the connection dial
// returns, dialled on each look-up (LedgerLookup says why).
func ledgerClient(dial func() (*grpc.ClientConn, error)) (ledgerinternalv1.LedgerInternalServiceClient, error) {
	conn, err := dial()
	if err != nil {
		return nil, err
	}
	return ledgerinternalv1.NewLedgerInternalServiceClient(conn), nil
}

// FromAuthenticateResponse is the principal a ledger's answer describes.
func FromAuthenticateResponse(resp *ledgerinternalv1.AuthenticateResponse) (Principal, error) {
	p := Principal{Kind: Kind(resp.GetKind()), ID: resp.GetId(), ContributorID: resp.GetContributorId(), Name: resp.GetName()}
	if p.Kind != Session && p.Kind != Token {
		return Principal{}, fmt.Errorf("verify token: the ledger answered kind %q", p.Kind)
	}
	role, ok := ParseRole(resp.GetRole())
	if !ok {
		return Principal{}, fmt.Errorf("verify token: the ledger answered role %q", resp.GetRole())
	}
	p.Role = role
	if us := resp.GetExpiresAtMicros(); us != 0 {
		p.ExpiresAt = time.UnixMicro(us).UTC()
	}
	return p, nil
}

// AuthenticateResponse is p as the ledger answers it.
func (p Principal) AuthenticateResponse() *ledgerinternalv1.AuthenticateResponse {
	r := &ledgerinternalv1.AuthenticateResponse{Kind: string(p.Kind), Role: RoleName(p.Role), Id: p.ID,
		ContributorId: p.ContributorID, Name: p.Name}
	if !p.ExpiresAt.IsZero() {
		r.ExpiresAtMicros = p.ExpiresAt.UnixMicro()
	}
	return r
}

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
		conn, err := dial()
		if err != nil {
			return Principal{}, fmt.Errorf("verify token: %w", err)
		}
		resp, err := ledgerinternalv1.NewLedgerInternalServiceClient(conn).Authenticate(ctx, &ledgerinternalv1.AuthenticateRequest{TokenHash: hash})
		if status.Code(err) == codes.Unauthenticated {
			return invalid(status.Convert(err).Message()), nil
		}
		if err != nil {
			return Principal{}, fmt.Errorf("verify token: %w", err)
		}
		return FromAuthenticateResponse(resp)
	}
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

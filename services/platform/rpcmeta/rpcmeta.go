// Package rpcmeta reads and writes the request metadata Foundry handlers care
// about: the Bearer token, the administrator key, the client's address, and
// the HTTP status the gateway should answer with.
package rpcmeta

import (
	"context"
	"crypto/subtle"
	"net"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// Metadata keys. The gateway forwards the HTTP headers of the same names.
const (
	AuthorizationKey = "authorization"
	APIKeyKey        = "x-api-key"
	ForwardedForKey  = "x-forwarded-for"
	// HTTPCodeKey is a response header the gateway turns into the HTTP status
	// (201 for creates) and then drops.
	HTTPCodeKey = "x-http-code"
)

func first(ctx context.Context, key string) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// BearerToken returns the token of an "authorization: Bearer <token>" header
// and whether one was present and well formed.
func BearerToken(ctx context.Context) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(first(ctx, AuthorizationKey)), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// RequireAdmin checks the x-api-key metadata against the configured key in
// constant time. Missing or wrong keys are Unauthenticated.
func RequireAdmin(ctx context.Context, adminKey string) error {
	got := first(ctx, APIKeyKey)
	if got == "" {
		return fault.New(fault.Unauthenticated, "administrator key required (X-API-Key)")
	}
	if adminKey == "" || subtle.ConstantTimeCompare([]byte(got), []byte(adminKey)) != 1 {
		return fault.New(fault.Unauthenticated, "invalid administrator key")
	}
	return nil
}

// ClientAddr is the address of the client the request came from: the last
// hop the gateway recorded in x-forwarded-for (the address it saw, which a
// client cannot forge), else the gRPC peer's host.
func ClientAddr(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if vals := md.Get(ForwardedForKey); len(vals) > 0 {
		parts := strings.Split(vals[len(vals)-1], ",")
		if last := strings.TrimSpace(parts[len(parts)-1]); last != "" {
			return last
		}
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		if host, _, err := net.SplitHostPort(p.Addr.String()); err == nil {
			return host
		}
		return p.Addr.String()
	}
	return "unknown"
}

// SetHTTPStatus asks the gateway to answer with code instead of 200.
func SetHTTPStatus(ctx context.Context, code int) {
	// The error only says the stream is gone or no transport is attached
	// (a direct call in a test): nothing to do about either.
	_ = grpc.SetHeader(ctx, metadata.Pairs(HTTPCodeKey, strconv.Itoa(code)))
}

// Package rpcmeta reads and writes the request metadata Foundry handlers care
// about: the Idempotency-Key, the client's address, and the HTTP status the
// gateway should answer with. (Credentials are authz's: a direct gRPC
// caller's authorization and x-api-key metadata, a verified principal.)
package rpcmeta

import (
	"context"
	"net/netip"
	"strconv"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/foundryhq/foundry/services/platform/clientip"
)

// Metadata keys. The gateway forwards the HTTP headers of the same names.
const (
	AuthorizationKey = "authorization"
	APIKeyKey        = "x-api-key"
	ForwardedForKey  = "x-forwarded-for"
	// PrincipalKey carries the principal a gateway verified and signed
	// (authz.MetadataKey).
	PrincipalKey = "foundry-principal"
	// IdempotencyKeyKey carries the Idempotency-Key header of a money POST.
	IdempotencyKeyKey = "idempotency-key"
	// HTTPCodeKey is a response header the gateway turns into the HTTP status
	// (201 for creates) and then drops.
	HTTPCodeKey = "x-http-code"
)

// first is key's first value. It reads that key alone: FromIncomingContext
// copies the whole metadata map.
func first(ctx context.Context, key string) string {
	if v := metadata.ValueFromIncomingContext(ctx, key); len(v) > 0 {
		return v[0]
	}
	return ""
}

// IdempotencyKey returns the request's Idempotency-Key ("" when absent).
func IdempotencyKey(ctx context.Context) string {
	return strings.TrimSpace(first(ctx, IdempotencyKeyKey))
}

// ClientAddr is the address of the client the request came from, the key of
// per-client limits. The x-forwarded-for metadata is believed only when the
// gRPC peer may have written it: a loopback peer (the gateway of an
// all-in-one process, a sidecar in the same pod) or one inside proxies (the
// gateway's pods, FOUNDRY_TRUSTED_PROXIES). The chain is then resolved as
// clientip.Resolve does, loopback hops counting as trusted. Any other peer is
// itself the client, so a direct gRPC caller cannot choose its own key by
// sending x-forwarded-for. Without a peer (no transport) the answer is
// "unknown".
func ClientAddr(ctx context.Context, proxies clientip.Proxies) string {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown"
	}
	addr, ok := clientip.ParseAddr(p.Addr.String())
	if !ok {
		return p.Addr.String() // not an IP peer (a Unix socket): itself
	}
	trusted := func(a netip.Addr) bool { return a.IsLoopback() || proxies.Trusts(a) }
	return clientip.Resolve(addr, metadata.ValueFromIncomingContext(ctx, ForwardedForKey), trusted).String()
}

// SetHTTPStatus asks the gateway to answer with code instead of 200.
func SetHTTPStatus(ctx context.Context, code int) {
	// The error only says the stream is gone or no transport is attached
	// (a direct call in a test): nothing to do about either.
	_ = grpc.SetHeader(ctx, metadata.Pairs(HTTPCodeKey, strconv.Itoa(code)))
}

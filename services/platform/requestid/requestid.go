// Package requestid carries a request's id (the X-Request-Id header, the
// x-request-id gRPC metadata) through a Foundry request: the gateway
// accepts a well-formed one or makes one, answers it, and forwards it; every
// service logs it on the request's lines and passes it on to the peers it
// calls, so one id finds a request's lines in every service's log.
package requestid

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Header is the HTTP header; Key the gRPC metadata key.
const (
	Header = "X-Request-Id"
	Key    = "x-request-id"
)

// MaxLen bounds an accepted id.
const MaxLen = 128

// Valid reports whether id is one to keep: 1 to MaxLen characters of
// letters, digits and "-_.:". Anything else (a log-forging newline, a
// megabyte) is replaced by a fresh id rather than logged.
func Valid(id string) bool {
	if id == "" || len(id) > MaxLen {
		return false
	}
	for _, c := range []byte(id) {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.', c == ':':
		default:
			return false
		}
	}
	return true
}

// New makes an id: 16 random bytes in hex.
func New() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type ctxKey struct{}

// With returns ctx carrying id.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// From returns the id ctx carries ("" when none).
func From(ctx context.Context) string {
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// fromMetadata returns the incoming x-request-id when it is valid.
func fromMetadata(ctx context.Context) string {
	// The one key (FromIncomingContext would copy the whole map, on every
	// call).
	if v := metadata.ValueFromIncomingContext(ctx, Key); len(v) > 0 && Valid(v[0]) {
		return v[0]
	}
	return ""
}

// UnaryServerInterceptor puts the caller's x-request-id in the context
// (a fresh id when it sent none or an invalid one, so every request has
// one). It runs outermost, so every later interceptor and the handler see it.
func UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		id := fromMetadata(ctx)
		if id == "" {
			id = New()
		}
		return handler(With(ctx, id), req)
	}
}

// UnaryClientInterceptor sends the context's id to the peer called.
func UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if id := From(ctx); id != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, Key, id)
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	}
}

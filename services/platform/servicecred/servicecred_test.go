package servicecred

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func TestMatches(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		given, key string
		accepted   []string
		want       bool
	}{
		{"new", "new", nil, true},
		{"old", "new", []string{"old"}, true},
		{"old", "new", []string{"other", "old"}, true},
		{"new", "old", []string{"new"}, true},
		{"guess", "new", []string{"old"}, false},
		{"", "new", []string{""}, false},
		{"", "", nil, false},
		{"ne", "new", nil, false},
		{"newer", "new", nil, false},
	} {
		require.Equal(t, tc.want, Matches(tc.given, tc.key, tc.accepted), "%q against %q and %q", tc.given, tc.key, tc.accepted)
	}
}

// TestInterceptorAcceptsARotatingKey: during a rotation a server takes the
// key it presents and the accepted one, and still nothing else.
func TestInterceptorAcceptsARotatingKey(t *testing.T) {
	t.Parallel()
	intercept := UnaryServerInterceptor("new", "old")
	call := func(key ...string) codes.Code {
		ctx := context.Background()
		if len(key) > 0 {
			md := metadata.MD{}
			for _, k := range key {
				md.Append(MetadataKey, k)
			}
			ctx = metadata.NewIncomingContext(ctx, md)
		}
		_, err := intercept(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/foundry.ledger.v1.LedgerService/GetSupply"},
			func(context.Context, any) (any, error) { return "ok", nil })
		return status.Code(err)
	}
	require.Equal(t, codes.OK, call("new"))
	require.Equal(t, codes.OK, call("old"), "the key being rotated out (or in)")
	require.Equal(t, codes.Unauthenticated, call("guess"))
	require.Equal(t, codes.Unauthenticated, call())
	require.Equal(t, codes.Unauthenticated, call("guess", "new"), "a second value beside the real key")
}

// TestInterceptorLetsAPersonsCredentialBy: a call with a person's own
// credential (a token, the administrator key) needs no service key, since
// the enforcer verifies that credential; a forwarded principal beside it
// still needs the key, and so does a call with neither.
func TestInterceptorLetsAPersonsCredentialBy(t *testing.T) {
	t.Parallel()
	intercept := UnaryServerInterceptor("the-key")
	call := func(kv ...string) codes.Code {
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(kv...))
		_, err := intercept(ctx, nil, &grpc.UnaryServerInfo{FullMethod: "/foundry.ledger.v1.LedgerService/Withdraw"},
			func(context.Context, any) (any, error) { return "ok", nil })
		return status.Code(err)
	}
	require.Equal(t, codes.OK, call("authorization", "Bearer fds_token"))
	require.Equal(t, codes.OK, call("x-api-key", "the administrator key"))
	require.Equal(t, codes.Unauthenticated, call("authorization", "Bearer fds_token", "foundry-principal", "kind=session&contributor=alice"),
		"a forwarded principal is a service's to send")
	require.Equal(t, codes.Unauthenticated, call("foundry-principal", "kind=anonymous"))
	require.Equal(t, codes.Unauthenticated, call("user-agent", "grpcurl"))
	require.Equal(t, codes.OK, call(MetadataKey, "the-key", "foundry-principal", "kind=anonymous"))
}

package rpcmeta_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

func incoming(kv ...string) context.Context {
	return metadata.NewIncomingContext(context.Background(), metadata.Pairs(kv...))
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	tests := []struct {
		header string
		want   string
		ok     bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"Basic x", "", false},
		{"Bearer ", "", false},
		{"abc", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := rpcmeta.BearerToken(incoming("authorization", tt.header))
		require.Equal(t, tt.ok, ok, "header %q", tt.header)
		require.Equal(t, tt.want, got, "header %q", tt.header)
	}
	_, ok := rpcmeta.BearerToken(context.Background())
	require.False(t, ok)
}

func TestRequireAdmin(t *testing.T) {
	t.Parallel()
	require.NoError(t, rpcmeta.RequireAdmin(incoming("x-api-key", "k1"), "k1"))
	require.Equal(t, fault.Unauthenticated, fault.KindOf(rpcmeta.RequireAdmin(incoming("x-api-key", "k2"), "k1")))
	require.Equal(t, fault.Unauthenticated, fault.KindOf(rpcmeta.RequireAdmin(context.Background(), "k1")))
	require.Equal(t, fault.Unauthenticated, fault.KindOf(rpcmeta.RequireAdmin(incoming("x-api-key", "k1"), "")))
}

func TestClientAddr(t *testing.T) {
	t.Parallel()
	require.Equal(t, "10.0.0.2", rpcmeta.ClientAddr(incoming("x-forwarded-for", "6.6.6.6, 10.0.0.2")))
	require.Equal(t, "10.0.0.3", rpcmeta.ClientAddr(incoming("x-forwarded-for", "6.6.6.6", "x-forwarded-for", "1.1.1.1, 10.0.0.3")), "the last value is the gateway's")
	ctx := peer.NewContext(context.Background(), &peer.Peer{Addr: &net.TCPAddr{IP: net.ParseIP("127.0.0.9"), Port: 4}})
	require.Equal(t, "127.0.0.9", rpcmeta.ClientAddr(ctx))
	require.Equal(t, "unknown", rpcmeta.ClientAddr(context.Background()))
}

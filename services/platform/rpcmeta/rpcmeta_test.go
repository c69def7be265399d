package rpcmeta_test

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/foundryhq/foundry/services/platform/clientip"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// from returns a request context from a gRPC peer with x-forwarded-for
// values (none when empty).
func from(peerAddr string, forwardedFor ...string) context.Context {
	ctx := context.Background()
	if peerAddr != "" {
		addr, err := net.ResolveTCPAddr("tcp", peerAddr)
		if err != nil {
			panic(err)
		}
		ctx = peer.NewContext(ctx, &peer.Peer{Addr: addr})
	}
	var kv []string
	for _, v := range forwardedFor {
		kv = append(kv, "x-forwarded-for", v)
	}
	return metadata.NewIncomingContext(ctx, metadata.Pairs(kv...))
}

func TestClientAddr(t *testing.T) {
	t.Parallel()
	gatewayPods := clientip.MustParse("10.8.0.0/16")
	tests := []struct {
		name    string
		ctx     context.Context
		proxies clientip.Proxies
		want    string
	}{
		{"a loopback peer (the all-in-one gateway) is believed", from("127.0.0.1:5000", "203.0.113.7"), clientip.Proxies{}, "203.0.113.7"},
		{"an IPv6 loopback peer is believed", from("[::1]:5000", "203.0.113.7"), clientip.Proxies{}, "203.0.113.7"},
		{"a loopback peer without the header is the client", from("127.0.0.9:4"), clientip.Proxies{}, "127.0.0.9"},
		{"a direct caller's forged header is ignored", from("198.51.100.4:5000", "203.0.113.7"), clientip.Proxies{}, "198.51.100.4"},
		{"a forged header is ignored even when proxies are trusted", from("198.51.100.4:5000", "203.0.113.7"), gatewayPods, "198.51.100.4"},
		{"a peer in a trusted network is believed", from("10.8.3.4:5000", "203.0.113.7"), gatewayPods, "203.0.113.7"},
		{"a trusted peer's chain skips trusted hops from the right", from("10.8.3.4:5000", "6.6.6.6, 203.0.113.7, 10.8.9.9"), gatewayPods, "203.0.113.7"},
		{"every value counts, the last is nearest", from("10.8.3.4:5000", "6.6.6.6", "203.0.113.8"), gatewayPods, "203.0.113.8"},
		{"a malformed hop ends the walk", from("127.0.0.1:5000", "not-an-ip"), clientip.Proxies{}, "127.0.0.1"},
		{"no peer means unknown, whatever the header", from("", "203.0.113.7"), clientip.Proxies{}, "unknown"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := rpcmeta.ClientAddr(tt.ctx, tt.proxies)
			require.Equal(t, tt.want, got, "got %s, want %s", got, tt.want)
		})
	}
}

package rpcmeta_test

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/foundryhq/foundry/services/platform/clientip"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// FuzzClientAddr checks the service side of client resolution: the answer
// is the gRPC peer or an address of x-forwarded-for, and the header is
// believed only from a loopback or trusted peer.
func FuzzClientAddr(f *testing.F) {
	f.Add([]byte{127, 0, 0, 1}, uint16(5000), "", "203.0.113.7", "")
	f.Add([]byte{10, 8, 3, 4}, uint16(5000), "10.8.0.0/16", "6.6.6.6, 203.0.113.7, 10.8.9.9", "1.1.1.1")
	f.Add([]byte{198, 51, 100, 4}, uint16(1), "10.8.0.0/16", "203.0.113.7", "")
	f.Add(netip.IPv6Loopback().AsSlice(), uint16(443), "", "not-an-ip", "")
	f.Add(netip.MustParseAddr("::ffff:127.0.0.1").AsSlice(), uint16(9), "", "[2001:db8::1]:80", "")
	f.Add([]byte{}, uint16(0), "", "203.0.113.7", "")
	f.Fuzz(func(t *testing.T, ip []byte, port uint16, list, xff1, xff2 string) {
		proxies, err := clientip.Parse(list)
		if err != nil {
			return
		}
		var kv []string
		for _, v := range []string{xff1, xff2} {
			if v != "" {
				kv = append(kv, "x-forwarded-for", v)
			}
		}
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(kv...))
		addr, ok := netip.AddrFromSlice(ip)
		if !ok {
			require.Equal(t, "unknown", rpcmeta.ClientAddr(ctx, proxies))
			return
		}
		ctx = peer.NewContext(ctx, &peer.Peer{Addr: &net.TCPAddr{IP: addr.AsSlice(), Port: int(port)}})
		got := rpcmeta.ClientAddr(ctx, proxies)

		peerAddr := addr.Unmap()
		allowed := map[string]bool{peerAddr.String(): true}
		for _, v := range []string{xff1, xff2} {
			for _, hop := range strings.Split(v, ",") {
				if a, ok := clientip.ParseAddr(hop); ok {
					allowed[a.String()] = true
				}
			}
		}
		require.True(t, allowed[got], "%q is neither the peer %s nor a hop of %q, %q", got, peerAddr, xff1, xff2)
		if !peerAddr.IsLoopback() && !proxies.Trusts(peerAddr) {
			require.Equal(t, peerAddr.String(), got, "an untrusted peer is the client")
		}
	})
}

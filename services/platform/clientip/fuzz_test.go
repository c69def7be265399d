package clientip_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/clientip"
)

// FuzzParse checks the trusted-proxy list parser: whatever it accepts
// prints back to an equivalent list (Parse(String()) trusts the same
// networks), and it trusts an address exactly when some item of the input,
// read on its own, contains it. A refused list names the culprit.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", " , ", "10.0.0.0/8", "10.0.0.0/8, fd00::/8", "192.168.1.7", "::1",
		"::ffff:10.0.0.0/104", "::ffff:10.0.0.0/80", "10.1.2.3/8", "1.2.3.4/33", "fe80::1%eth0", "x", "10.0.0.0/8,,",
		"\xff", "0.0.0.0/0"} {
		f.Add(s, "10.1.2.3")
	}
	f.Add("fd00::/8", "fd00::1")
	f.Add("10.0.0.0/8", "::ffff:10.9.9.9")
	f.Fuzz(func(t *testing.T, list, probe string) {
		p, err := clientip.Parse(list)
		if err != nil {
			require.ErrorContains(t, err, "trusted proxy")
			require.True(t, p.Empty(), "a refused list trusts nobody")
			return
		}
		again, err := clientip.Parse(p.String())
		require.NoError(t, err, "printed list %q", p.String())
		require.Equal(t, p.String(), again.String())

		addr, err := netip.ParseAddr(probe)
		if err != nil {
			return
		}
		want := false
		for _, item := range strings.Split(list, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			one, err := clientip.Parse(item)
			require.NoError(t, err, "an item of an accepted list parses on its own")
			want = want || one.Trusts(addr)
		}
		require.Equal(t, want, p.Trusts(addr), "list %q, address %s", list, addr)
		require.Equal(t, p.Trusts(addr), again.Trusts(addr), "the printed list trusts the same addresses")
		if p.Trusts(addr) {
			require.True(t, p.Trusts(addr.Unmap()), "an IPv4-mapped address is its IPv4 address")
		}
	})
}

// hops is every address FromHTTP could answer for a request: the peer and
// each X-Forwarded-For entry, read as clientip reads them.
func hops(remoteAddr string, forwardedFor []string) map[string]bool {
	out := map[string]bool{remoteAddr: true}
	entries := []string{remoteAddr}
	for _, v := range forwardedFor {
		entries = append(entries, strings.Split(v, ",")...)
	}
	for _, e := range entries {
		if a, ok := clientip.ParseAddr(e); ok {
			out[a.String()] = true
		}
	}
	return out
}

// FuzzFromHTTP checks client resolution: the answer is always the peer or
// an address the request carried, never one made up; an untrusted peer is
// the client whatever X-Forwarded-For says; and the answer is never a
// trusted hop while an untrusted one stood between it and the peer.
func FuzzFromHTTP(f *testing.F) {
	f.Add("10.0.0.0/8", "10.0.0.2:1234", "203.0.113.7, 10.0.0.5", "")
	f.Add("10.0.0.0/8", "203.0.113.9:80", "1.1.1.1", "")
	f.Add("10.0.0.0/8", "10.0.0.2:1", "garbage, 10.0.0.9", "198.51.100.1")
	f.Add("::1", "[::1]:443", "[2001:db8::1]:5, ::ffff:192.0.2.1", "")
	f.Add("", "@unix", "1.2.3.4", "")
	f.Add("0.0.0.0/0", "1.2.3.4:5", "fe80::1%eth0", "")
	f.Add("10.0.0.0/8", "10.9.9.9", "", "")
	f.Fuzz(func(t *testing.T, list, remoteAddr, xff1, xff2 string) {
		p, err := clientip.Parse(list)
		if err != nil {
			return
		}
		var forwardedFor []string
		for _, v := range []string{xff1, xff2} {
			if v != "" {
				forwardedFor = append(forwardedFor, v)
			}
		}
		got := p.FromHTTP(remoteAddr, forwardedFor)
		require.True(t, hops(remoteAddr, forwardedFor)[got], "%q is neither the peer %q nor a hop of %q", got, remoteAddr, forwardedFor)

		peer, ok := clientip.ParseAddr(remoteAddr)
		if !ok {
			require.Equal(t, remoteAddr, got, "a peer that is no IP address is returned as is")
			return
		}
		if !p.Trusts(peer) {
			require.Equal(t, peer.String(), got, "an untrusted peer is the client")
			return
		}
		client, ok := clientip.ParseAddr(got)
		require.True(t, ok)
		if p.Trusts(client) {
			// Every hop to the right of the answer was trusted too: walk
			// them again and find no untrusted, well-formed one.
			var entries []string
			for _, v := range forwardedFor {
				entries = append(entries, strings.Split(v, ",")...)
			}
			for i := len(entries) - 1; i >= 0; i-- {
				a, ok := clientip.ParseAddr(entries[i])
				if !ok || a == client {
					break
				}
				require.True(t, p.Trusts(a), "untrusted hop %s is nearer than the trusted answer %s", a, client)
			}
		}
	})
}

// Package clientip decides which address a request came from when proxies
// may stand in between. X-Forwarded-For is written by whoever sent the
// request, so it is believed only as far as the hops that wrote it are
// trusted: a client can prepend anything, but it cannot make a trusted proxy
// record a peer address other than its own. Per-client limits key on the
// address this package returns, so a client that could choose it could give
// itself a fresh bucket on every request.
package clientip

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// Proxies is the set of networks whose hops are trusted to append the
// address they saw to X-Forwarded-For (an ingress controller, the gateway's
// pods). The zero value trusts nobody.
type Proxies struct {
	prefixes []netip.Prefix
}

// Parse reads a comma-separated list of CIDRs ("10.0.0.0/8, fd00::/8"); a
// bare address means that one host. An empty string trusts nobody.
func Parse(s string) (Proxies, error) {
	var p Proxies
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		prefix, err := netip.ParsePrefix(item)
		if err != nil {
			addr, aerr := netip.ParseAddr(item)
			if aerr != nil {
				return Proxies{}, fmt.Errorf("trusted proxy %q: want a CIDR such as 10.0.0.0/8 or an address", item)
			}
			addr = addr.Unmap()
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		if prefix.Addr().Is4In6() {
			// ::ffff:10.0.0.0/104 is 10.0.0.0/8: compare like with like.
			prefix = netip.PrefixFrom(prefix.Addr().Unmap(), max(prefix.Bits()-96, 0))
		}
		p.prefixes = append(p.prefixes, prefix.Masked())
	}
	return p, nil
}

// MustParse is Parse for literals known to be valid (tests).
func MustParse(s string) Proxies {
	p, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return p
}

// String lists the networks, comma-separated.
func (p Proxies) String() string {
	parts := make([]string, len(p.prefixes))
	for i, prefix := range p.prefixes {
		parts[i] = prefix.String()
	}
	return strings.Join(parts, ",")
}

// Empty reports whether no proxy is trusted.
func (p Proxies) Empty() bool { return len(p.prefixes) == 0 }

// Trusts reports whether addr is inside a trusted network.
func (p Proxies) Trusts(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, prefix := range p.prefixes {
		if prefix.Contains(addr) {
			return true
		}
	}
	return false
}

// Resolve returns the client's address given the peer the connection came
// from and the X-Forwarded-For values that arrived with it (each may hold a
// comma-separated chain, oldest hop first). trusted says which hops may be
// believed. When the peer is not trusted, it is the client, whatever the
// header says. Otherwise the chain is walked from the right (the hop nearest
// to us) skipping trusted addresses: the first untrusted one is the client.
// When every hop is trusted, the leftmost is. A malformed entry ends the
// walk, since no trusted proxy writes one: the last address believed is the
// client then.
func Resolve(peer netip.Addr, forwardedFor []string, trusted func(netip.Addr) bool) netip.Addr {
	peer = peer.Unmap()
	if !peer.IsValid() || !trusted(peer) {
		return peer
	}
	var hops []string
	for _, v := range forwardedFor {
		hops = append(hops, strings.Split(v, ",")...)
	}
	client := peer
	for i := len(hops) - 1; i >= 0; i-- {
		addr, ok := parseHop(hops[i])
		if !ok {
			break
		}
		client = addr
		if !trusted(addr) {
			break
		}
	}
	return client
}

// FromHTTP resolves the client of an HTTP request whose peer is remoteAddr
// ("host:port", as http.Request.RemoteAddr). A peer that is not an IP
// address (a Unix socket) is returned as is.
func (p Proxies) FromHTTP(remoteAddr string, forwardedFor []string) string {
	peer, ok := parseHop(remoteAddr)
	if !ok {
		return remoteAddr
	}
	return Resolve(peer, forwardedFor, p.Trusts).String()
}

// IsPeerForm reports whether remoteAddr ("host:port") is already what
// resolving it would make it when no X-Forwarded-For was sent: an IP
// address and port that parseHop leaves as they are (no IPv4-mapped IPv6
// address, no zone). A caller that would rewrite such an address to its
// resolved form can leave it alone.
func IsPeerForm(remoteAddr string) bool {
	ap, err := netip.ParseAddrPort(remoteAddr)
	return err == nil && ap.Addr() == ap.Addr().Unmap().WithZone("")
}

// parseHop reads one X-Forwarded-For entry or a peer address: an IP, with or
// without a port (1.2.3.4:5678, [::1]:80).
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if addr, err := netip.ParseAddr(s); err == nil {
		return addr.Unmap().WithZone(""), true
	}
	if host, _, err := net.SplitHostPort(s); err == nil {
		if addr, err := netip.ParseAddr(host); err == nil {
			return addr.Unmap().WithZone(""), true
		}
	}
	return netip.Addr{}, false
}

// ParseAddr reads a peer address as FromHTTP does (with or without a port).
func ParseAddr(s string) (netip.Addr, bool) { return parseHop(s) }

package clientip_test

import (
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/clientip"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"", "", false},
		{" , ", "", false},
		{"10.0.0.0/8", "10.0.0.0/8", false},
		{"10.1.2.3/8, 192.168.1.1", "10.0.0.0/8,192.168.1.1/32", false},
		{"fd00::/8,::1", "fd00::/8,::1/128", false},
		{"::ffff:10.0.0.0/104", "10.0.0.0/8", false},
		{"10.0.0.0/33", "", true},
		{"ingress", "", true},
	}
	for _, tt := range tests {
		got, err := clientip.Parse(tt.in)
		if tt.wantErr {
			require.Error(t, err, "Parse(%q)", tt.in)
			continue
		}
		require.NoError(t, err, "Parse(%q)", tt.in)
		require.Equal(t, tt.want, got.String(), "Parse(%q): got %s, want %s", tt.in, got, tt.want)
	}
}

func TestFromHTTP(t *testing.T) {
	t.Parallel()
	ingress := clientip.MustParse("10.0.0.0/8, 127.0.0.1")
	tests := []struct {
		name    string
		proxies clientip.Proxies
		remote  string
		xff     []string
		want    string
	}{
		{"no trusted proxies: the peer, whatever the header", clientip.Proxies{}, "127.0.0.1:5555", []string{"203.0.113.9"}, "127.0.0.1"},
		{"an untrusted peer is the client", ingress, "198.51.100.4:80", []string{"203.0.113.9"}, "198.51.100.4"},
		{"a trusted peer without the header is the client", ingress, "10.1.1.1:80", nil, "10.1.1.1"},
		{"a trusted peer: the hop it recorded", ingress, "10.1.1.1:80", []string{"203.0.113.9"}, "203.0.113.9"},
		{"a spoofed prefix is skipped: the rightmost untrusted hop", ingress, "10.1.1.1:80", []string{"6.6.6.6, 203.0.113.9"}, "203.0.113.9"},
		{"trusted hops are skipped from the right", ingress, "10.1.1.1:80", []string{"6.6.6.6, 203.0.113.9, 10.2.2.2"}, "203.0.113.9"},
		{"several header lines form one chain", ingress, "10.1.1.1:80", []string{"6.6.6.6", "203.0.113.9", "10.2.2.2"}, "203.0.113.9"},
		{"all hops trusted: the leftmost", ingress, "10.1.1.1:80", []string{"10.3.3.3, 10.2.2.2"}, "10.3.3.3"},
		{"a spoofed trusted address left of the client is not reached", ingress, "10.1.1.1:80", []string{"10.9.9.9, 203.0.113.9"}, "203.0.113.9"},
		{"a malformed hop ends the walk at the last believed one", ingress, "10.1.1.1:80", []string{"evil, 10.2.2.2"}, "10.2.2.2"},
		{"a malformed nearest hop leaves the peer", ingress, "10.1.1.1:80", []string{"evil"}, "10.1.1.1"},
		{"hops with ports", ingress, "10.1.1.1:80", []string{"203.0.113.9:4711, 10.2.2.2:80"}, "203.0.113.9"},
		{"IPv6 hops", ingress, "10.1.1.1:80", []string{"2001:db8::1"}, "2001:db8::1"},
		{"IPv4-mapped peers count as IPv4", ingress, "[::ffff:10.1.1.1]:80", []string{"203.0.113.9"}, "203.0.113.9"},
		{"a non-IP peer is kept as is", ingress, "@unix", []string{"203.0.113.9"}, "@unix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.proxies.FromHTTP(tt.remote, tt.xff)
			require.Equal(t, tt.want, got, "got %s, want %s", got, tt.want)
		})
	}
}

// TestIsPeerForm: an address in the peer form is the one FromHTTP resolves
// it to without a header; one outside it is rewritten.
func TestIsPeerForm(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]bool{
		"203.0.113.9:4000": true, "[2001:db8::9]:4000": true, "[::1]:80": true,
		"[::ffff:203.0.113.9]:4000": false, "[fe80::1%eth0]:4000": false, "@unix": false, "203.0.113.9": false,
	} {
		require.Equal(t, want, clientip.IsPeerForm(remote), remote)
		if want {
			host, _, err := net.SplitHostPort(remote)
			require.NoError(t, err)
			require.Equal(t, host, clientip.Proxies{}.FromHTTP(remote, nil), "%s resolves to itself", remote)
		}
	}
}

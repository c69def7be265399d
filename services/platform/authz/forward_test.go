package authz

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"
)

func newTestForwarder(t testing.TB) *Forwarder {
	t.Helper()
	skey, _, err := GenerateKey("gateway-test")
	require.NoError(t, err)
	f, err := NewForwarder(skey)
	require.NoError(t, err)
	return f
}

// TestForwardedPrincipalIsBoundToTheGateway: a service believes a
// forwarded principal only with a trusted gateway's signature over all of
// it, within its time; an unsigned one only when it names nobody.
func TestForwardedPrincipalIsBoundToTheGateway(t *testing.T) {
	t.Parallel()
	gw, other := newTestForwarder(t), newTestForwarder(t)
	trust, err := NewTrust(gw.VerifierKey())
	require.NoError(t, err)
	now := time.Unix(1_800_000_030, 0)
	gw.now, trust.now = func() time.Time { return now }, func() time.Time { return now }

	alice := Principal{Kind: Session, Role: Contributor, ID: "h", ContributorID: "alice", Name: "alice"}
	signed := gw.Metadata(alice).Get(MetadataKey)[0]
	require.True(t, strings.HasPrefix(signed, alice.Encode()+"&until=1800000300&sig="), "%q", signed)
	got, err := trust.open(signed)
	require.NoError(t, err)
	require.Equal(t, alice, got)

	t.Run("the service key alone names nobody", func(t *testing.T) {
		_, err := trust.open(alice.Encode())
		require.ErrorIs(t, err, errUnsigned)
		got, err := trust.open(Principal{Kind: Anonymous}.Encode())
		require.NoError(t, err, "claiming to be nobody needs no proof")
		require.Equal(t, Anonymous, got.Kind)
	})
	t.Run("another key", func(t *testing.T) {
		_, err := trust.open(other.Metadata(alice).Get(MetadataKey)[0])
		require.ErrorIs(t, err, errUntrusted)
		_, err = (*Trust)(nil).open(signed)
		require.ErrorIs(t, err, errUntrusted, "a service trusting no gateway")
	})
	t.Run("tampered", func(t *testing.T) {
		bob := strings.Replace(signed, "contributor=alice", "contributor=bob", 1)
		require.NotEqual(t, signed, bob)
		_, err := trust.open(bob)
		require.ErrorIs(t, err, errBadSignature)
		later := strings.Replace(signed, "until=1800000300", "until=1900000300", 1)
		_, err = trust.open(later)
		require.ErrorIs(t, err, errBadSignature, "the time is signed too")
		for _, cut := range []string{signed[:len(signed)-4], signed[:strings.Index(signed, "&sig=")+5], signed + "x"} {
			_, err := trust.open(cut)
			require.ErrorIs(t, err, errBadSignature, "%q", cut)
		}
	})
	t.Run("held for four to five minutes", func(t *testing.T) {
		now = time.Unix(1_800_000_299, 0)
		_, err := trust.open(signed)
		require.NoError(t, err)
		now = time.Unix(1_800_000_300, 0)
		_, err = trust.open(signed)
		require.ErrorContains(t, err, "held until", "a replay after its time, even remembered")
		require.NotEqual(t, signed, gw.Metadata(alice).Get(MetadataKey)[0], "the gateway signs afresh each minute")
	})
	t.Run("signed once a minute, and the same for the outgoing context", func(t *testing.T) {
		md := gw.Metadata(alice)
		require.Same(t, &md.Get(MetadataKey)[0], &gw.Metadata(alice).Get(MetadataKey)[0], "remembered")
		out, _ := metadata.FromOutgoingContext(gw.OutgoingContext(context.Background(), alice))
		require.Equal(t, md.Get(MetadataKey), out.Get(MetadataKey))
	})
	t.Run("rotation", func(t *testing.T) {
		both, err := NewTrust(gw.VerifierKey(), other.VerifierKey())
		require.NoError(t, err)
		both.now = trust.now
		for _, f := range []*Forwarder{gw, other} {
			f.now = trust.now
			got, err := both.open(f.Metadata(alice).Get(MetadataKey)[0])
			require.NoError(t, err)
			require.Equal(t, alice, got)
		}
		_, err = NewTrust("not a key")
		require.ErrorContains(t, err, "not a note verifier key")
		_, err = NewForwarder(gw.VerifierKey())
		require.ErrorContains(t, err, "foundry gateway keygen")
	})
}

// BenchmarkForwardedPrincipal is the per-request cost of a signed
// principal on both sides once remembered (a gateway signs and a service
// verifies each value once).
func BenchmarkForwardedPrincipal(b *testing.B) {
	gw := newTestForwarder(b)
	trust, err := NewTrust(gw.VerifierKey())
	require.NoError(b, err)
	alice := Principal{Kind: Session, Role: Contributor, ID: "h", ContributorID: "alice", Name: "alice"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := trust.open(gw.Metadata(alice).Get(MetadataKey)[0]); err != nil {
			b.Fatal(err)
		}
	}
}

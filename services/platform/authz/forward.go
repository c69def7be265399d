package authz

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/sumdb/note"
	"google.golang.org/grpc/metadata"

	"github.com/foundryhq/foundry/services/platform/notekey"
)

// A principal the gateway forwards is bound to the gateways: it carries an
// Ed25519 signature by the key only gateways hold
// (FOUNDRY_PRINCIPAL_SIGNING_KEY), which the services check with its
// verifier key (FOUNDRY_PRINCIPAL_VERIFIER_KEYS). The service key alone
// therefore proves only that a caller is a part of Foundry (the Service
// role); it no longer lets its holder name any contributor it likes. A
// person calling gRPC directly sends its own credential in authorization
// or x-api-key metadata, which the service verifies itself.
//
// The signed value is the principal's encoding, the time until which it
// holds, and the signature over both:
//
//	kind=session&...&until=1800000300&sig=<key hash, 8 hex>.<signature, base64url>
//
// The time bounds a replay by whoever can read the traffic between
// gateways and services (mutual TLS closes that); it is rounded to the
// minute so that a gateway signs each principal once a minute, not once a
// request, and a service verifies each signed value once (both sides
// remember their answers), keeping Ed25519 off the per-request path.

// Forwarding's parameters: a signed principal holds for forwardTTL past
// the minute it was signed in (four to five minutes: a request is long
// done by then, and a service's clock may run that much ahead of a
// gateway's).
const (
	forwardTTL    = 5 * time.Minute
	forwardBucket = time.Minute
	untilParam    = "&until="
	sigParam      = "&sig="
)

// Forwarder is a gateway's half: it signs the principals it forwards.
type Forwarder struct {
	key    notekey.Key
	now    func() time.Time
	signed memo[forwarded, metadata.MD]
}

type forwarded struct {
	p     Principal
	until int64
}

// GenerateKey makes a gateway signing key named name, with its verifier
// key, in note's text form.
func GenerateKey(name string) (skey, vkey string, err error) {
	return note.GenerateKey(rand.Reader, name)
}

// NewForwarder reads a gateway's signing key (note's text form;
// foundry gateway keygen makes one).
func NewForwarder(skey string) (*Forwarder, error) {
	k, err := notekey.Parse(skey)
	if err != nil {
		return nil, fmt.Errorf("the principal signing key: %w; make one with: foundry gateway keygen", err)
	}
	return &Forwarder{key: k, now: time.Now, signed: memo[forwarded, metadata.MD]{limit: memoLimit}}, nil
}

// VerifierKey is the key services check the forwarder's signatures with.
func (f *Forwarder) VerifierKey() string { return f.key.VerifierKey }

// Metadata is the metadata that sends p to a service, signed; made once
// per principal and minute and shared, so the caller must not change it.
func (f *Forwarder) Metadata(p Principal) metadata.MD {
	until := f.now().Truncate(forwardBucket).Add(forwardTTL).Unix()
	md, _ := f.signed.get(forwarded{p, until}, func(k forwarded) (metadata.MD, error) {
		return metadata.Pairs(MetadataKey, f.sign(k.p, k.until)), nil
	})
	return md
}

// OutgoingContext returns ctx with p attached, signed, for a call to a
// service.
func (f *Forwarder) OutgoingContext(ctx context.Context, p Principal) context.Context {
	return metadata.AppendToOutgoingContext(ctx, MetadataKey, f.Metadata(p).Get(MetadataKey)[0])
}

func (f *Forwarder) sign(p Principal, until int64) string {
	payload := p.Encode() + untilParam + strconv.FormatInt(until, 10)
	sig, err := f.key.Signer.Sign([]byte(payload))
	if err != nil {
		// An Ed25519 signer of a parsed key does not fail; a value
		// without a signature is refused by every service, loudly.
		return payload
	}
	var hash [4]byte
	binary.BigEndian.PutUint32(hash[:], f.key.Signer.KeyHash())
	return payload + sigParam + hex.EncodeToString(hash[:]) + "." + base64.RawURLEncoding.EncodeToString(sig)
}

// Trust is a service's half: the gateways' verifier keys it believes a
// forwarded principal from. More than one is a rotation's (deploy/README.md,
// "Rotating keys").
type Trust struct {
	verifiers map[uint32]note.Verifier
	now       func() time.Time
	opened    memo[string, openedPrincipal]
}

type openedPrincipal struct {
	p     Principal
	until time.Time
}

// NewTrust reads the verifier keys (note's text form).
func NewTrust(vkeys ...string) (*Trust, error) {
	t := &Trust{verifiers: map[uint32]note.Verifier{}, now: time.Now, opened: memo[string, openedPrincipal]{limit: memoLimit}}
	for _, k := range vkeys {
		v, err := note.NewVerifier(k)
		if err != nil {
			return nil, fmt.Errorf("principal verifier key %q is not a note verifier key (<name>+<hash>+<key>; foundry gateway keygen prints one)", k)
		}
		t.verifiers[v.KeyHash()] = v
	}
	return t, nil
}

// Errors of a forwarded principal a service does not believe.
var (
	errUnsigned = errors.New("the forwarded principal (" + MetadataKey + ") carries no gateway's signature: " +
		"only a Foundry gateway forwards principals; a direct caller sends its own credential in authorization or x-api-key metadata")
	errBadSignature = errors.New("the forwarded principal's signature does not verify")
	errUntrusted    = errors.New("the forwarded principal is signed by a key this service does not trust (FOUNDRY_PRINCIPAL_VERIFIER_KEYS)")
)

// open is the principal a forwarded value names, once its signature and
// time are checked. An unsigned value is believed only when it names
// nobody (Anonymous): claiming less than one holds needs no proof, and
// the CLI says so over gRPC when it has no credential.
func (t *Trust) open(s string) (Principal, error) {
	if !strings.Contains(s, sigParam) {
		p, err := decodeMemo(s)
		if err != nil {
			return Principal{}, err
		}
		if p.Kind != Anonymous {
			return Principal{}, errUnsigned
		}
		return p, nil
	}
	if t == nil {
		return Principal{}, errUntrusted
	}
	o, err := t.opened.get(s, t.verify)
	if err != nil {
		return Principal{}, err
	}
	if !t.now().Before(o.until) {
		return Principal{}, fmt.Errorf("the forwarded principal held until %s: the call was replayed, or this service's clock runs ahead of the gateway's",
			o.until.Format(time.RFC3339))
	}
	return o.p, nil
}

// verify checks a signed value and decodes it.
func (t *Trust) verify(s string) (openedPrincipal, error) {
	i := strings.LastIndex(s, sigParam)
	payload, sig := s[:i], s[i+len(sigParam):]
	hashHex, sigText, ok := strings.Cut(sig, ".")
	hash, herr := hex.DecodeString(hashHex)
	raw, serr := base64.RawURLEncoding.DecodeString(sigText)
	if !ok || herr != nil || serr != nil || len(hash) != 4 {
		return openedPrincipal{}, errBadSignature
	}
	v, ok := t.verifiers[binary.BigEndian.Uint32(hash)]
	if !ok {
		return openedPrincipal{}, errUntrusted
	}
	if !v.Verify([]byte(payload), raw) {
		return openedPrincipal{}, errBadSignature
	}
	j := strings.LastIndex(payload, untilParam)
	if j < 0 {
		return openedPrincipal{}, errBadSignature
	}
	until, err := strconv.ParseInt(payload[j+len(untilParam):], 10, 64)
	if err != nil {
		return openedPrincipal{}, errBadSignature
	}
	p, err := Decode(payload[:j])
	if err != nil {
		return openedPrincipal{}, err
	}
	return openedPrincipal{p: p, until: time.Unix(until, 0)}, nil
}

// Signed reports whether a forwarded value carries a signature (which the
// enforcer checks): the calls of a gateway, whose bodies it has checked
// already.
func Signed(s string) bool { return strings.Contains(s, sigParam) }

package app

import (
	"fmt"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/authz"
)

// principalKeys settles how the principals a gateway forwards are bound to
// the gateways (authz.Forwarder, authz.Trust): the signing key a gateway
// signs them with, and the verifier keys a service believes them by.
//
// A process given a signing key also believes its own signatures (its
// gateway calls its services). A process given neither key makes a key
// for the run, as it makes a service key, but only when it names no peer
// address: its gateway then calls only itself. A process that names one
// talks to others that cannot know a key it made up, so it must be given
// the keys: the gateways the signing key, the services its verifier key.
func (s *Settings) principalKeys(log *zap.Logger) (*authz.Forwarder, *authz.Trust, error) {
	const (
		signing   = "FOUNDRY_PRINCIPAL_SIGNING_KEY (-principal-signing-key)"
		verifiers = "FOUNDRY_PRINCIPAL_VERIFIER_KEYS (-principal-verifier-keys)"
	)
	vkeys := splitList(s.PrincipalVerifierKeys)
	skey := s.PrincipalSigningKey
	if skey == "" && len(vkeys) == 0 {
		if peer, addr := s.remotePeer(); peer != "" {
			return nil, nil, fmt.Errorf("%s and %s are not set, and this process talks to other Foundry processes (the %s service at %s): "+
				"give the gateways a signing key and the services its verifier key (foundry gateway keygen makes the pair)",
				signing, verifiers, peer, addr)
		}
		k, _, err := authz.GenerateKey("foundry-gateway-run")
		if err != nil {
			return nil, nil, err
		}
		skey = k
		log.Debug("no principal keys configured: this single-process run signs and checks the principals its gateway forwards with a key made for it")
	}
	var fwd *authz.Forwarder
	if skey != "" {
		f, err := authz.NewForwarder(skey)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", signing, err)
		}
		fwd, vkeys = f, append(vkeys, f.VerifierKey())
	}
	trust, err := authz.NewTrust(vkeys...)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", verifiers, err)
	}
	return fwd, trust, nil
}

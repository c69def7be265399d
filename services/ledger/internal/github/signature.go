// Package github reads GitHub webhook deliveries: it verifies their
// signature over the raw body and decodes push events (real GitHub payloads
// and Foundry's shaped body) into what the ledger records. No SQL, no proto.
package github

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// Header names of a delivery.
const (
	HeaderEvent       = "X-GitHub-Event"
	HeaderDelivery    = "X-GitHub-Delivery"
	HeaderSignature   = "X-Hub-Signature-256"
	signaturePrefix   = "sha256="
	signatureHexBytes = sha256.Size * 2
)

// Verifier checks X-Hub-Signature-256 headers against a webhook secret.
type Verifier struct {
	secret        []byte
	allowUnsigned bool
}

// NewVerifier returns a Verifier for secret. An empty secret refuses every
// delivery unless allowUnsigned, which accepts unsigned ones: without a
// secret anyone who can reach the endpoint could post contributions of any
// cost in anyone's name, so that must be an explicit choice (a laptop run),
// never what a forgotten setting gives. With a secret, allowUnsigned is
// ignored.
func NewVerifier(secret string, allowUnsigned bool) Verifier {
	return Verifier{secret: []byte(secret), allowUnsigned: allowUnsigned}
}

// Required reports whether deliveries must be signed.
func (v Verifier) Required() bool { return len(v.secret) > 0 }

// AcceptsUnsigned reports whether unsigned deliveries pass: no secret, and
// unsigned deliveries explicitly allowed.
func (v Verifier) AcceptsUnsigned() bool { return !v.Required() && v.allowUnsigned }

// Verify checks header ("sha256=<64 hex>") against HMAC-SHA256(secret, body)
// in constant time. Failures are Unauthenticated.
//
// With a secret, the header is required: a missing one, the SHA-1
// X-Hub-Signature alone (which never reaches here), a malformed one or a
// wrong one is refused. Without a secret, every delivery is refused unless
// unsigned deliveries are allowed; then an unsigned delivery passes and a
// signed one is refused: GitHub signs only when its hook has a secret, so a
// signature means the sender expects verification that this server cannot
// do, and accepting it would hide the misconfiguration.
func (v Verifier) Verify(body []byte, header string) error {
	if !v.Required() {
		if !v.allowUnsigned {
			return fault.New(fault.Unauthenticated,
				"no GitHub webhook secret is configured, so deliveries are refused: set FOUNDRY_GITHUB_WEBHOOK_SECRET to the hook's secret "+
					"(or FOUNDRY_GITHUB_ALLOW_UNSIGNED=true to accept unsigned deliveries, for local use only)")
		}
		if header != "" {
			return fault.New(fault.Unauthenticated,
				"%s sent but no webhook secret is configured here, so it cannot be verified: set the same secret on both sides, or remove it from the hook", HeaderSignature)
		}
		return nil
	}
	if header == "" {
		return fault.New(fault.Unauthenticated, "%s is required: this webhook has a secret (the SHA-1 X-Hub-Signature is not accepted)", HeaderSignature)
	}
	hexSum, ok := strings.CutPrefix(header, signaturePrefix)
	if !ok || len(hexSum) != signatureHexBytes {
		return fault.New(fault.Unauthenticated, "%s must be %s followed by 64 hex digits", HeaderSignature, signaturePrefix)
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil {
		return fault.New(fault.Unauthenticated, "%s must be %s followed by 64 hex digits", HeaderSignature, signaturePrefix)
	}
	if !hmac.Equal(got, mac(v.secret, body)) {
		return fault.New(fault.Unauthenticated, "%s does not match the body", HeaderSignature)
	}
	return nil
}

// Sign returns the X-Hub-Signature-256 value GitHub sends for body.
func Sign(secret string, body []byte) string {
	return signaturePrefix + hex.EncodeToString(mac([]byte(secret), body))
}

func mac(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}

// Package notekey reads the Ed25519 keys Foundry keeps in signed-note text
// form (golang.org/x/mod/sumdb/note): "PRIVATE+KEY+<name>+<hash>+<key>"
// for a signing key, "<name>+<hash>+<key>" for its verifier key. The audit
// log signs its checkpoints with one; gateways sign the principals they
// forward with another.
//
// note parses both forms but keeps a signing key's public half to itself;
// a process holding only the signing key still has to tell others, and
// trust itself, by the verifier key, so this package derives it.
package notekey

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Key is a signing key with what is derived from it.
type Key struct {
	// Signer signs with the key.
	Signer note.Signer
	// Verifier verifies what Signer signed.
	Verifier note.Verifier
	// VerifierKey is Verifier in text form, as others are given it.
	VerifierKey string
	// Seed is the Ed25519 seed, for keys derived from this one.
	Seed []byte
}

// ErrNotEd25519 is the refusal of a key that is not an Ed25519 signing key
// in note's text form.
var ErrNotEd25519 = errors.New("not an Ed25519 note signing key (PRIVATE+KEY+<name>+<hash>+<key>)")

// Parse reads a signing key.
func Parse(skey string) (Key, error) {
	s, err := note.NewSigner(skey)
	if err != nil {
		return Key{}, ErrNotEd25519
	}
	// The fifth field, after PRIVATE, KEY, the name and the key hash (none
	// of which holds a "+"), is the algorithm byte and the seed in
	// base64, which may.
	fields := strings.SplitN(skey, "+", 5)
	if len(fields) != 5 {
		return Key{}, ErrNotEd25519
	}
	raw, err := base64.StdEncoding.DecodeString(fields[4])
	if err != nil || len(raw) != 1+ed25519.SeedSize {
		return Key{}, ErrNotEd25519
	}
	pub := ed25519.NewKeyFromSeed(raw[1:]).Public().(ed25519.PublicKey)
	vkey, err := note.NewEd25519VerifierKey(s.Name(), pub)
	if err != nil {
		return Key{}, err
	}
	v, err := note.NewVerifier(vkey)
	if err != nil {
		return Key{}, err
	}
	return Key{Signer: s, Verifier: v, VerifierKey: vkey, Seed: raw[1:]}, nil
}

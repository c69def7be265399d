package audit

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/platform/auditlog"
	"github.com/foundryhq/foundry/services/platform/notekey"
)

// Frontier is the right edge of a tree: the roots of its maximal complete
// subtrees, largest first. It is all that appending needs, so the
// sequencer extends the tree without reading it, and a verifier recomputes
// a root from a stream of leaves in constant memory.
type Frontier struct {
	size int64
	// roots[i] is the hash of a complete subtree of 2^levels[i] records.
	roots  []tlog.Hash
	levels []int
}

// Size is the number of records in the tree.
func (f *Frontier) Size() int64 { return f.size }

// LoadFrontier reads the frontier of a tree of size n from its stored
// hashes (one read of at most 63 hashes).
func LoadFrontier(n int64, r tlog.HashReader) (*Frontier, error) {
	f := &Frontier{size: n}
	var idx []int64
	start := int64(0)
	for level := 62; level >= 0; level-- {
		if n&(1<<level) == 0 {
			continue
		}
		idx = append(idx, tlog.StoredHashIndex(level, start>>level))
		f.levels = append(f.levels, level)
		start += 1 << level
	}
	if len(idx) == 0 {
		return f, nil
	}
	hs, err := r.ReadHashes(idx)
	if err != nil {
		return nil, err
	}
	if len(hs) != len(idx) {
		return nil, fmt.Errorf("read %d stored hashes, want %d", len(hs), len(idx))
	}
	f.roots = hs
	return f, nil
}

// Append adds the record whose leaf hash is leaf and returns the hashes
// the tree stores for it, to be stored from index tlog.StoredHashIndex(0,
// n) on, where n was the size before: exactly tlog.StoredHashes.
func (f *Frontier) Append(leaf tlog.Hash) []tlog.Hash {
	out := []tlog.Hash{leaf}
	h, level := leaf, 0
	for len(f.levels) > 0 && f.levels[len(f.levels)-1] == level {
		last := len(f.levels) - 1
		h = tlog.NodeHash(f.roots[last], h)
		f.roots, f.levels = f.roots[:last], f.levels[:last]
		level++
		out = append(out, h)
	}
	f.roots, f.levels = append(f.roots, h), append(f.levels, level)
	f.size++
	return out
}

// String is the frontier in a text form ParseFrontier reads: the size,
// then each root as level:hex, separated by spaces. A verifier that walks
// a long log in steps (the scrubber) keeps it between them.
func (f *Frontier) String() string {
	var b strings.Builder
	b.WriteString(strconv.FormatInt(f.size, 10))
	for i, r := range f.roots {
		b.WriteString(" " + strconv.Itoa(f.levels[i]) + ":" + Hash(r).String())
	}
	return b.String()
}

// ParseFrontier reads a frontier's String. The roots' levels must be
// those of a tree of its size (one per bit set, largest first).
func ParseFrontier(s string) (*Frontier, error) {
	fields := strings.Fields(s)
	if len(fields) == 0 {
		return nil, errors.New("frontier: empty")
	}
	n, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil || n < 0 {
		return nil, fmt.Errorf("frontier: bad size %q", fields[0])
	}
	f := &Frontier{size: n}
	for _, fl := range fields[1:] {
		lv, hx, ok := strings.Cut(fl, ":")
		level, err := strconv.Atoi(lv)
		h, hok := ParseHash(hx)
		if !ok || err != nil || !hok {
			return nil, fmt.Errorf("frontier: bad root %q", fl)
		}
		f.levels, f.roots = append(f.levels, level), append(f.roots, tlog.Hash(h))
	}
	want := 0
	for level := 62; level >= 0; level-- {
		if n&(1<<level) != 0 {
			if want >= len(f.levels) || f.levels[want] != level {
				return nil, errors.New("frontier: its roots are not those of a tree of its size")
			}
			want++
		}
	}
	if want != len(f.levels) {
		return nil, errors.New("frontier: its roots are not those of a tree of its size")
	}
	return f, nil
}

// Root is the tree's root hash (tlog.TreeHash); the zero hash for an empty
// tree.
func (f *Frontier) Root() tlog.Hash {
	if len(f.roots) == 0 {
		return tlog.Hash{}
	}
	h := f.roots[len(f.roots)-1]
	for i := len(f.roots) - 2; i >= 0; i-- {
		h = tlog.NodeHash(f.roots[i], h)
	}
	return h
}

// Checkpoint is a tree head as a C2SP checkpoint states it.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
}

// Text is the checkpoint's body: the origin line, the tree size in
// decimal and the root hash in standard base64, each ending in a newline.
func (c Checkpoint) Text() string {
	return c.Origin + "\n" + strconv.FormatInt(c.Size, 10) + "\n" + base64.StdEncoding.EncodeToString(c.Root[:]) + "\n"
}

// ParseCheckpoint reads a checkpoint's body (extension lines after the
// root are allowed and ignored, as C2SP says).
func ParseCheckpoint(text string) (Checkpoint, error) {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) < 3 || !strings.HasSuffix(text, "\n") {
		return Checkpoint{}, errors.New("checkpoint: want an origin line, a tree size and a root hash, each ending in a newline")
	}
	origin := strings.TrimSuffix(lines[0], "\n")
	size, err := strconv.ParseInt(strings.TrimSuffix(lines[1], "\n"), 10, 64)
	if origin == "" || err != nil || size < 0 || strconv.FormatInt(size, 10) != strings.TrimSuffix(lines[1], "\n") {
		return Checkpoint{}, errors.New("checkpoint: want a non-empty origin and a decimal tree size")
	}
	root, err := base64.StdEncoding.DecodeString(strings.TrimSuffix(lines[2], "\n"))
	if err != nil || len(root) != len(tlog.Hash{}) {
		return Checkpoint{}, errors.New("checkpoint: the root hash is not 32 bytes of standard base64")
	}
	c := Checkpoint{Origin: origin, Size: size}
	copy(c.Root[:], root)
	return c, nil
}

// Signer signs checkpoints with the ledger's Ed25519 key, as a signed note
// (golang.org/x/mod/sumdb/note). The key's name is the log's origin.
type Signer struct {
	signer   note.Signer
	verifier note.Verifier
	vkey     string
	// macKey authenticates the ledger's own working state (MAC), derived
	// from the signing key's seed.
	macKey []byte
}

// GenerateKey makes a signing key named name and returns it with its
// verifier key, both in note's text form ("PRIVATE+KEY+name+hash+key" and
// "name+hash+key").
func GenerateKey(name string) (skey, vkey string, err error) {
	return note.GenerateKey(rand.Reader, name)
}

// NewSigner reads a signing key in note's text form.
func NewSigner(skey string) (*Signer, error) {
	k, err := notekey.Parse(skey)
	if err != nil {
		return nil, errors.New("the audit signing key is not an Ed25519 note signing key (PRIVATE+KEY+<name>+<hash>+<key>; make one with: foundry audit keygen)")
	}
	mk := sha256.Sum256(append([]byte("foundry audit state mac v1\n"), k.Seed...))
	return &Signer{signer: k.Signer, verifier: k.Verifier, vkey: k.VerifierKey, macKey: mk[:]}, nil
}

// MAC authenticates data the ledger keeps for itself in its database (the
// scrubber's place in its cycle): HMAC-SHA256 with a key derived from the
// signing key, in hex. Whoever can write the database but does not hold
// the signing key cannot make state the ledger will take as its own.
func (s *Signer) MAC(data []byte) string {
	m := hmac.New(sha256.New, s.macKey)
	m.Write(data)
	return hex.EncodeToString(m.Sum(nil))
}

// KeyID names the signing key in state it authenticates (the note key
// hash, in hex): state made under another key is not forged, only stale.
func (s *Signer) KeyID() string { return fmt.Sprintf("%08x", s.signer.KeyHash()) }

// Origin is the log's origin line: the key's name.
func (s *Signer) Origin() string { return s.signer.Name() }

// VerifierKey is the key that verifies the signer's checkpoints, in
// note's text form, as clients are given it.
func (s *Signer) VerifierKey() string { return s.vkey }

// Sign returns the signed note of a checkpoint.
func (s *Signer) Sign(c Checkpoint) (string, error) {
	msg, err := note.Sign(&note.Note{Text: c.Text()}, s.signer)
	if err != nil {
		return "", fmt.Errorf("sign checkpoint: %w", err)
	}
	return string(msg), nil
}

// SignKeyChange signs the statement of the log's change to this signer's
// key (auditlog.KeyChange), countersigned by each of old: the previous
// key, when the operator gave it for the rotation.
func (s *Signer) SignKeyChange(k auditlog.KeyChange, old ...*Signer) (string, error) {
	signers := []note.Signer{s.signer}
	for _, o := range old {
		signers = append(signers, o.signer)
	}
	return auditlog.SignKeyChange(k, signers...)
}

// ErrOtherKey reports a checkpoint signed by none of the keys asked to
// verify it: a key the ledger was never given, or a forgery.
var ErrOtherKey = errors.New("the checkpoint is not signed by any of these keys")

// OpenCheckpoint verifies a signed checkpoint against verifier keys and
// returns it with the key that verified it; ErrOtherKey when no signature
// is by one of them, another error when the note is malformed, a
// signature by one of them is wrong, or the checkpoint's origin is not
// the name of the key that signed it.
func OpenCheckpoint(signed string, vkeys ...string) (Checkpoint, string, error) {
	vs := make([]note.Verifier, len(vkeys))
	for i, k := range vkeys {
		v, err := note.NewVerifier(k)
		if err != nil {
			return Checkpoint{}, "", fmt.Errorf("verifier key: %w", err)
		}
		vs[i] = v
	}
	n, err := note.Open([]byte(signed), note.VerifierList(vs...))
	var unverified *note.UnverifiedNoteError
	if errors.As(err, &unverified) {
		return Checkpoint{}, "", ErrOtherKey
	}
	if err != nil {
		return Checkpoint{}, "", fmt.Errorf("checkpoint signature: %w", err)
	}
	c, err := ParseCheckpoint(n.Text)
	if err != nil {
		return Checkpoint{}, "", err
	}
	for _, sig := range n.Sigs {
		for i, v := range vs {
			if v.Name() == sig.Name && v.KeyHash() == sig.Hash && c.Origin == v.Name() {
				return c, vkeys[i], nil
			}
		}
	}
	return Checkpoint{}, "", fmt.Errorf("checkpoint origin %q is not the name of the key that signed it", c.Origin)
}

// Verifier returns the signer's verifier key as a note.Verifier.
func (s *Signer) Verifier() note.Verifier { return s.verifier }

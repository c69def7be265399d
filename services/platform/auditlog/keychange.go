package auditlog

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// A change of the log's signing key is recorded in the log itself, by an
// entry of kind KeyChangedKind whose StatementAttr is a signed note
// stating the change (KeyChange.Text), signed by the new key and, when
// the operator gave the ledger the old signing key for the rotation,
// countersigned by the old one. A client that trusts the old key follows
// the change by checking both signatures and that the entry is in the
// tree the new key signed (foundry audit verify does); one that sees no
// countersignature must confirm the new key some other way. The format is
// a protocol, like the entry's encoding: a statement signed today must
// verify with every later build.
//
// # Statement (version 1)
//
//	foundry audit key change v1
//	<origin>        the log's origin: the name of both keys
//	<seq>           the seq of the key_changed entry, in decimal
//	<from>          the old key's verifier key (name+hash+key)
//	<to>            the new key's verifier key
//
// each line ending in a newline. The seq binds the statement to one place
// in one log: it cannot be replayed at another.
const (
	// KeyChangedKind is the kind of the entry that records a key change.
	KeyChangedKind = "key_changed"
	// FromAttr, ToAttr and StatementAttr are its attributes: the two
	// verifier keys and the signed statement.
	FromAttr      = "from"
	ToAttr        = "to"
	StatementAttr = "statement"
	// CountersignedAttr is "true" when the old key signed the statement.
	CountersignedAttr = "countersigned"
)

const keyChangeHeader = "foundry audit key change v1"

// KeyChange is a change of the log's signing key: checkpoints up to the
// tree covering Seq may be signed by From; from then on only To signs.
type KeyChange struct {
	Origin   string
	Seq      int64
	From, To string
}

// Text is the statement the keys sign.
func (k KeyChange) Text() string {
	return strings.Join([]string{keyChangeHeader, k.Origin, strconv.FormatInt(k.Seq, 10), k.From, k.To}, "\n") + "\n"
}

// ParseKeyChange reads a statement's text, refusing anything Text would
// not have written.
func ParseKeyChange(text string) (KeyChange, error) {
	lines := strings.Split(text, "\n")
	if len(lines) != 6 || lines[0] != keyChangeHeader || lines[5] != "" {
		return KeyChange{}, errors.New("key change: want the header, the origin, a seq and two verifier keys, each on its own line")
	}
	seq, err := strconv.ParseInt(lines[2], 10, 64)
	k := KeyChange{Origin: lines[1], Seq: seq, From: lines[3], To: lines[4]}
	if err != nil || seq < 1 || k.Text() != text {
		return KeyChange{}, errors.New("key change: the seq is not a decimal number from 1")
	}
	for _, key := range []string{k.From, k.To} {
		v, err := note.NewVerifier(key)
		if err != nil {
			return KeyChange{}, fmt.Errorf("key change: %q is not a verifier key: %w", key, err)
		}
		if v.Name() != k.Origin {
			return KeyChange{}, fmt.Errorf("key change: key %s is not named for the log's origin %q", key, k.Origin)
		}
	}
	if k.From == k.To {
		return KeyChange{}, errors.New("key change: the old and the new key are the same")
	}
	return k, nil
}

// SignKeyChange signs k's statement with each signer: the new key's, and
// the old key's to countersign.
func SignKeyChange(k KeyChange, signers ...note.Signer) (string, error) {
	msg, err := note.Sign(&note.Note{Text: k.Text()}, signers...)
	if err != nil {
		return "", fmt.Errorf("sign the key change: %w", err)
	}
	return string(msg), nil
}

// ErrNotSignedByNewKey reports a statement the key it names as the new
// one did not sign: not a key change the log made.
var ErrNotSignedByNewKey = errors.New("the key change is not signed by the new key it names")

// OpenKeyChange reads a signed statement and checks its signatures: the
// new key's must be there and valid (ErrNotSignedByNewKey otherwise);
// countersigned says whether the old key's is too. Any other signature is
// ignored.
func OpenKeyChange(signed string) (k KeyChange, countersigned bool, err error) {
	text, _, ok := strings.Cut(signed, "\n\n")
	if !ok {
		return KeyChange{}, false, errors.New("key change: not a signed note")
	}
	if k, err = ParseKeyChange(text + "\n"); err != nil {
		return KeyChange{}, false, err
	}
	from, err := note.NewVerifier(k.From)
	if err != nil {
		return KeyChange{}, false, err
	}
	to, err := note.NewVerifier(k.To)
	if err != nil {
		return KeyChange{}, false, err
	}
	n, err := note.Open([]byte(signed), note.VerifierList(from, to))
	var unverified *note.UnverifiedNoteError
	switch {
	case errors.As(err, &unverified):
		return KeyChange{}, false, ErrNotSignedByNewKey
	case err != nil:
		return KeyChange{}, false, fmt.Errorf("key change: %w", err)
	}
	var byNew bool
	for _, s := range n.Sigs {
		byNew = byNew || s.Hash == to.KeyHash()
		countersigned = countersigned || s.Hash == from.KeyHash()
	}
	if !byNew {
		return KeyChange{}, false, ErrNotSignedByNewKey
	}
	return k, countersigned, nil
}

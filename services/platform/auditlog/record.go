// Package auditlog is the audit log's record format, the part of the
// ledger's audit log that its clients check for themselves: the canonical
// encoding of an entry (the bytes its chain hash and its Merkle leaf
// cover), the leaf hash of a record in the log's tree, and the signed
// statement of a change of the log's key (keychange.go). The ledger
// writes and verifies the log with it (services/ledger/internal/audit);
// foundry audit verify recomputes, with the same code, the leaf of the
// entry the API shows it, so what a proof proves is what a reader sees.
// It is a protocol, like the API: an entry encoded today must encode to
// the same bytes with every later build.
//
// # Canonical encoding (version 1)
//
// An entry is encoded as the magic bytes "FAE1" followed by its fields in
// this fixed order, each as a length-prefixed byte string (the length an
// unsigned LEB128 varint, as encoding/binary.AppendUvarint writes it):
//
//	seq          decimal ASCII, no sign, no leading zeros ("0" for zero)
//	kind         UTF-8
//	at           RFC 3339 with nanoseconds in UTC, as time.RFC3339Nano prints it
//	actor        UTF-8 (who caused the movement: a contributor id, "admin", a signer)
//	subject      UTF-8 (whose CC moved, or what the entry is about)
//	amount       decimal ASCII micro-units, "-" for negatives, no leading zeros
//	attrs count  decimal ASCII
//	attrs        key, value, key, value ... (each length-prefixed), keys
//	             strictly ascending by byte order (so no key twice)
//
// The encoding is injective and every entry has exactly one encoding:
// Decode refuses anything Encode would not have produced (leading zeros,
// unsorted or duplicate keys, a non-UTC or non-canonical time, invalid
// UTF-8, trailing bytes). An entry's chain hash is SHA-256 over the
// previous entry's hash (32 zero bytes for the first entry) followed by
// the encoding.
//
// Not protojson or JSON: their output is not specified byte for byte (field
// order, number formatting and escaping may change between library
// versions), and a log must verify forever.
package auditlog

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/tlog"
)

// magic opens every encoded entry; its last byte is the encoding version.
const magic = "FAE1"

// maxField bounds one field's length when decoding, so a corrupt length
// cannot make Decode allocate gigabytes.
const maxField = 1 << 20

// The log's Merkle tree is tlog's (RFC 6962 hashing, as the Go checksum
// database and Certificate Transparency use), so any tlog implementation
// can check its proofs. Record 0 is GenesisRecord; record n (n >= 1) is the
// canonical encoding of the entry with seq n. A tree of size N therefore
// covers seq 1 to N-1, and a record's number is its entry's seq.

// GenesisRecord is record 0 of every log: it makes record numbers and
// sequence numbers the same (tlog counts records from 0, the chain from 1).
var GenesisRecord = []byte("foundry audit log v1\n")

// LeafHash is the tree's hash of a record: of an entry's canonical
// encoding, or of GenesisRecord.
func LeafHash(record []byte) [32]byte { return tlog.RecordHash(record) }

// Leaf is the tree's hash of the entry e: the leaf its seq must hold.
func Leaf(e Entry) [32]byte { return LeafHash(Encode(e)) }

// ChainHash is the chain hash of e appended after the entry whose hash is
// prev (32 zero bytes before the first entry): SHA-256(prev ‖ Encode(e)).
func ChainHash(prev [32]byte, e Entry) [32]byte {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(Encode(e))
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// Entry is one audit record.
type Entry struct {
	// Seq is the entry's position in the chain, from 1.
	Seq int64
	// Kind says what happened: a movement kind, "spread_fee", "freeze",
	// "unfreeze", "repair", ...
	Kind    string
	At      time.Time
	Actor   string
	Subject string
	// Amount is in micro-units (micro-CC or micro-USD, as Attrs["unit"] says).
	Amount int64
	// Attrs carries the rest (idea id, reference, rate, ...). Nil and empty
	// encode the same; Decode returns nil for none.
	Attrs map[string]string
}

// Encode returns the canonical encoding of e. The time is converted to UTC.
func Encode(e Entry) []byte {
	keys := make([]string, 0, len(e.Attrs))
	for k := range e.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b := make([]byte, 0, 128)
	b = append(b, magic...)
	b = AppendField(b, strconv.FormatInt(e.Seq, 10))
	b = AppendField(b, e.Kind)
	b = AppendField(b, e.At.UTC().Format(time.RFC3339Nano))
	b = AppendField(b, e.Actor)
	b = AppendField(b, e.Subject)
	b = AppendField(b, strconv.FormatInt(e.Amount, 10))
	b = AppendField(b, strconv.Itoa(len(keys)))
	for _, k := range keys {
		b = AppendField(b, k)
		b = AppendField(b, e.Attrs[k])
	}
	return b
}

// AppendField appends s to b as one field of the encoding: its length as
// an unsigned varint, then its bytes. Other fingerprints of the log (a
// repair's digest of the rows it accepted) frame their fields the same
// way, so no two sequences of fields share bytes.
func AppendField(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// ErrNotCanonical reports bytes that are not the canonical encoding of any entry.
var ErrNotCanonical = errors.New("not a canonical audit entry encoding")

// Decode reads an entry from its canonical encoding.
func Decode(b []byte) (Entry, error) {
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return Entry{}, fmt.Errorf("%w: bad magic", ErrNotCanonical)
	}
	d := decoder{b: b[len(magic):]}
	var e Entry
	e.Seq = d.int("seq")
	if e.Seq < 0 && d.err == nil {
		d.err = fmt.Errorf("%w: negative seq", ErrNotCanonical)
	}
	e.Kind = d.text("kind")
	at := d.text("at")
	if d.err == nil {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil || t.Location() != time.UTC || t.Format(time.RFC3339Nano) != at {
			d.err = fmt.Errorf("%w: at is not canonical RFC 3339 UTC", ErrNotCanonical)
		}
		e.At = t
	}
	e.Actor = d.text("actor")
	e.Subject = d.text("subject")
	e.Amount = d.int("amount")
	n := d.int("attrs count")
	if d.err == nil && (n < 0 || n > int64(len(d.b))) {
		d.err = fmt.Errorf("%w: attrs count %d", ErrNotCanonical, n)
	}
	prev := ""
	for i := int64(0); i < n && d.err == nil; i++ {
		k, v := d.text("attr key"), d.text("attr value")
		if d.err != nil {
			break
		}
		if i > 0 && k <= prev {
			d.err = fmt.Errorf("%w: attr keys not strictly ascending", ErrNotCanonical)
			break
		}
		if e.Attrs == nil {
			e.Attrs = make(map[string]string, n)
		}
		e.Attrs[k], prev = v, k
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes", ErrNotCanonical, len(d.b))
	}
	if d.err != nil {
		return Entry{}, d.err
	}
	return e, nil
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) raw(name string) string {
	if d.err != nil {
		return ""
	}
	n, k := binary.Uvarint(d.b)
	// k <= 0: truncated or overlong varint; a non-minimal varint is refused
	// too, so that every length has one encoding.
	if k <= 0 || k != len(binary.AppendUvarint(nil, n)) || n > maxField || n > uint64(len(d.b)-k) {
		d.err = fmt.Errorf("%w: bad length of %s", ErrNotCanonical, name)
		return ""
	}
	s := string(d.b[k : k+int(n)])
	d.b = d.b[k+int(n):]
	return s
}

func (d *decoder) text(name string) string {
	s := d.raw(name)
	if d.err == nil && !utf8.ValidString(s) {
		d.err = fmt.Errorf("%w: %s is not UTF-8", ErrNotCanonical, name)
	}
	return s
}

func (d *decoder) int(name string) int64 {
	s := d.raw(name)
	if d.err != nil {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != s {
		d.err = fmt.Errorf("%w: %s is not a canonical integer", ErrNotCanonical, name)
		return 0
	}
	return v
}

package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"
)

// Hash is a SHA-256 chain hash.
type Hash [sha256.Size]byte

// Genesis is the "previous hash" of the first entry.
var Genesis Hash

// String is the hash in lowercase hex, the form stored and shown.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ParseHash reads a hash from its hex form.
func ParseHash(s string) (Hash, bool) {
	var h Hash
	if len(s) != 2*len(h) {
		return h, false
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, false
	}
	return h, true
}

// Chain is the hash of e appended after prev: SHA-256(prev ‖ Encode(e)).
func Chain(prev Hash, e Entry) Hash {
	h := sha256.New()
	h.Write(prev[:])
	h.Write(Encode(e))
	var out Hash
	h.Sum(out[:0])
	return out
}

// Record is an entry as stored: the entry, its encoding as written, and the
// hashes the writer computed.
type Record struct {
	Entry Entry
	// Encoded is the canonical encoding stored beside the entry's columns;
	// the verifier checks both that the columns encode to it and that the
	// hash covers it.
	Encoded  []byte
	PrevHash Hash
	Hash     Hash
}

// Seal makes the record that appends e after prev.
func Seal(prev Hash, e Entry) Record {
	enc := Encode(e)
	return Record{Entry: e, Encoded: enc, PrevHash: prev, Hash: Chain(prev, e)}
}

// Result is what walking a chain found.
type Result struct {
	// OK is true when every record checked out.
	OK bool
	// Checked counts the records walked.
	Checked int64
	// LastVerified is the seq of the last record that checked out (0 when
	// none did).
	LastVerified int64
	// FirstDivergent is the seq of the first record that did not (0 when OK).
	FirstDivergent int64
	// Reason says what diverged ("" when OK).
	Reason string
}

// Verifier walks a chain one record at a time, so a chain of any length is
// verified in constant memory. The zero Verifier expects the chain from its
// first entry.
type Verifier struct {
	prev   Hash
	next   int64
	result Result
}

// Resume returns a Verifier that continues after a checkpoint: the record
// with seq lastSeq whose hash is lastHash (already verified).
func Resume(lastSeq int64, lastHash Hash) *Verifier {
	return &Verifier{prev: lastHash, next: lastSeq + 1, result: Result{LastVerified: lastSeq}}
}

// Add checks the next record; it returns false once the chain has diverged
// (later records are not checked: the break point is what repair needs).
func (v *Verifier) Add(r Record) bool {
	if v.result.FirstDivergent != 0 {
		return false
	}
	if v.next == 0 {
		v.next = 1
	}
	reason := ""
	switch {
	case r.Entry.Seq != v.next:
		reason = "sequence gap: expected seq " + strconv.FormatInt(v.next, 10)
	case r.PrevHash != v.prev:
		reason = "previous hash does not match the preceding entry"
	case !bytes.Equal(Encode(r.Entry), r.Encoded):
		reason = "entry fields do not match their stored encoding"
	case Chain(v.prev, r.Entry) != r.Hash:
		reason = "hash does not match the entry"
	}
	v.result.Checked++
	if reason != "" {
		v.result.FirstDivergent = r.Entry.Seq
		v.result.Reason = reason
		return false
	}
	v.prev, v.result.LastVerified = r.Hash, r.Entry.Seq
	v.next++
	return true
}

// Result is the verdict so far.
func (v *Verifier) Result() Result {
	out := v.result
	out.OK = out.FirstDivergent == 0
	return out
}

// Head is the hash the next entry must chain to: the last verified record's.
func (v *Verifier) Head() Hash { return v.prev }

// Verify walks records from the start of the chain.
func Verify(records []Record) Result {
	var v Verifier
	for _, r := range records {
		if !v.Add(r) {
			break
		}
	}
	return v.Result()
}

// KindRepair is the kind of the entry a repair appends.
const KindRepair = "repair"

// RepairEntry is the entry that records a detected break: it names the last
// verified and first divergent seqs and why. History is never rewritten:
// the repair entry chains to the current head, so the chain stays
// append-only and the break stays visible; verification after a repair
// resumes from the repair entry (see docs/ledger.md).
func RepairEntry(seq int64, at time.Time, actor string, found Result) Entry {
	return Entry{
		Seq: seq, Kind: KindRepair, At: at, Actor: actor, Subject: "audit",
		Attrs: map[string]string{
			"last_verified":   strconv.FormatInt(found.LastVerified, 10),
			"first_divergent": strconv.FormatInt(found.FirstDivergent, 10),
			"reason":          found.Reason,
		},
	}
}

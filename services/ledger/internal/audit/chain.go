package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"slices"
	"strconv"

	"github.com/foundryhq/foundry/services/platform/auditlog"
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

// Chain is the hash of e appended after prev: SHA-256(prev ‖ Encode(e))
// (auditlog.ChainHash).
func Chain(prev Hash, e Entry) Hash { return auditlog.ChainHash(prev, e) }

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
	// EntryID is the journal entry the record is the audit entry of ("" for
	// none): a link kept beside the record, not part of what is hashed.
	EntryID string
}

// Seal makes the record that appends e after prev.
func Seal(prev Hash, e Entry) Record {
	enc := Encode(e)
	return Record{Entry: e, Encoded: enc, PrevHash: prev, Hash: Chain(prev, e)}
}

// Result is what walking a chain found.
type Result struct {
	// OK is true when every record checked out, or lay in a break a
	// repair recorded (see Break).
	OK bool
	// Checked counts the records walked, those of repaired breaks included.
	Checked int64
	// LastVerified is the seq of the last record that checked out before
	// the first divergence (0 when none did).
	LastVerified int64
	// FirstDivergent is the seq of the first record that did not (0 when OK).
	FirstDivergent int64
	// Reason says what diverged ("" when OK).
	Reason string
	// Repaired are the breaks recorded by repairs that the walk met and
	// accepted, in chain order: they stay reported, never silently valid.
	Repaired []Break
}

// Verifier walks a chain one record at a time, so a chain of any length is
// verified in constant memory. It always starts at the first entry: a
// repair does not move the start (history before a repair would then never
// be checked again); instead the breaks repairs recorded are given to
// NewVerifier and accepted where they are, exactly as recorded, while every
// other record is checked. The zero Verifier knows no repairs.
type Verifier struct {
	prev   Hash
	next   int64
	result Result
	// breaks are the recorded breaks by their first seq.
	breaks map[int64]Break
	// skip is the recorded break being walked through, if any.
	skip *skipping
	// pending are the breaks accepted so far whose repair entry the walk
	// has not yet verified, by the repair entry's seq.
	pending map[int64]pendingBreak
	div     Divergence
	// skipped is true when the last record added lay in a recorded break.
	skipped bool
}

// skipping is the walk through a recorded break.
type skipping struct {
	b Break
	// start is the hash the break's first entry had to chain to.
	start Hash
	// first is the first record met from the break on (nil: none yet).
	first *Record
	h     hash.Hash
}

type pendingBreak struct {
	b Break
	// digest is what the rows of the break hash to now.
	digest string
}

// NewVerifier returns a Verifier that accepts the recorded breaks (from
// ParseRepair): where the walk diverges at a break's first seq, the rows up
// to its last seq are not checked but must still be exactly the rows the
// repair saw (their digest), the walk resumes from the hash the repair
// recorded, and the repair entry itself must verify later in the walk.
// Where several repairs name the same first seq, the latest one holds: a
// repair made after an earlier one stopped holding supersedes it.
func NewVerifier(breaks []Break) *Verifier {
	v := &Verifier{breaks: make(map[int64]Break, len(breaks)), pending: map[int64]pendingBreak{}}
	for _, b := range breaks {
		if old, ok := v.breaks[b.From]; !ok || b.RepairSeq > old.RepairSeq {
			v.breaks[b.From] = b
		}
	}
	return v
}

// ResumeVerifier returns a Verifier that starts after a stretch already
// verified: at seq next, whose record must chain to prev (the hash of
// seq next-1). Incremental verification resumes where the last one
// stopped; breaks are as for NewVerifier (those before next are ignored).
func ResumeVerifier(breaks []Break, next int64, prev Hash) *Verifier {
	v := NewVerifier(breaks)
	if next > 1 {
		v.next, v.prev, v.result.LastVerified = next, prev, next-1
	}
	return v
}

// Skipped reports whether the last record Add accepted lay in a recorded
// break (so it was not checked).
func (v *Verifier) Skipped() bool { return v.skipped }

// check says why r does not follow the records verified so far ("" when
// it does).
func (v *Verifier) check(r Record) string {
	switch {
	case r.Entry.Seq != v.next:
		return "sequence gap: expected seq " + strconv.FormatInt(v.next, 10) + ", found seq " + strconv.FormatInt(r.Entry.Seq, 10)
	case r.PrevHash != v.prev:
		return "previous hash does not match the preceding entry"
	case !bytes.Equal(Encode(r.Entry), r.Encoded):
		return "entry fields do not match their stored encoding"
	case Chain(v.prev, r.Entry) != r.Hash:
		return "hash does not match the entry"
	}
	return ""
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
	v.result.Checked++
	v.skipped = false
	// Each round either accepts r, diverges, or enters a recorded break
	// that has not been used yet, so the loop ends.
	for {
		if s := v.skip; s != nil {
			if r.Entry.Seq <= s.b.To {
				if s.first == nil {
					s.first = &r
				}
				writeDigest(s.h, r)
				v.skipped = true
				return true
			}
			if !v.endSkip(&r) {
				return false
			}
		}
		reason := v.check(r)
		if reason == "" {
			v.accept(r)
			return true
		}
		b, ok := v.breaks[v.next]
		if !ok {
			// The first seq that does not check out: the record's own, or,
			// where records are missing, the first one missing.
			v.diverge(min(r.Entry.Seq, v.next), reason, Divergence{Seq: v.next, Prev: v.prev, Found: &r})
			return false
		}
		delete(v.breaks, v.next)
		v.skip = &skipping{b: b, start: v.prev, h: sha256.New()}
	}
}

func (v *Verifier) accept(r Record) {
	v.prev, v.result.LastVerified = r.Hash, r.Entry.Seq
	v.next++
	if p, ok := v.pending[r.Entry.Seq]; ok {
		if b, ok := ParseRepair(r); ok && b == p.b {
			delete(v.pending, r.Entry.Seq)
		}
	}
}

// endSkip leaves the recorded break being walked through; after is the
// record that follows it (nil at the end of the walk). It diverges when
// the break's rows are no longer those the repair saw.
func (v *Verifier) endSkip(after *Record) bool {
	s := v.skip
	v.skip = nil
	if s.first == nil {
		s.first = after
	}
	digest := hex.EncodeToString(s.h.Sum(nil))
	if !s.b.Legacy && digest != s.b.Digest {
		v.diverge(s.b.From, fmt.Sprintf("the entries repair seq %d accepted (seq %d to %d) changed after the repair",
			s.b.RepairSeq, s.b.From, s.b.To), Divergence{Seq: s.b.From, Prev: s.start, Found: s.first, Replaces: &s.b})
		return false
	}
	v.prev, v.next = s.b.Resume, s.b.To+1
	v.result.Repaired = append(v.result.Repaired, s.b)
	v.pending[s.b.RepairSeq] = pendingBreak{b: s.b, digest: digest}
	return true
}

func (v *Verifier) diverge(seq int64, reason string, d Divergence) {
	v.result.FirstDivergent, v.result.Reason, v.div = seq, reason, d
}

// Finish ends a walk that covered every record up to head (the chain's
// head, or the end of a stretch walked on its own) and returns the
// verdict: entries missing before head are a break too, and so is a
// recorded break whose repair entry, at or before head, did not verify
// (the repair is what makes it acceptable; one after head is for a later
// stretch to meet).
func (v *Verifier) Finish(head int64) Result {
	if v.result.FirstDivergent == 0 && v.skip != nil {
		v.endSkip(nil)
	}
	if v.next == 0 {
		v.next = 1
	}
	if v.result.FirstDivergent == 0 && v.next <= head {
		v.diverge(v.next, "entries missing: the chain's head is seq "+strconv.FormatInt(head, 10),
			Divergence{Seq: v.next, Prev: v.prev})
	}
	if v.result.FirstDivergent == 0 && len(v.pending) > 0 {
		var first *pendingBreak
		for _, p := range v.pending {
			if p.b.RepairSeq <= head && (first == nil || p.b.From < first.b.From) {
				first = &p
			}
		}
		if first != nil {
			v.result.LastVerified = first.b.From - 1
			v.diverge(first.b.From, fmt.Sprintf("repair seq %d, which accepted seq %d to %d, does not verify",
				first.b.RepairSeq, first.b.From, first.b.To),
				Divergence{Seq: first.b.From, Replaces: &first.b, Unconfirmed: true, Digest: first.digest})
		}
	}
	return v.Result()
}

// Result is the verdict so far.
func (v *Verifier) Result() Result {
	out := v.result
	out.OK = out.FirstDivergent == 0
	out.Repaired = slices.Clone(out.Repaired)
	return out
}

// Divergence describes the first divergence, for a repair to record; ok is
// false while the chain has not diverged.
func (v *Verifier) Divergence() (d Divergence, ok bool) {
	return v.div, v.result.FirstDivergent != 0
}

// Head is the hash the next entry must chain to: the last verified record's.
func (v *Verifier) Head() Hash { return v.prev }

// Verify walks records from the start of the chain, knowing no repairs.
func Verify(records []Record) Result {
	var v Verifier
	for _, r := range records {
		if !v.Add(r) {
			break
		}
	}
	return v.Result()
}

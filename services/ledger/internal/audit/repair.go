package audit

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"strconv"
	"time"

	"github.com/foundryhq/foundry/services/platform/auditlog"
)

// KindRepair is the kind of the entry a repair appends.
const KindRepair = "repair"

// Break is a stretch of the chain that a repair accepted as broken. The
// repair never rewrites a row: it appends an entry recording the break, and
// verification, which always walks the whole chain, accepts exactly that
// stretch and checks everything else:
//
//   - the rows with seq From to To (inclusive) are not checked, but they
//     must still be exactly the rows the repair saw: Digest fingerprints
//     them (every column, the stored encoding and both hashes), so a row
//     of the stretch edited, added or deleted after the repair is a break
//     again;
//   - the entry after To must chain to Resume, which the repair chose as
//     the hash the rest of the chain continues from;
//   - the repair entry itself must verify.
//
// One tampered row is a stretch of one row; deleted rows are a stretch of
// missing rows (Digest of nothing), a cut-off tail the stretch up to the
// head the repair found.
type Break struct {
	// RepairSeq is the seq of the repair entry that records the break.
	RepairSeq int64
	From, To  int64
	Resume    Hash
	// Digest is the hex SHA-256 fingerprint of the rows found from From to
	// To when the repair was made (see Digest).
	Digest string
	// Reason, LastVerified and FirstDivergent are what verification
	// reported when the repair was made.
	Reason         string
	LastVerified   int64
	FirstDivergent int64
	// Legacy marks a repair made before repairs recorded their stretch: its
	// entry names only the break (last verified, first divergent), and
	// verification then resumed from the repair entry. It is read as the
	// stretch from the break to the entry before the repair, resuming from
	// the hash the repair entry chains to, and its rows are not
	// fingerprinted: what the repair did not record cannot be checked, but
	// everything before the break and after the repair is.
	Legacy bool
}

// Divergence is where a walk found the chain broken: what a repair needs
// to record the break (PlanBreak).
type Divergence struct {
	// Seq is the seq the walk expected next, the break's first.
	Seq int64
	// Prev is the hash that entry had to chain to.
	Prev Hash
	// Found is the record found in its place: the entry itself, or the
	// next one present when entries are missing; nil when none is (the
	// tail is cut off).
	Found *Record
	// Replaces is the recorded break that stopped holding here: its rows
	// changed after the repair, or (Unconfirmed) its repair entry does
	// not verify.
	Replaces    *Break
	Unconfirmed bool
	// Digest is what the rows of Replaces hash to now (when Unconfirmed).
	Digest string
}

// Digest fingerprints stored records: the hex SHA-256 over, for each, its
// seq, the canonical encoding of its columns, its stored encoding and its
// two hashes. Of no records it is the SHA-256 of nothing.
func Digest(records ...Record) string {
	h := sha256.New()
	for _, r := range records {
		writeDigest(h, r)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func writeDigest(h hash.Hash, r Record) {
	b := auditlog.AppendField(nil, strconv.FormatInt(r.Entry.Seq, 10))
	b = auditlog.AppendField(b, string(Encode(r.Entry)))
	b = auditlog.AppendField(b, string(r.Encoded))
	b = append(b, r.PrevHash[:]...)
	b = append(b, r.Hash[:]...)
	h.Write(b)
}

// PlanBreak is the stretch a repair records for the divergence d. head and
// headHash are the chain's head (the repair entry will chain to it);
// nextPrev is the previous hash stored in the first entry after the one
// found at the break (headHash when that one is the head).
//
//   - A tail cut off (nothing found): the stretch up to the head, resuming
//     from the head's hash, which the repair entry chains to.
//   - Entries missing (the entry found is a later one): the missing seqs,
//     resuming from the hash the entry found chains to; that entry is then
//     checked as any other.
//   - An entry that does not check out: that entry alone. The rest of the
//     chain resumes from its stored hash, or from the hash its columns give
//     (after its expected or its stored previous hash), whichever the next
//     entry chains to: then one edited row — its columns, its encoding,
//     its hash or its previous hash — is one break, and the entries after
//     it are checked again. When none matches, the next entry is broken
//     too, and is left for verification to report.
//   - A recorded break whose repair entry does not verify: the same
//     stretch again, now recorded by an entry that does.
func PlanBreak(d Divergence, nextPrev Hash, head int64, headHash Hash) Break {
	switch {
	case d.Unconfirmed && d.Replaces != nil:
		return Break{From: d.Replaces.From, To: d.Replaces.To, Resume: d.Replaces.Resume, Digest: d.Digest}
	case d.Found == nil:
		return Break{From: d.Seq, To: head, Resume: headHash, Digest: Digest()}
	case d.Found.Entry.Seq > d.Seq:
		return Break{From: d.Seq, To: d.Found.Entry.Seq - 1, Resume: d.Found.PrevHash, Digest: Digest()}
	}
	f := *d.Found
	resume := f.Hash
	for _, h := range []Hash{f.Hash, Chain(d.Prev, f.Entry), Chain(f.PrevHash, f.Entry)} {
		if h == nextPrev {
			resume = h
			break
		}
	}
	return Break{From: d.Seq, To: d.Seq, Resume: resume, Digest: Digest(f)}
}

// RepairEntry is the entry that records a break: what verification found
// (last verified, first divergent, why) and the stretch accepted (see
// Break). History is never rewritten: the repair entry chains to the
// current head, so the chain stays append-only and the break stays
// visible and reported.
func RepairEntry(seq int64, at time.Time, actor string, found Result, b Break) Entry {
	return Entry{
		Seq: seq, Kind: KindRepair, At: at, Actor: actor, Subject: "audit",
		Attrs: map[string]string{
			"last_verified":   strconv.FormatInt(found.LastVerified, 10),
			"first_divergent": strconv.FormatInt(found.FirstDivergent, 10),
			"reason":          found.Reason,
			"repaired_from":   strconv.FormatInt(b.From, 10),
			"repaired_to":     strconv.FormatInt(b.To, 10),
			"resume_hash":     b.Resume.String(),
			"digest":          b.Digest,
		},
	}
}

// ParseRepair reads the break a repair entry records. ok is false for any
// other entry, and for a repair entry that is not consistent with itself
// (its columns encode to its stored encoding, its hash covers that
// encoding after its previous hash) or names a stretch that is not before
// it: a damaged record excuses nothing.
func ParseRepair(r Record) (Break, bool) {
	e := r.Entry
	if e.Kind != KindRepair || e.Seq < 2 || !bytes.Equal(Encode(e), r.Encoded) || Chain(r.PrevHash, e) != r.Hash {
		return Break{}, false
	}
	num := func(k string) (int64, bool) {
		v, err := strconv.ParseInt(e.Attrs[k], 10, 64)
		return v, err == nil && strconv.FormatInt(v, 10) == e.Attrs[k]
	}
	last, okLast := num("last_verified")
	first, okFirst := num("first_divergent")
	if !okLast || !okFirst {
		return Break{}, false
	}
	b := Break{RepairSeq: e.Seq, Reason: e.Attrs["reason"], LastVerified: last, FirstDivergent: first}
	if _, ranged := e.Attrs["repaired_from"]; !ranged {
		b.From, b.To, b.Resume, b.Legacy = last+1, e.Seq-1, r.PrevHash, true
	} else {
		from, okFrom := num("repaired_from")
		to, okTo := num("repaired_to")
		resume, okResume := ParseHash(e.Attrs["resume_hash"])
		digest, okDigest := ParseHash(e.Attrs["digest"])
		if !okFrom || !okTo || !okResume || !okDigest || digest.String() != e.Attrs["digest"] {
			return Break{}, false
		}
		b.From, b.To, b.Resume, b.Digest = from, to, resume, e.Attrs["digest"]
	}
	if b.From < 1 || b.From > b.To || b.To >= e.Seq {
		return Break{}, false
	}
	return b, true
}

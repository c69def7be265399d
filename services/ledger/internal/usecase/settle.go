package usecase

import (
	"context"
	"errors"
	"strings"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// A repair mends without rewriting: a correcting journal entry names each
// journal entry it corrected, with the digest of that entry as it found
// it, and a recorded break accepts an audit row as it found it while the
// log's signed content stays what the break's entry recorded. Every check
// that compares the journal with the log (the scrubber, the coherence
// check, a repair's own re-check) accepts exactly those places, as long as
// they stay as the repair saw them: settled says which they are.

// correctsPrefix marks a correction's attribute naming a journal entry it
// corrected: the entry's id after it, the digest of the entry as found
// (audit.Movement.Digest; the zero movement's for an entry that was
// missing) as its value.
const correctsPrefix = "corrects:"

// settled is what the checks accept as mended.
type settled struct {
	// corrected are the journal entries corrections named, by id, each
	// with the digest of the movement the correction saw.
	corrected map[string]string
	// breaks are the breaks repairs recorded.
	breaks []audit.Break
}

// settledPlaces reads the corrections and the recorded breaks. A
// correction counts only when it is in the signed log as it stands (its
// fields hash to the tree's leaf for its seq): a row written beside the
// log excuses nothing.
func (a *App) settledPlaces(ctx context.Context, r Repos) (settled, error) {
	out := settled{corrected: map[string]string{}}
	recs, err := r.Audit.Corrections(ctx)
	if err != nil {
		return out, err
	}
	if len(recs) > 0 {
		idx := make([]int64, len(recs))
		for i, rec := range recs {
			idx[i] = tlog.StoredHashIndex(0, rec.Entry.Seq)
		}
		leaves, err := r.Audit.TreeHashes(ctx, idx)
		if err != nil && !isNotFound(err) {
			return out, err
		}
		for i, rec := range recs {
			if err != nil || audit.Leaf(rec.Entry) != leaves[i] {
				continue
			}
			for k, v := range rec.Entry.Attrs {
				if id, ok := strings.CutPrefix(k, correctsPrefix); ok {
					out.corrected[id] = v
				}
			}
		}
	}
	eco, err := r.Credit.Economy(ctx)
	if err != nil {
		return out, err
	}
	out.breaks, err = a.breaks(ctx, r, eco.AuditSeq)
	return out, err
}

// inBreak reports whether seq lies in a recorded break.
func (s settled) inBreak(seq int64) bool {
	for _, b := range s.breaks {
		if b.From <= seq && seq <= b.To {
			return true
		}
	}
	return false
}

// accepts reports whether the journal entry, as it is now (its movement,
// nil when it is missing), is one a correction mended as it found it.
func (s settled) accepts(id string, m *audit.Movement) bool {
	digest, ok := s.corrected[id]
	if !ok {
		return false
	}
	if m == nil {
		return digest == (audit.Movement{}).Digest()
	}
	return digest == m.Digest()
}

// linkProblem is a journal entry whose link to the audit log a check
// found wrong.
type linkProblem struct {
	entryID string
	seq     int64
	detail  string
}

// unsettled keeps the link problems no repair settled: a journal entry a
// correction mended as it still is, or one recorded, in the log's signed
// content, by an audit entry whose row a recorded break accepted (its
// columns may say another kind than it recorded), is settled.
func (a *App) unsettled(ctx context.Context, r Repos, s settled, problems []linkProblem) ([]linkProblem, error) {
	if len(problems) == 0 {
		return nil, nil
	}
	ids := make([]string, len(problems))
	for i, p := range problems {
		ids[i] = p.entryID
	}
	journal, err := r.Integrity.JournalMovements(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []linkProblem
	for _, p := range problems {
		j, ok := journal[p.entryID]
		var jm *audit.Movement
		if ok {
			jm = &j
		}
		if s.accepts(p.entryID, jm) {
			continue
		}
		if ok && p.seq > 0 && s.inBreak(p.seq) {
			recorded, err := a.signedAt(ctx, r, p.seq)
			if err != nil {
				return nil, err
			}
			if recorded != nil && recorded.Attrs["entry_id"] == p.entryID && recorded.Kind == j.Kind {
				continue
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// signedAt is the log's signed content of the entry with seq: the stored
// row's fields when they hash to the tree's leaf, else its stored
// encoding when that does; nil when neither is what was signed (or the
// row or leaf is missing).
func (a *App) signedAt(ctx context.Context, r Repos, seq int64) (*audit.Entry, error) {
	recs, err := r.Audit.Range(ctx, seq-1, 1)
	if err != nil || len(recs) == 0 || recs[0].Entry.Seq != seq {
		return nil, err
	}
	leaves, err := r.Audit.TreeHashes(ctx, []int64{tlog.StoredHashIndex(0, seq)})
	if isNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if audit.Leaf(recs[0].Entry) == leaves[0] {
		return &recs[0].Entry, nil
	}
	if e, ok := signedContent(recs[0], leaves[0]); ok {
		return &e, nil
	}
	return nil, nil
}

// isNotFound reports a missing row or tree hash.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

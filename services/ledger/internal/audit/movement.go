package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/foundryhq/foundry/services/platform/auditlog"
)

// Movement is a CC movement as one side records it: what its audit entry
// says (Recorded) or what the journal holds. The log is the truth a
// journal is checked against: the entry's hash and leaf cover these
// fields, so a journal whose lines, amount or owner were edited, however
// consistently (both lines, the balances, the supply), no longer says what
// the log does.
type Movement struct {
	// EntryID is the journal entry ("" when the audit entry names none).
	EntryID     string
	Kind        string
	Contributor string
	Idea        string
	// Amount is the CC moved, in micro-CC.
	Amount int64
	// Lines are the balances the movement changed: account name → delta
	// in micro-CC.
	Lines map[string]int64
}

// linePrefix marks an attribute that records one journal line: the
// account's name after it, the delta in decimal micro-CC as its value.
const linePrefix = "line:"

// LineAttr is the attribute that records a line on account.
func LineAttr(account string) string { return linePrefix + account }

// Recorded reads the movement a movement's audit entry records: its
// kind, its subject (whose CC moved), its amount and its idea_id,
// entry_id and line attributes. A line whose value is not a decimal
// integer is read as 0, which no journal line holds (they are never
// zero), so a damaged attribute is a difference, never an excuse.
func Recorded(e Entry) Movement {
	m := Movement{EntryID: e.Attrs["entry_id"], Kind: e.Kind, Contributor: e.Subject, Idea: e.Attrs["idea_id"],
		Amount: e.Amount, Lines: map[string]int64{}}
	for k, v := range e.Attrs {
		if account, ok := strings.CutPrefix(k, linePrefix); ok {
			d, err := strconv.ParseInt(v, 10, 64)
			if err != nil || strconv.FormatInt(d, 10) != v {
				d = 0
			}
			m.Lines[account] = d
		}
	}
	return m
}

// Differences says how the journal's movement differs from what the log
// recorded (m), one phrase each, accounts in name order; none when they
// agree.
func (m Movement) Differences(journal Movement) []string {
	var out []string
	field := func(name, logged, found string) {
		if logged != found {
			out = append(out, fmt.Sprintf("%s %q where the log records %q", name, found, logged))
		}
	}
	field("kind", m.Kind, journal.Kind)
	field("contributor", m.Contributor, journal.Contributor)
	field("idea", m.Idea, journal.Idea)
	if m.Amount != journal.Amount {
		out = append(out, fmt.Sprintf("amount %d where the log records %d micro-CC", journal.Amount, m.Amount))
	}
	accounts := slices.Sorted(maps.Keys(m.Lines))
	for a := range journal.Lines {
		if _, ok := m.Lines[a]; !ok {
			accounts = append(accounts, a)
		}
	}
	slices.Sort(accounts)
	for _, a := range slices.Compact(accounts) {
		logged, lok := m.Lines[a]
		found, fok := journal.Lines[a]
		switch {
		case !fok:
			out = append(out, fmt.Sprintf("no line on %s where the log records %d", a, logged))
		case !lok:
			out = append(out, fmt.Sprintf("a line of %d on %s that the log does not record", found, a))
		case logged != found:
			out = append(out, fmt.Sprintf("a line of %d on %s where the log records %d", found, a, logged))
		}
	}
	return out
}

// Digest fingerprints the movement as found: a correction names the
// journal entries it corrected by id and digest, so an entry accepted as
// corrected is accepted only as long as it stays what the correction saw.
// The digest of no movement (a journal entry that is missing) is that of
// the zero Movement.
func (m Movement) Digest() string {
	h := sha256.New()
	b := auditlog.AppendField(nil, m.EntryID)
	b = auditlog.AppendField(b, m.Kind)
	b = auditlog.AppendField(b, m.Contributor)
	b = auditlog.AppendField(b, m.Idea)
	b = auditlog.AppendField(b, strconv.FormatInt(m.Amount, 10))
	for _, a := range slices.Sorted(maps.Keys(m.Lines)) {
		b = auditlog.AppendField(b, a)
		b = auditlog.AppendField(b, strconv.FormatInt(m.Lines[a], 10))
	}
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}

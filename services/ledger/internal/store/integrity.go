package store

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// Finding is an integrity finding: a place where the audit log, the
// journal, the cached balances or the supply disagree with what the
// ledger signed. An open one holds the economy at Mode until a repair
// resolves it.
type Finding struct {
	ID string
	// Place identifies what is wrong (its kind and its seq, journal entry
	// or account): at most one finding is open per place.
	Place   string
	Kind    string
	Mode    string
	Seq     int64
	EntryID string
	Account string
	Detail  string
	FoundBy string
	FoundAt time.Time
	// ResolvedAt and ResolvedBy are zero while it is open.
	ResolvedAt time.Time
	ResolvedBy string
}

// SealedState is state a use case keeps for itself between runs (the
// scrubber's place in its cycle), with the MAC that makes it its own: the
// use case encodes State and checks MAC; the store keeps them.
type SealedState struct {
	State string
	// KeyID names the key MAC was made with.
	KeyID     string
	MAC       string
	UpdatedAt time.Time
}

// JournalKey is a journal entry's place in the journal's (created_at, id)
// order; the zero key is before the first entry.
type JournalKey struct {
	CreatedAt time.Time
	ID        string
}

// JournalLink is a journal entry and the audit entry that records it, as
// one statement read them.
type JournalLink struct {
	Key  JournalKey
	Kind string
	// AuditSeq and AuditKind are the sequenced audit entry that names the
	// entry (0 and "" for none); QueuedKind the queued one's ("" for none).
	AuditSeq   int64
	AuditKind  string
	QueuedKind string
	// LegacySeq is the entry's own audit_seq (entries from before
	// migration 0012 were linked by it; 0 since).
	LegacySeq int64
}

// CoherencePlace is where the coherence check's reconciliation resumes:
// after the journal entry JournalAfter and after the audit entry
// LogAfter. The zero place is the start of both.
type CoherencePlace struct {
	JournalAfter JournalKey
	LogAfter     int64
	UpdatedAt    time.Time
}

// AccountSum is an account's cached balance beside the sum of its
// journal lines, read in one statement.
type AccountSum struct {
	Account string
	Balance money.Micros
	Lines   money.Micros
	// OwnersAgree is false when a line names another bucket, contributor
	// or idea than the account does.
	OwnersAgree bool
}

// Integrity is the storage of the ledger's checks of itself over one
// querier: the integrity findings, the scrubber's state, and the reads
// the scrubber makes of the journal and the balances a slice at a time.
// Each read is one statement, so what it compares is one snapshot even
// while movements commit.
type Integrity interface {
	// InsertFinding records a finding unless one is open for its place;
	// it reports whether it did.
	InsertFinding(ctx context.Context, f Finding) (bool, error)
	// OpenFindings returns up to limit open findings, oldest first, and
	// how many are open.
	OpenFindings(ctx context.Context, limit int) ([]Finding, int, error)
	// ResolveFindings closes every open finding, returning how many.
	ResolveFindings(ctx context.Context, at time.Time, by string) (int, error)
	// LastResolved is when findings were last resolved (zero before the
	// first repair that closed any).
	LastResolved(ctx context.Context) (time.Time, error)

	// ScrubState reads the scrubber's state; ErrNotFound before its first
	// step.
	ScrubState(ctx context.Context) (SealedState, error)
	// SaveScrubState writes the scrubber's state.
	SaveScrubState(ctx context.Context, s SealedState) error

	// CoherencePlace reads where the coherence check resumes (the zero
	// place before its first check).
	CoherencePlace(ctx context.Context) (CoherencePlace, error)
	// SaveCoherencePlace writes where the coherence check resumes.
	SaveCoherencePlace(ctx context.Context, p CoherencePlace) error
	// UnreconciledLog returns up to limit of the audit entries after seq
	// after and at most through whose link to the journal is wrong, by
	// seq: a movement's entry that names no journal entry, names one that
	// is not there, or names it differently in its column and its
	// attributes; another entry whose attributes name a journal entry
	// that is not there (a spread fee).
	UnreconciledLog(ctx context.Context, after, through int64, limit int) ([]Discrepancy, error)

	// JournalMovements reads the journal entries with these ids as
	// movements (their lines by the account names stored), by id; an id
	// with no entry is absent.
	JournalMovements(ctx context.Context, ids []string) (map[string]audit.Movement, error)
	// JournalLinks returns up to limit journal entries after after, in
	// (created_at, id) order, each with the audit entry that records it.
	JournalLinks(ctx context.Context, after JournalKey, limit int) ([]JournalLink, error)
	// AccountSums returns up to limit accounts after after, in name
	// order, each with its cached balance and the sum of its lines.
	AccountSums(ctx context.Context, after string, limit int) ([]AccountSum, error)
	// Supply returns the CC outstanding the economy row holds and the
	// issuance account's balance (whose negation it must be).
	Supply(ctx context.Context) (outstanding, issuance money.Micros, err error)

	// Accounts reads the accounts with these names (by name; a name with
	// no account is absent).
	Accounts(ctx context.Context, names []string) (map[string]credit.Account, error)
	// RestoreBalance sets an account's cached balance (a repair's).
	RestoreBalance(ctx context.Context, account string, balance money.Micros) error
	// AccountSum is AccountSums of one account (false when it has none).
	AccountSum(ctx context.Context, account string) (AccountSum, bool, error)
	// RecentMovements returns the journal entries of a contributor at or
	// after since, newest first, at most limit, each with the audit entry
	// that records it (sequenced or queued).
	RecentMovements(ctx context.Context, contributorID string, since time.Time, limit int) ([]RecentMovement, error)
}

// RecentMovement is a journal entry with the audit entry that records it.
type RecentMovement struct {
	EntryID string
	// Logged is the audit entry (sequenced or queued); nil for none.
	Logged *audit.Entry
	// Seq is the sequenced audit entry's seq (0 while queued or for none).
	Seq int64
}

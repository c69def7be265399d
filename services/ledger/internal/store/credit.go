package store

import (
	"context"
	"errors"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// Errors of the credit repositories.
var (
	// ErrInsufficient is returned when an entry would take a contributor
	// account below zero; nothing is written.
	ErrInsufficient = errors.New("insufficient balance")
	// ErrAuditSeqTaken is returned when an entry names an audit seq that
	// another journal entry already holds: the audit trail's head was moved
	// back, and recording the entry would make two movements share one
	// audit entry. Nothing is written.
	ErrAuditSeqTaken = errors.New("audit seq already records another journal entry")
)

// Economy is the single row every CC movement locks: the treasury, the CC
// outstanding, the economy's mode and the audit chain's head.
type Economy struct {
	TreasuryUSD   money.Micros
	OutstandingCC money.Micros
	Mode          string
	ModeReason    string
	ModeActor     string
	ModeSince     time.Time
	AuditSeq      int64
	AuditHead     audit.Hash
	// (The row's verify_from_seq and verify_from_hash are no longer read:
	// verification always walks the whole chain, and the breaks repairs
	// accepted are recorded in the repair entries; see the audit package.)
	UpdatedAt time.Time
}

// JournalEntry is a credit.Entry as recorded: with its id, whose CC moved,
// the idea it concerns, and the audit entry that records it.
type JournalEntry struct {
	ID            string
	Entry         credit.Entry
	ContributorID string
	IdeaID        string
	// Amount is the CC moved (positive), for history and reports.
	Amount    money.Micros
	AuditSeq  int64
	CreatedAt time.Time
}

// Discrepancy is one place where the journal and the audit trail disagree.
type Discrepancy struct {
	// AuditSeq is the audit entry concerned (the one the journal entry
	// names, or the movement's audit entry that names no journal entry).
	AuditSeq int64
	// EntryID is the journal entry concerned ("" when there is none).
	EntryID string
	// Problem says what disagrees, for people.
	Problem string
}

// Balances are a contributor's CC by bucket.
type Balances struct {
	Available money.Micros
	Staked    money.Micros
	Cooling   money.Micros
}

// Position is CC a contributor has staked on one idea.
type Position struct {
	IdeaID string
	Amount money.Micros
	// Since is when the contributor first staked on the idea.
	Since time.Time
}

// Deposit is a confirmed USD deposit that minted CC.
type Deposit struct {
	Reference     string
	EntryID       string
	ContributorID string
	AmountUSD     money.Micros
	MintedCC      money.Micros
	// BuyRate is the rate it minted at; FeeUSD the spread it kept.
	BuyRate   money.Micros
	FeeUSD    money.Micros
	CreatedAt time.Time
}

// CoolingLot is CC unstaked from an idea, available at AvailableAt.
type CoolingLot struct {
	ID            string
	ContributorID string
	IdeaID        string
	Amount        money.Micros
	AvailableAt   time.Time
	EntryID       string
	CreatedAt     time.Time
}

// Pledge is a time pledge on an idea.
type Pledge struct {
	ID            string
	ContributorID string
	IdeaID        string
	MicroHours    money.Micros
	CCEquivalent  money.Micros
	CreatedAt     time.Time
}

// OracleReading is one rate-source reading with the breaker state it left.
type OracleReading struct {
	ID      string
	Reading credit.Reading
	Source  string
	Verdict credit.Verdict
	State   credit.BreakerState
}

// Incident is a freeze, an unfreeze, a breaker trip or a monitor finding.
type Incident struct {
	ID         string
	Kind       string
	Severity   string
	Detail     string
	Actor      string
	CreatedAt  time.Time
	ResolvedAt time.Time
}

// FreezeNonce is the nonce of a signed freeze that was accepted (whatever
// the freeze then did), with the time it was signed and seen.
type FreezeNonce struct {
	SignerID string
	Nonce    string
	IssuedAt time.Time
	SeenAt   time.Time
}

// Credit is the credit economy's storage over one querier. Every method
// that writes is called inside the use case's transaction, after
// LockEconomy, so movements are serialised.
type Credit interface {
	// LockEconomy reads the economy row and locks it until the transaction
	// ends (FOR UPDATE on Postgres; SQLite holds the write lock already).
	LockEconomy(ctx context.Context) (Economy, error)
	// Economy reads the economy row without locking it.
	Economy(ctx context.Context) (Economy, error)
	// SaveEconomy writes the economy row back.
	SaveEconomy(ctx context.Context, e Economy) error

	// ApplyEntry records a balanced entry and moves the cached balances.
	// ErrInsufficient when a contributor account would go below zero.
	ApplyEntry(ctx context.Context, e JournalEntry) error
	// Balances returns a contributor's balances (zero for none).
	Balances(ctx context.Context, contributorID string) (Balances, error)
	// Positions returns a contributor's stakes, largest first.
	Positions(ctx context.Context, contributorID string) ([]Position, error)
	// IdeaStaked returns the CC staked on an idea and by how many contributors.
	IdeaStaked(ctx context.Context, ideaID string) (money.Micros, int, error)
	// History returns a page of a contributor's journal entries, newest first.
	History(ctx context.Context, contributorID string, limit, offset int) ([]JournalEntry, error)
	// JournalMismatches lists the accounts whose cached balance differs
	// from the sum of their journal lines (empty when the cache is sound).
	JournalMismatches(ctx context.Context) ([]string, error)
	// Unreconciled lists, by audit seq, where the journal and the audit
	// trail disagree (empty when every journal entry is recorded by exactly
	// one audit entry and every movement's audit entry names its journal
	// entry); at most limit of them.
	Unreconciled(ctx context.Context, limit int) ([]Discrepancy, error)

	// InsertDeposit records a deposit. ErrAlreadyExists for a known reference.
	InsertDeposit(ctx context.Context, d Deposit) error
	// DepositByReference finds a deposit. ErrNotFound when there is none.
	DepositByReference(ctx context.Context, reference string) (Deposit, error)

	// InsertCooling records an unstake that cools.
	InsertCooling(ctx context.Context, c CoolingLot) error
	// DueCooling returns a contributor's unreleased lots available at now.
	DueCooling(ctx context.Context, contributorID string, now time.Time) ([]CoolingLot, error)
	// ReleaseCooling marks a lot released by entry entryID.
	ReleaseCooling(ctx context.Context, lotID, entryID string) error
	// UnstakedSince is the CC a contributor unstaked from an idea in the
	// entries recorded after since (zero for none): the rolling window
	// an unstake's cooldown tier is decided by.
	UnstakedSince(ctx context.Context, contributorID, ideaID string, since time.Time) (money.Micros, error)

	// InsertPledge records a pledge.
	InsertPledge(ctx context.Context, p Pledge) error

	// InsertReading records an oracle reading.
	InsertReading(ctx context.Context, r OracleReading) error
	// LatestReading is the newest reading. ErrNotFound before the first.
	LatestReading(ctx context.Context) (OracleReading, error)
	// ReadingsSince returns the readings at or after since, oldest first,
	// each with its source and verdict.
	ReadingsSince(ctx context.Context, since time.Time) ([]credit.Reading, error)

	// RecordFreezeNonce remembers the nonce of a signed freeze, so the same
	// signed request is never accepted twice; ErrAlreadyExists when the
	// signer's nonce was recorded before.
	RecordFreezeNonce(ctx context.Context, n FreezeNonce) error
	// PruneFreezeNonces forgets the nonces issued before before, returning
	// how many it forgot.
	PruneFreezeNonces(ctx context.Context, before time.Time) (int, error)

	// InsertIncident records an incident.
	InsertIncident(ctx context.Context, i Incident) error
	// ListIncidents returns a page of incidents, newest first.
	ListIncidents(ctx context.Context, limit, offset int) ([]Incident, error)

	// Counts returns row counts of the journal and incident tables, for
	// storage reports.
	Counts(ctx context.Context) (map[string]int, error)
}

// Audit is the audit chain's storage over one querier.
type Audit interface {
	// Append stores a sealed record. ErrAlreadyExists when its seq is taken.
	Append(ctx context.Context, r audit.Record) error
	// Range returns up to limit records with seq > after, in seq order.
	Range(ctx context.Context, after int64, limit int) ([]audit.Record, error)
	// Recent returns a page of records, newest first.
	Recent(ctx context.Context, limit, offset int) ([]audit.Record, error)
	// Repairs returns the repair entries with seq at most upTo, in seq
	// order: verification reads the breaks they accepted before it walks.
	Repairs(ctx context.Context, upTo int64) ([]audit.Record, error)
	// Counts returns the row count of the audit chain's table, for storage
	// reports.
	Counts(ctx context.Context) (map[string]int, error)
}

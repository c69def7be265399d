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

// Economy is the economy's one row: the treasury, the CC outstanding, the
// economy's mode and the audit chain's head. Movements that mint or burn
// CC lock it (LockEconomy) for an exact backing check; transfers inside
// the economy only read its mode, under the mode lock (LockModes); the
// audit sequencer locks it to move the chain's head.
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

// Movement is what Apply records: a journal entry and its audit entries,
// which wait in the queue for the sequencer.
type Movement struct {
	Journal JournalEntry
	Audit   []Queued
	// ReadMode takes the mode lock shared and reads the economy's mode in
	// the same round trip (Applied.Mode), for a movement that does not
	// lock the economy row.
	ReadMode bool
}

// Applied is what Apply found: the economy's mode (when asked) and each
// account's balance after the movement, by account name, and the time the
// movement was recorded at: its journal entry's, or, for a movement that
// read the mode (ReadMode) whose mode changed after that time was taken,
// just after the change.
type Applied struct {
	Mode     string
	Balances map[string]money.Micros
	At       time.Time
}

// Queued is an audit entry not yet sequenced: its seq and hashes are
// given by the sequencer.
type Queued struct {
	ID string
	// EntryID is the journal entry it records ("" for an entry that
	// records none, such as a spread fee, which names it in its attrs).
	EntryID string
	Entry   audit.Entry
}

// Checkpoint is a tree head the ledger stored: the latest it signed, or
// the one its verification reached.
type Checkpoint struct {
	Size int64
	Root audit.Hash
	// Chain is the chain hash of the entry with seq Size-1 (audit.Genesis
	// for a tree of the genesis record alone).
	Chain audit.Hash
	// Note is the signed note ("" for the verified checkpoint).
	Note string
	At   time.Time
}

// JournalEntry is a credit.Entry as recorded: with its id, whose CC moved,
// the idea it concerns, and the audit entry that records it.
type JournalEntry struct {
	ID            string
	Entry         credit.Entry
	ContributorID string
	IdeaID        string
	// Amount is the CC moved (positive), for history and reports.
	Amount money.Micros
	// AuditSeq is the audit entry recording it. Written: the seq for
	// entries from before the log was sequenced in batches (migration
	// 0012), 0 since (the audit entry names the journal entry instead).
	// Read (History): the seq of the audit entry that records it, 0 while
	// that entry waits for the sequencer.
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
	// Earned is the attribution the idea's usage records added to the
	// position; Realized the CC its revenue records paid it (Impact).
	Earned   money.Micros
	Realized money.Micros
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
	// ContributorHandle is the contributor's handle as the use case read
	// it ("" for one that never registered); ignored when writing.
	ContributorHandle string
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
// that writes is called inside the use case's transaction.
type Credit interface {
	// LockModes takes the mode lock until the transaction ends: shared by
	// every movement, exclusive by a change of mode, so a movement that
	// read the mode under it commits before any change of mode does
	// (Postgres: an advisory lock; SQLite's write lock orders them already).
	LockModes(ctx context.Context, exclusive bool) error
	// LockKey serializes the transactions of one idempotency key until the
	// transaction ends.
	LockKey(ctx context.Context, scope, key string) error
	// LockEconomy reads the economy row and locks it until the transaction
	// ends (FOR UPDATE on Postgres; SQLite holds the write lock already).
	LockEconomy(ctx context.Context) (Economy, error)
	// Economy reads the economy row without locking it.
	Economy(ctx context.Context) (Economy, error)
	// SaveEconomy writes the economy row back.
	SaveEconomy(ctx context.Context, e Economy) error
	// SaveSupplyDay writes the day's backing (the day holding d.Day),
	// replacing what the day had.
	SaveSupplyDay(ctx context.Context, d SupplyDay) error
	// SupplyDays returns the days with a row in [from, to), oldest first,
	// preceded by the last day before from that has one (when any).
	SupplyDays(ctx context.Context, from, to time.Time) ([]SupplyDay, error)

	// Apply records a balanced entry, moves the cached balances and
	// queues the movement's audit entries. ErrInsufficient when a
	// contributor account would go below zero (or does not exist to take
	// CC from); the caller's transaction must then roll back.
	Apply(ctx context.Context, m Movement) (Applied, error)
	// Balance returns one account's balance (zero for none).
	Balance(ctx context.Context, a credit.Account) (money.Micros, error)
	// LockAccount locks an account's row until the transaction ends
	// (Postgres; SQLite's write lock holds it already) and reports whether
	// the account exists.
	LockAccount(ctx context.Context, a credit.Account) (bool, error)
	// Balances returns a contributor's balances (zero for none).
	Balances(ctx context.Context, contributorID string) (Balances, error)
	// Positions returns a page of a contributor's stakes, largest first
	// (then by idea), and how many it has.
	Positions(ctx context.Context, contributorID string, limit, offset int) ([]Position, int, error)
	// IdeaStaked returns the CC staked on an idea and by how many contributors.
	IdeaStaked(ctx context.Context, ideaID string) (money.Micros, int, error)
	// History returns a page of a contributor's journal entries, newest first.
	History(ctx context.Context, contributorID string, limit, offset int) ([]JournalEntry, int, error)
	// JournalMismatches lists the accounts whose cached balance differs
	// from the sum of their journal lines (empty when the cache is sound).
	// It reads the whole journal: no check the ledger runs on a schedule
	// calls it (the scrubber sums a slice of accounts a step, AccountSums);
	// tests and migrations hold the data to it.
	JournalMismatches(ctx context.Context) ([]string, error)
	// Unreconciled lists, by audit seq, where the journal and the audit
	// trail disagree (empty when every journal entry is recorded by exactly
	// one audit entry and every movement's audit entry names its journal
	// entry); at most limit of them. Whole history, like JournalMismatches:
	// the coherence check reconciles what was written since its last look
	// (Integrity.JournalLinks, Integrity.UnreconciledLog).
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
	// ListIncidents returns a page of incidents, newest first, and how
	// many there are.
	// With before set, the page starts after that incident in the
	// newest-first order (a keyset page) and the offset is ignored.
	ListIncidents(ctx context.Context, before *IncidentKey, limit, offset int) (page []Incident, total int, err error)

	// Counts returns row counts of the journal and incident tables, for
	// storage reports.
	Counts(ctx context.Context) (map[string]int, error)
}

// Audit is the audit log's storage over one querier.
type Audit interface {
	// Append stores sealed records (with the journal entry each records,
	// if any), removes the queued entries they came from (by id), and
	// stores the Merkle tree's new hashes (by stored-hash index), all in
	// one batch. ErrAlreadyExists when a seq is taken.
	Append(ctx context.Context, recs []audit.Record, dequeue []string, tree map[int64]audit.Hash) error
	// Enqueue queues audit entries that record no journal entry (a change
	// of mode while the log refuses to grow), for the sequencer.
	Enqueue(ctx context.Context, qs []Queued) error
	// Queue returns up to limit queued entries, oldest first (by time,
	// then id).
	Queue(ctx context.Context, limit int) ([]Queued, error)
	// Backlog counts the queued entries and returns the oldest one's time
	// (zero when the queue is empty).
	Backlog(ctx context.Context) (int64, time.Time, error)
	// QueueTail counts the queued entries up to limit (a bounded count:
	// it reads at most limit index entries, whatever the backlog) and
	// returns the newest one's time (zero when the queue is empty).
	QueueTail(ctx context.Context, limit int) (int, time.Time, error)
	// TreeHashes reads stored Merkle tree hashes by index; ErrNotFound
	// when one is missing.
	TreeHashes(ctx context.Context, idx []int64) ([]audit.Hash, error)
	// Checkpoint reads the named checkpoint ("latest" or "verified");
	// ErrNotFound before the first.
	Checkpoint(ctx context.Context, name string) (Checkpoint, error)
	// SaveCheckpoint writes the named checkpoint.
	SaveCheckpoint(ctx context.Context, name string, c Checkpoint) error
	// Range returns up to limit records with seq > after, in seq order.
	Range(ctx context.Context, after int64, limit int) ([]audit.Record, error)
	// Recent returns a page of records (seq below before, when before is
	// more than 0), newest first, each with the handles of its actor and
	// subject.
	Recent(ctx context.Context, before int64, limit, offset int) ([]ListedRecord, error)
	// Repairs returns the repair entries with seq at most upTo, in seq
	// order: verification reads the breaks they accepted before it walks.
	Repairs(ctx context.Context, upTo int64) ([]audit.Record, error)
	// WitnessState reads what a witness (its verifier key) last cosigned;
	// ErrNotFound before the first.
	WitnessState(ctx context.Context, witness string) (WitnessState, error)
	// SaveWitnessState writes what a witness last cosigned.
	SaveWitnessState(ctx context.Context, s WitnessState) error
	// Corrections returns the entries of kind correction and mended, in
	// seq order: the checks read which journal entries a repair mended
	// before they compare.
	Corrections(ctx context.Context) ([]audit.Record, error)
	// KeyChanges returns the entries of kind key_changed, in seq order:
	// the changes of the log's signing key.
	KeyChanges(ctx context.Context) ([]audit.Record, error)
	// Counts returns the row count of the audit chain's table, for storage
	// reports.
	Counts(ctx context.Context) (map[string]int, error)
}

// WitnessState is the last checkpoint a witness cosigned for the log.
type WitnessState struct {
	Witness string
	Size    int64
	// Note is the log's signed checkpoint it cosigned; Cosignature its
	// cosignature lines.
	Note        string
	Cosignature string
	At          time.Time
}

// ListedRecord is an audit record as the log's list shows it: with the
// handles of its actor and subject when they are contributors that
// registered one ("" otherwise), read with it. The handles are no part of
// the record its hash covers.
type ListedRecord struct {
	audit.Record
	ActorHandle, SubjectHandle string
}

// SupplyDay is the economy's backing at the end of a UTC day (as of its
// last supply movement).
type SupplyDay struct {
	// Day is any instant of the day when saved, its midnight when read.
	Day           time.Time
	OutstandingCC money.Micros
	TreasuryUSD   money.Micros
	ReserveRatio  float64
}

// IncidentKey is an incident's place in the newest-first list.
type IncidentKey struct {
	CreatedAt time.Time
	ID        string
}

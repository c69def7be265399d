package store

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// ImpactRecord is one usage or revenue record of an idea (impact.KindUsage,
// impact.KindRevenue).
type ImpactRecord struct {
	ID        string
	IdeaID    string
	Reference string
	Kind      string
	// Quantity and Unit are a usage record's.
	Quantity money.Micros
	Unit     string
	// AmountUSD, MintedCC and FeeUSD are a revenue record's: the USD it
	// brought, the CC minted and paid for it, the spread kept.
	AmountUSD money.Micros
	MintedCC  money.Micros
	FeeUSD    money.Micros
	// EarnedCC is the attribution a usage record added, over all the
	// positions it reached; Positions how many it reached or paid.
	EarnedCC  money.Micros
	Positions int
	Evidence  string
	// EntryID is a revenue record's first journal entry ("" for usage).
	EntryID string
	Actor   string
	// Source is "api" or "webhook".
	Source    string
	CreatedAt time.Time
}

// ImpactTotals sum an idea's impact records.
type ImpactTotals struct {
	UsageRecords   int
	RevenueRecords int
	// Usage sums the usage quantity by unit, in unit order.
	Usage      []UnitQuantity
	EarnedCC   money.Micros
	RevenueUSD money.Micros
	PaidCC     money.Micros
	// LastAt is the newest record's time (zero for none).
	LastAt time.Time
}

// UnitQuantity is the usage of one unit.
type UnitQuantity struct {
	Unit     string
	Quantity money.Micros
}

// Stake is a contributor's active position on an idea with what it
// earned and realized: CC staked now (more than zero), in contributor id
// order.
type Stake struct {
	ContributorID string
	Amount        money.Micros
	Earned        money.Micros
	Realized      money.Micros
}

// AttributionDelta is what one record adds to a position's attribution.
type AttributionDelta struct {
	ContributorID string
	Earned        money.Micros
	Realized      money.Micros
}

// Impact is the storage of ideas' impact records and of the attribution
// of positions, over one querier. Its writes run in the use case's
// transaction.
type Impact interface {
	// InsertImpact records an impact record. ErrAlreadyExists when the
	// idea has a record with its reference.
	InsertImpact(ctx context.Context, rec ImpactRecord) error
	// ImpactByReference finds an idea's record by reference; ErrNotFound
	// when there is none.
	ImpactByReference(ctx context.Context, ideaID, reference string) (ImpactRecord, error)
	// ListImpact returns a page of an idea's records, newest first, and
	// how many it has.
	ListImpact(ctx context.Context, ideaID string, limit, offset int) ([]ImpactRecord, int, error)
	// ImpactTotals sums an idea's records.
	ImpactTotals(ctx context.Context, ideaID string) (ImpactTotals, error)
	// ActiveStakes returns the idea's positions with CC staked, in
	// contributor id order, at most limit of them, and how many there are.
	ActiveStakes(ctx context.Context, ideaID string, limit int) ([]Stake, int, error)
	// AddAttribution adds to the attribution of the contributors'
	// positions on the idea (a row is made for a position without one),
	// each capped at impact.MaxEarned earned.
	AddAttribution(ctx context.Context, ideaID string, deltas []AttributionDelta) error

	// NoteImpact records that the idea's totals changed and the portfolio
	// is to be told: one more pending notice on the idea's row.
	NoteImpact(ctx context.Context, ideaID string, at time.Time) error
	// ImpactNotices returns at most limit ideas with pending notices,
	// oldest first.
	ImpactNotices(ctx context.Context, limit int) ([]ImpactNotice, error)
	// ImpactNoticeOf returns the idea's pending notice; ErrNotFound when
	// it has none.
	ImpactNoticeOf(ctx context.Context, ideaID string) (ImpactNotice, error)
	// ClearImpactNotice removes the idea's notices if none was added
	// since n was read (its Pending is unchanged), and reports whether it
	// did.
	ClearImpactNotice(ctx context.Context, n ImpactNotice) (bool, error)
}

// ImpactNotice says the portfolio has not been told an idea's latest
// impact totals: Pending records since it last was.
type ImpactNotice struct {
	IdeaID   string
	Pending  int64
	QueuedAt time.Time
}

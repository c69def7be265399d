// Package store defines what the ledger service keeps and the errors its
// storage reports. sqlstore implements it on Postgres and SQLite; storetest
// is the conformance suite both engines must pass.
package store

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"

	"github.com/foundryhq/foundry/services/platform/migrate"
)

// Errors every implementation returns (wrapped or not).
var (
	ErrNotFound      = errors.New("not found")
	ErrAlreadyExists = errors.New("already exists")
	// ErrTotalTooLarge is returned when a contribution would take an
	// asset's total cost past attribution.MaxAssetTotal.
	ErrTotalTooLarge = errors.New("asset total cost would exceed its maximum")
)

//go:embed migrations
var migrations embed.FS

// Migrations are the ledger schema's migrations (see the platform migrate package).
func Migrations() fs.FS { return migrate.Embedded(migrations) }

// Contributor is a person or bot who contributes and holds CC.
type Contributor struct {
	ID string
	// Handle is empty for contributors created implicitly (by a contribution).
	Handle     string
	TrustLevel string
	CreatedAt  time.Time
}

// Session is a contributor's session; only the token's hash is kept.
type Session struct {
	TokenHash   string
	Contributor Contributor
	CreatedAt   time.Time
	// ExpiresAt is zero for a session that does not expire.
	ExpiresAt time.Time
}

// Asset is something contributions accumulate against.
type Asset struct {
	ID          string
	Type        string
	Name        string
	Description string
	// GitHubRepository is the lowercased owner/name of the repository a
	// webhook-created asset stands for; "" for other assets.
	GitHubRepository  string
	TotalCost         money.Micros
	ContributionCount int
	CreatedAt         time.Time
}

// Contribution is time, effort or code recorded against an asset.
type Contribution struct {
	ID            string
	ContributorID string
	AssetID       string
	Cost          money.Micros
	Coherence     attribution.Coherence
	// Metadata is a JSON object (numbers decode as float64); never nil when
	// read back.
	Metadata  map[string]any
	Source    string
	CreatedAt time.Time
}

// GitHubContribution is a push delivery to record.
type GitHubContribution struct {
	// DeliveryID is the X-GitHub-Delivery header: recorded once.
	DeliveryID string
	// Contributor is created when no contributor has its id.
	Contributor Contributor
	// Asset is created when no asset has its GitHubRepository.
	Asset Asset
	// Contribution is recorded against the repository's asset (its AssetID
	// is filled in) by Contributor (ContributorID must be Contributor.ID).
	Contribution Contribution
}

// Distribution is a persisted split of value among an asset's contributors.
type Distribution struct {
	ID        string
	AssetID   string
	Value     money.Micros
	Payouts   []attribution.Payout
	CreatedAt time.Time
}

// SplitFunc computes a distribution's payouts from the asset's stakes; the
// store calls it inside the transaction that records the result.
type SplitFunc func(stakes []attribution.Stake) []attribution.Payout

// Store is the ledger's storage.
type Store interface {
	// Register creates a contributor with a handle and its first session in
	// one transaction. ErrAlreadyExists when the handle is taken.
	Register(ctx context.Context, c Contributor, s Session) error
	// SessionByTokenHash finds a session and its contributor. ErrNotFound
	// when no session has that hash.
	SessionByTokenHash(ctx context.Context, tokenHash string) (Session, error)
	// GetContributor returns a contributor. ErrNotFound when there is none.
	GetContributor(ctx context.Context, id string) (Contributor, error)
	// Counts returns row counts by table, for storage reports.
	Counts(ctx context.Context) (map[string]int, error)

	// CreateAsset records a new asset (its total and count are ignored:
	// they start at zero). ErrAlreadyExists when the id or the GitHub
	// repository is taken.
	CreateAsset(ctx context.Context, a Asset) error
	// GetAsset returns an asset. ErrNotFound when there is none.
	GetAsset(ctx context.Context, id string) (Asset, error)
	// ListAssets returns a page of assets, newest first.
	ListAssets(ctx context.Context, limit, offset int) ([]Asset, error)

	// CreateContribution records c, creating its contributor (as given)
	// when absent, and adds its cost to the asset's total in the same
	// transaction. ErrNotFound when the asset does not exist (nothing is
	// written); ErrTotalTooLarge past the asset maximum.
	CreateContribution(ctx context.Context, c Contribution, contributor Contributor) error
	// GetContribution returns a contribution. ErrNotFound when there is none.
	GetContribution(ctx context.Context, id string) (Contribution, error)
	// ListAssetContributions returns a page of an asset's contributions by
	// creation time, then id. ErrNotFound when the asset does not exist.
	ListAssetContributions(ctx context.Context, assetID string, limit, offset int) ([]Contribution, error)
	// ListContributorContributions returns a page of a contributor's
	// contributions by creation time, then id. ErrNotFound when the
	// contributor does not exist.
	ListContributorContributions(ctx context.Context, contributorID string, limit, offset int) ([]Contribution, error)
	// RecordGitHubContribution records a push delivery once: it creates the
	// contributor and the repository's asset when absent and records the
	// contribution, all in one transaction. A delivery id seen before
	// (also concurrently) records nothing and returns the original
	// contribution with duplicate true.
	RecordGitHubContribution(ctx context.Context, g GitHubContribution) (c Contribution, duplicate bool, err error)

	// CreateDistribution records a distribution of d.Value over asset
	// d.AssetID, its payouts computed by split from the asset's stakes
	// (summed cost per contributor and coherence) read in the same
	// transaction; d.Payouts is ignored. ErrNotFound when the asset does
	// not exist.
	CreateDistribution(ctx context.Context, d Distribution, split SplitFunc) (Distribution, error)
	// GetDistribution returns a distribution with its payouts. ErrNotFound
	// when there is none.
	GetDistribution(ctx context.Context, id string) (Distribution, error)
	// ListAssetDistributions returns an asset's distributions by creation
	// time, then id. ErrNotFound when the asset does not exist.
	ListAssetDistributions(ctx context.Context, assetID string) ([]Distribution, error)
}

// Package store defines what the ledger service keeps, its repositories and
// the errors they report. Repositories work over a querier and never open a
// transaction: the use-case layer opens one per use case, so everything a
// use case writes commits together. sqlstore implements them on Postgres
// and SQLite; storetest is the conformance suite both engines must pass.
package store

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/migrate"
)

// Errors every implementation returns (wrapped or not).
var (
	ErrNotFound = errors.New("not found")
	// ErrMalformed: a stored value is not what the ledger writes there (a
	// hash that is not hex SHA-256): someone else wrote it.
	ErrMalformed     = errors.New("malformed")
	ErrAlreadyExists = errors.New("already exists")
	// ErrTotalTooLarge is returned when a contribution would take an
	// asset's total cost past attribution.MaxAssetTotal.
	ErrTotalTooLarge = errors.New("asset total cost would exceed its maximum")
	// ErrRefused fails the send of a batch QueueAddContribution queued
	// into when the contribution was refused, having changed nothing;
	// ContributionRefusal says why.
	ErrRefused = errors.New("contribution refused")
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

// ContributorAccount is a contributor with the totals of its CC balances,
// as the contributors list shows it.
type ContributorAccount struct {
	Contributor
	// Balances are the accounts as they stand (cooling lots count as
	// cooling until a movement releases them).
	Balances Balances
	// DueCooling is the part of Balances.Cooling whose cooldown had passed
	// by the filter's DueBy, not yet released.
	DueCooling money.Micros
}

// ContributionFilter selects contributions: by asset and contributor when
// set, after a key (a keyset page) when After is set, a page of Limit at
// Offset.
type ContributionFilter struct {
	AssetID, ContributorID string
	After                  *ContributionKey
	Limit, Offset          int
}

// ContributionKey is a contribution's place in the oldest-first order.
type ContributionKey struct {
	CreatedAt time.Time
	ID        string
}

// ContributorFilter selects contributors: the one with Handle when set.
type ContributorFilter struct {
	Handle        string
	Limit, Offset int
	// DueBy is the time ContributorAccount.DueCooling is counted at.
	DueBy time.Time
}

// Session is a contributor's session; only the token's hash is kept.
type Session struct {
	TokenHash   string
	Contributor Contributor
	CreatedAt   time.Time
	// ExpiresAt is zero for a session that does not expire.
	ExpiresAt time.Time
}

// APIToken is a credential with a role, for a machine or a person who is
// not a contributor; only the token's hash is kept.
type APIToken struct {
	ID        string
	TokenHash string
	Name      string
	Role      string
	CreatedAt time.Time
	// ExpiresAt is zero for a token that does not expire.
	ExpiresAt time.Time
	// RevokedAt is zero for a token in force.
	RevokedAt time.Time
	// CreatedBy is the token that created it ("" for the administrator
	// key); CreatorRevokedAt is when that creator was revoked (zero when
	// it is in force), read by ListTokens and GetToken.
	CreatedBy        string
	CreatorRevokedAt time.Time
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
	// Status is attribution.StatusClaimed, StatusAccepted, StatusRejected
	// or StatusVerified.
	Status string
	// ClaimedCost is the cost the contribution was recorded with, which
	// a review may correct in Cost.
	ClaimedCost money.Micros
	// Review is the operator's review; nil for none.
	Review *Review
	// ContributorHandle is the contributor's handle as the store read it
	// ("" for one that never registered); ignored when writing.
	ContributorHandle string
}

// Review is an operator's verdict on a claimed contribution.
type Review struct {
	// Status is what it made the contribution: attribution.StatusAccepted
	// or StatusRejected.
	Status string
	// Cost and Coherence are what the contribution weighs after it.
	Cost      money.Micros
	Coherence attribution.Coherence
	Reason    string
	By        string
	At        time.Time
}

// GitHubContribution is a push delivery to record.
type GitHubContribution struct {
	// DeliveryID is the X-GitHub-Delivery header: recorded once. Empty for
	// a delivery without the header, which CommitHash identifies instead.
	DeliveryID string
	// CommitHash (lowercased), with Asset.GitHubRepository, identifies the
	// pushed commit: each is recorded once, whatever the delivery id.
	// Empty for a push naming no commit (then DeliveryID must be set).
	CommitHash string
	// BodySHA256 is the hex SHA-256 of the delivery's raw body: a body
	// seen before is a repeat, whatever its delivery id.
	BodySHA256 string
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
	ID      string
	AssetID string
	Value   money.Micros
	// Payouts are all of them when created, one page when read back.
	Payouts []attribution.Payout
	// Handles maps the payees of Payouts that registered a handle to it,
	// as the store read them (nil when none did); ignored when writing.
	Handles map[string]string
	// PayoutCount is the number of payouts in all.
	PayoutCount int
	// PaidCC is true when the payouts were minted as CC to the payees.
	PaidCC    bool
	CreatedAt time.Time
}

// Identity is contributors and their sessions, over one querier (the pool
// or the use case's transaction). No method opens a transaction: a use case
// that writes opens one and calls these inside it.
type Identity interface {
	// Register inserts a contributor with a handle and its first session.
	// Called inside the use case's transaction, so the contributor and its
	// session commit together or not at all. ErrAlreadyExists when the
	// handle is taken: the unique index decides races, so of two concurrent
	// claims one commits and the other fails here.
	Register(ctx context.Context, c Contributor, s Session) error
	// QueueCredentials queues the reads of the sessions (with their
	// contributors) and the API tokens (revoked or not) whose hashes are
	// among hashes into b: each found one goes into sessions or tokens,
	// by its hash.
	QueueCredentials(b *database.Batch, hashes []string, sessions map[string]Session, tokens map[string]APIToken)
	// GetContributor returns a contributor. ErrNotFound when there is none.
	GetContributor(ctx context.Context, id string) (Contributor, error)
	// Registered is the set of ids that name a registered contributor (one
	// with a handle, whose session may move its CC), of ids; an id of an
	// implicit contributor or of none is not in it.
	Registered(ctx context.Context, ids []string) (map[string]bool, error)
	// ListContributors returns a page of the contributors f selects,
	// oldest first (creation time, then id), each with its balances, and
	// how many f matches.
	ListContributors(ctx context.Context, f ContributorFilter) ([]ContributorAccount, int, error)
	// EnsureContributor inserts c without a handle unless a contributor
	// with its id exists, which is left as it is (handle and trust level
	// untouched). Concurrent calls for one id insert it once.
	EnsureContributor(ctx context.Context, c Contributor) error
	// ExtendSession moves a session's expiry (a sliding lifetime).
	// ErrNotFound when no session has that hash.
	ExtendSession(ctx context.Context, tokenHash string, expiresAt time.Time) error
	// DeleteSession removes a session (logout). ErrNotFound when no
	// session has that hash.
	DeleteSession(ctx context.Context, tokenHash string) error
	// CreateToken inserts an API token. ErrAlreadyExists when its id or
	// hash is taken.
	CreateToken(ctx context.Context, t APIToken) error
	// ListTokens lists every API token, newest first, with its creator.
	ListTokens(ctx context.Context) ([]APIToken, error)
	// GetToken returns an API token with its creator. ErrNotFound when
	// there is no token with that id.
	GetToken(ctx context.Context, id string) (APIToken, error)
	// RevokeToken sets a token's revocation time unless it is revoked
	// already (the first time stays), and returns the token. ErrNotFound
	// when there is no token with that id.
	RevokeToken(ctx context.Context, id string, at time.Time) (APIToken, error)
	// Counts returns row counts of its tables, for storage reports.
	Counts(ctx context.Context) (map[string]int, error)
}

// Attribution is assets, contributions, GitHub deliveries and
// distributions, over one querier (the pool or the use case's transaction).
// No method opens a transaction.
type Attribution interface {
	// CreateAsset records a new asset (its total and count are ignored:
	// they start at zero). ErrAlreadyExists when the id or the GitHub
	// repository is taken.
	CreateAsset(ctx context.Context, a Asset) error
	// GetAsset returns an asset. ErrNotFound when there is none.
	GetAsset(ctx context.Context, id string) (Asset, error)
	// ListAssets returns a page of assets, newest first, and how many
	// there are.
	ListAssets(ctx context.Context, limit, offset int) ([]Asset, int, error)

	// AddContribution records c, creating its contributor (as given) when
	// no contributor has its id (as Identity.EnsureContributor), and adds
	// c's cost to its asset's total, in one batch (one round trip on
	// Postgres). The total's UPDATE comes before c's INSERT: it takes the
	// asset's row lock, which serialises concurrent contributions to one
	// asset on Postgres, so the total stays exact. ErrNotFound when the
	// asset does not exist; ErrTotalTooLarge past the asset maximum: the
	// caller must then roll back, which undoes what the batch wrote. It
	// returns c with its contributor's handle.
	AddContribution(ctx context.Context, c Contribution, contributor Contributor) (Contribution, error)
	// QueueAddContribution queues AddContribution's work into b, for a use
	// case to send (b may be the last of its transaction: a refusal
	// changes nothing). The send then fills in c's contributor handle, or
	// fails with ErrRefused; ContributionRefusal says why.
	QueueAddContribution(b *database.Batch, c *Contribution, contributor Contributor) error
	// ContributionRefusal is why a contribution to assetID was refused:
	// ErrNotFound when the asset does not exist, ErrTotalTooLarge when its
	// total would have passed the maximum.
	ContributionRefusal(ctx context.Context, assetID string) error
	// GetContribution returns a contribution. ErrNotFound when there is none.
	GetContribution(ctx context.Context, id string) (Contribution, error)
	// ListAssetContributions returns a page of an asset's contributions by
	// creation time, then id. ErrNotFound when the asset does not exist.
	ListAssetContributions(ctx context.Context, assetID string, limit, offset int) ([]Contribution, int, error)
	// ListContributorContributions returns a page of a contributor's
	// contributions by creation time, then id. ErrNotFound when the
	// contributor does not exist.
	ListContributorContributions(ctx context.Context, contributorID string, limit, offset int) ([]Contribution, int, error)
	// ListContributions returns a page of the contributions f selects,
	// oldest first (creation time, then id), and the number f's filters
	// match. A keyset page (f.After) ignores f.Offset.
	ListContributions(ctx context.Context, f ContributionFilter) (page []Contribution, total int, err error)

	// RecordGitHubContribution records a push delivery inside the caller's
	// transaction (the delivery keys' foreign keys to the contribution are
	// deferred to commit, so it cannot run on the pool). It claims the
	// delivery first, by its id or else by repository and commit hash: a
	// concurrent redelivery waits on that key for the first transaction and
	// then fails on it, having done nothing. Then it creates the
	// contributor and the repository's asset when absent and adds the
	// contribution (as AddContribution). It returns the contribution with
	// its AssetID filled in. A key seen before returns ErrAlreadyExists and
	// nothing else: on Postgres the transaction is then aborted, so the
	// caller rolls back and reads the original with DeliveryContribution.
	// A delivery with neither key is an error.
	RecordGitHubContribution(ctx context.Context, g GitHubContribution) (Contribution, error)
	// DeliveryContribution returns the contribution a delivery recorded
	// before, found by the key RecordGitHubContribution claims. Read it
	// after rolling back the transaction whose claim failed. The key was
	// committed, so a missing row is a failure, not ErrNotFound.
	DeliveryContribution(ctx context.Context, g GitHubContribution) (Contribution, error)

	// ReviewContribution applies a review to claim, a claimed contribution
	// as the transaction read it, and moves its asset's total by the
	// change of cost (a rejected one counts nothing), returning the
	// contribution after it. ErrAlreadyExists when the row is no longer a
	// claim (reviewed meanwhile, or never one).
	ReviewContribution(ctx context.Context, claim Contribution, r Review) (Contribution, error)
	// AssetStakes sums an asset's contribution costs per contributor,
	// coherence score and whether they are claims: a distribution's input,
	// aggregated where the rows are. Rejected contributions weigh nothing;
	// with backedOnly, claims are left out too (a distribution paid in CC
	// pays accepted and verified contributions only). ErrNotFound when the
	// asset does not exist.
	AssetStakes(ctx context.Context, assetID string, backedOnly bool) ([]attribution.Stake, error)
	// InsertDistribution records a distribution and its payouts, in their
	// order (the payout count is len(d.Payouts)).
	InsertDistribution(ctx context.Context, d Distribution) error
	// GetDistribution returns a distribution with a page of its payouts (in
	// their order) and their count. ErrNotFound when there is none.
	GetDistribution(ctx context.Context, id string, limit, offset int) (Distribution, error)
	// ListAssetDistributions returns a page of an asset's distributions by
	// creation time, then id, each with its first payouts payouts and their
	// count, and the number of the asset's distributions. ErrNotFound when
	// the asset does not exist.
	ListAssetDistributions(ctx context.Context, assetID string, limit, offset, payouts int) ([]Distribution, int, error)

	// Counts returns row counts of its tables, for storage reports.
	Counts(ctx context.Context) (map[string]int, error)
}

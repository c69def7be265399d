package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Attribution implements store.Attribution over a querier: the pool for
// reads, the use case's transaction for everything that writes.
type Attribution struct {
	q database.Querier
}

var _ store.Attribution = Attribution{}

// NewAttribution returns the attribution repository over q.
func NewAttribution(q database.Querier) Attribution { return Attribution{q: q} }

const assetColumns = `id, type, name, description, github_repository, total_cost_micros, contribution_count, created_at`

func scanAsset(row database.Row) (store.Asset, error) {
	var (
		a       store.Asset
		repo    *string
		total   int64
		created int64
	)
	if err := row.Scan(&a.ID, &a.Type, &a.Name, &a.Description, &repo, &total, &a.ContributionCount, &created); err != nil {
		return store.Asset{}, err
	}
	if repo != nil {
		a.GitHubRepository = *repo
	}
	a.TotalCost = money.Micros(total)
	a.CreatedAt = database.Time(created)
	return a, nil
}

// CreateAsset implements store.Attribution.
func (s Attribution) CreateAsset(ctx context.Context, a store.Asset) error {
	_, err := s.q.Exec(ctx, `INSERT INTO assets (`+assetColumns+`) VALUES ($1, $2, $3, $4, $5, 0, 0, $6)`,
		a.ID, a.Type, a.Name, a.Description, database.NullString(a.GitHubRepository), database.Micros(a.CreatedAt))
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("create asset %s: %w", a.ID, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create asset %s: %w", a.ID, err)
	}
	return nil
}

// GetAsset implements store.Attribution.
func (s Attribution) GetAsset(ctx context.Context, id string) (store.Asset, error) {
	a, err := scanAsset(s.q.QueryRow(ctx, `SELECT `+assetColumns+` FROM assets WHERE id = $1`, id))
	if errors.Is(err, database.ErrNoRows) {
		return store.Asset{}, store.ErrNotFound
	}
	if err != nil {
		return store.Asset{}, fmt.Errorf("get asset %s: %w", id, err)
	}
	return a, nil
}

// ListAssets implements store.Attribution. The total is kept by a
// trigger (migration 0028): no page counts every asset.
func (s Attribution) ListAssets(ctx context.Context, limit, offset int) ([]store.Asset, int, error) {
	var total int
	if err := s.q.QueryRow(ctx, keptCount("assets")).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count assets: %w", err)
	}
	rows, err := s.q.Query(ctx, `SELECT `+assetColumns+` FROM assets ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list assets: %w", err)
	}
	defer rows.Close()
	out := []store.Asset{}
	for rows.Next() {
		a, err := scanAsset(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list assets: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list assets: %w", err)
	}
	return out, total, nil
}

const contributionColumns = `id, contributor_id, asset_id, cost_micros, coherence, metadata, source, created_at, status,
	claimed_cost_micros`

// reviewColumns are a contribution's review, read after contributionColumns.
const reviewColumns = `review_reason, reviewed_by, reviewed_at`

// contributorHandle is the handle of the contribution's contributor (NULL
// when it never registered), read in the statement that reads the
// contribution: a scalar subquery on the contributors' primary key rather
// than a join, so every query over contributions keeps its own shape.
const contributorHandle = `(SELECT handle FROM contributors WHERE contributors.id = contributions.contributor_id)`

// contributionRead is what scanContribution reads.
const contributionRead = contributionColumns + `, ` + reviewColumns + `, ` + contributorHandle

func scanContribution(row database.Row) (store.Contribution, error) {
	var (
		c             store.Contribution
		cost, claimed int64
		coherence     int64
		meta          string
		created       int64
		reason, by    string
		reviewedAt    int64
		handle        *string
	)
	if err := row.Scan(&c.ID, &c.ContributorID, &c.AssetID, &cost, &coherence, &meta, &c.Source, &created, &c.Status, &claimed,
		&reason, &by, &reviewedAt, &handle); err != nil {
		return store.Contribution{}, err
	}
	c.ClaimedCost = money.Micros(claimed)
	if reviewedAt > 0 {
		c.Review = &store.Review{Status: c.Status, Cost: money.Micros(cost), Coherence: attribution.Coherence(coherence), Reason: reason,
			By: by, At: database.Time(reviewedAt)}
	}
	if handle != nil {
		c.ContributorHandle = *handle
	}
	if err := json.Unmarshal([]byte(meta), &c.Metadata); err != nil {
		return store.Contribution{}, fmt.Errorf("contribution %s metadata: %w", c.ID, err)
	}
	if c.Metadata == nil {
		c.Metadata = map[string]any{}
	}
	c.Cost = money.Micros(cost)
	c.Coherence = attribution.Coherence(coherence)
	c.CreatedAt = database.Time(created)
	return c, nil
}

func metadataJSON(m map[string]any) (string, error) {
	if m == nil {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encode metadata: %w", err)
	}
	return string(b), nil
}

// addContribution records c in tx (as AddContribution), its contributor
// ensured first unless contributor is nil, telling a refusal's reason
// apart in tx.
func addContribution(ctx context.Context, tx database.Querier, c *store.Contribution, contributor *store.Contributor) error {
	var b database.Batch
	if err := queueAddContribution(&b, tx.Engine(), c, contributor); err != nil {
		return err
	}
	err := tx.SendBatch(ctx, &b)
	if errors.Is(err, store.ErrRefused) {
		return contributionRefusal(ctx, tx, c.AssetID)
	}
	if err != nil {
		return fmt.Errorf("add contribution: %w", err)
	}
	return nil
}

// queueAddContribution queues into b what records c: its contributor when
// contributor is not nil and none has its id, c's cost added to its
// asset's total (the UPDATE takes the asset's row lock, which serialises
// concurrent contributions to one asset on Postgres, so the total stays
// exact), and c itself, then c.ContributorHandle. A missing asset, or a
// total that would pass the maximum, fails b's send with store.ErrRefused
// having changed nothing, so b may end its transaction.
//
// The statements differ by engine. On Postgres it is one statement whose
// WITH moves the total, then inserts the contributor and the contribution
// only when the total moved: a pipelined batch runs to its end whatever a
// callback says, so a refusal must change nothing by itself (the
// contribution's foreign key to the contributor inserted beside it is
// checked at the statement's end, when both exist). SQLite runs a batch's
// statements one after the other, each callback before the next
// statement: the three statements of the earlier form, the UPDATE's
// callback stopping the batch on a refusal, after which the transaction
// rolls back (it commits at its end on SQLite, Final or not).
func queueAddContribution(b *database.Batch, engine database.Engine, c *store.Contribution, contributor *store.Contributor) error {
	meta, err := metadataJSON(c.Metadata)
	if err != nil {
		return err
	}
	handle := func(row database.Row) error {
		var h *string
		err := row.Scan(&h)
		if errors.Is(err, database.ErrNoRows) {
			return store.ErrRefused
		}
		if err != nil {
			return err
		}
		c.ContributorHandle = ""
		if h != nil {
			c.ContributorHandle = *h
		}
		return nil
	}
	maxBefore := int64(attribution.MaxAssetTotal - c.Cost)
	if engine == database.Postgres {
		ensure := ""
		args := []any{c.ID, c.ContributorID, c.AssetID, int64(c.Cost), int64(c.Coherence), meta, c.Source, database.Micros(c.CreatedAt),
			c.Status, int64(c.ClaimedCost), maxBefore}
		if contributor != nil {
			ensure = `, contributor AS (INSERT INTO contributors (id, handle, trust_level, created_at)
				SELECT $2, NULL, $12, $13 FROM asset ON CONFLICT (id) DO NOTHING)`
			args = append(args, contributor.TrustLevel, database.Micros(contributor.CreatedAt))
		}
		b.QueryRow(handle, `WITH asset AS (UPDATE assets SET total_cost_micros = total_cost_micros + $4,
			contribution_count = contribution_count + 1 WHERE id = $3 AND total_cost_micros <= $11 RETURNING id)`+ensure+`
			INSERT INTO contributions (`+contributionColumns+`) SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10 FROM asset
			RETURNING `+contributorHandle, args...)
		return nil
	}
	if contributor != nil {
		queueEnsureContributor(b, *contributor)
	}
	b.Exec(func(n int64) error {
		if n == 0 {
			return store.ErrRefused // nothing after it runs
		}
		return nil
	}, `UPDATE assets SET total_cost_micros = total_cost_micros + $2, contribution_count = contribution_count + 1
		WHERE id = $1 AND total_cost_micros <= $3`, c.AssetID, int64(c.Cost), maxBefore)
	b.QueryRow(handle, `INSERT INTO contributions (`+contributionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
		RETURNING `+contributorHandle,
		c.ID, c.ContributorID, c.AssetID, int64(c.Cost), int64(c.Coherence), meta, c.Source, database.Micros(c.CreatedAt), c.Status,
		int64(c.ClaimedCost))
	return nil
}

// contributionRefusal is why a contribution to assetID was refused:
// store.ErrNotFound when the asset does not exist, else its total would
// have passed the maximum.
func contributionRefusal(ctx context.Context, q database.Querier, assetID string) error {
	var one int
	err := q.QueryRow(ctx, `SELECT 1 FROM assets WHERE id = $1`, assetID).Scan(&one)
	if errors.Is(err, database.ErrNoRows) {
		return store.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("find asset: %w", err)
	}
	return store.ErrTotalTooLarge
}

// AddContribution implements store.Attribution.
func (s Attribution) AddContribution(ctx context.Context, c store.Contribution, contributor store.Contributor) (store.Contribution, error) {
	if err := addContribution(ctx, s.q, &c, &contributor); err != nil {
		return store.Contribution{}, fmt.Errorf("add contribution to asset %s: %w", c.AssetID, err)
	}
	return c, nil
}

// QueueAddContribution implements store.Attribution.
func (s Attribution) QueueAddContribution(b *database.Batch, c *store.Contribution, contributor store.Contributor) error {
	return queueAddContribution(b, s.q.Engine(), c, &contributor)
}

// ContributionRefusal implements store.Attribution.
func (s Attribution) ContributionRefusal(ctx context.Context, assetID string) error {
	return contributionRefusal(ctx, s.q, assetID)
}

// GetContribution implements store.Attribution.
func (s Attribution) GetContribution(ctx context.Context, id string) (store.Contribution, error) {
	c, err := scanContribution(s.q.QueryRow(ctx, `SELECT `+contributionRead+` FROM contributions WHERE id = $1`, id))
	if errors.Is(err, database.ErrNoRows) {
		return store.Contribution{}, store.ErrNotFound
	}
	if err != nil {
		return store.Contribution{}, fmt.Errorf("get contribution %s: %w", id, err)
	}
	return c, nil
}

// exists reports whether table has a row whose column equals value; table
// and column are constants of this package, never input.
func (s Attribution) exists(ctx context.Context, table, column, value string) (bool, error) {
	var one int
	err := s.q.QueryRow(ctx, `SELECT 1 FROM `+table+` WHERE `+column+` = $1`, value).Scan(&one)
	if errors.Is(err, database.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find %s %s: %w", table, value, err)
	}
	return true, nil
}

func (s Attribution) listContributions(ctx context.Context, table, column, value string, limit, offset int) ([]store.Contribution, int, error) {
	ok, err := s.exists(ctx, table, "id", value)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return nil, 0, store.ErrNotFound
	}
	var total int
	if err := s.q.QueryRow(ctx, `SELECT COUNT(*) FROM contributions WHERE `+column+` = $1`, value).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count contributions: %w", err)
	}
	rows, err := s.q.Query(ctx, `SELECT `+contributionRead+` FROM contributions WHERE `+column+` = $1
		ORDER BY created_at, id LIMIT $2 OFFSET $3`, value, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list contributions: %w", err)
	}
	defer rows.Close()
	out := []store.Contribution{}
	for rows.Next() {
		c, err := scanContribution(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list contributions: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list contributions: %w", err)
	}
	return out, total, nil
}

// ListAssetContributions implements store.Attribution.
func (s Attribution) ListAssetContributions(ctx context.Context, assetID string, limit, offset int) ([]store.Contribution, int, error) {
	return s.listContributions(ctx, "assets", "asset_id", assetID, limit, offset)
}

// ListContributorContributions implements store.Attribution.
func (s Attribution) ListContributorContributions(ctx context.Context, contributorID string, limit, offset int) ([]store.Contribution, int, error) {
	return s.listContributions(ctx, "contributors", "contributor_id", contributorID, limit, offset)
}

// RecordGitHubContribution implements store.Attribution.
func (s Attribution) RecordGitHubContribution(ctx context.Context, g store.GitHubContribution) (store.Contribution, error) {
	c := g.Contribution
	if g.DeliveryID == "" && g.CommitHash == "" {
		return store.Contribution{}, errors.New("record delivery: neither a delivery id nor a commit hash identifies it")
	}
	if err := s.recordGitHubContribution(ctx, g, &c); err != nil {
		return store.Contribution{}, fmt.Errorf("record delivery %s: %w", deliveryName(g), err)
	}
	return c, nil
}

func (s Attribution) recordGitHubContribution(ctx context.Context, g store.GitHubContribution, c *store.Contribution) error {
	// Claim every key the delivery has first — its id, its repository and
	// commit, its body — so that any one seen before makes it a repeat: a
	// captured body sent with a fresh delivery id, or the same commit
	// pushed again, records nothing. A concurrent repeat waits here for
	// this transaction and then fails on the key, having done nothing.
	// Always in this order, so two deliveries never wait on each other.
	at := database.Micros(c.CreatedAt)
	claims := []struct {
		key   bool
		query string
		args  []any
	}{
		{g.DeliveryID != "", `INSERT INTO github_deliveries (delivery_id, contribution_id, received_at) VALUES ($1, $2, $3)`,
			[]any{g.DeliveryID, c.ID, at}},
		{g.CommitHash != "", `INSERT INTO github_commits (repository, commit_hash, contribution_id, received_at) VALUES ($1, $2, $3, $4)`,
			[]any{g.Asset.GitHubRepository, g.CommitHash, c.ID, at}},
		{g.BodySHA256 != "", `INSERT INTO github_bodies (body_sha256, contribution_id, received_at) VALUES ($1, $2, $3)`,
			[]any{g.BodySHA256, c.ID, at}},
	}
	for _, claim := range claims {
		if !claim.key {
			continue
		}
		_, err := s.q.Exec(ctx, claim.query, claim.args...)
		if database.IsUniqueViolation(err) {
			// On Postgres the transaction is aborted now: report the
			// duplicate and nothing else, and let the caller read the
			// original after rolling back.
			return store.ErrAlreadyExists
		}
		if err != nil {
			return fmt.Errorf("claim delivery: %w", err)
		}
	}
	if err := ensureContributor(ctx, s.q, g.Contributor); err != nil {
		return err
	}
	if _, err := s.q.Exec(ctx, `INSERT INTO assets (`+assetColumns+`) VALUES ($1, $2, $3, $4, $5, 0, 0, $6)
		ON CONFLICT (github_repository) DO NOTHING`,
		g.Asset.ID, g.Asset.Type, g.Asset.Name, g.Asset.Description, g.Asset.GitHubRepository, database.Micros(g.Asset.CreatedAt)); err != nil {
		return fmt.Errorf("ensure asset for %s: %w", g.Asset.GitHubRepository, err)
	}
	if err := s.q.QueryRow(ctx, `SELECT id FROM assets WHERE github_repository = $1`, g.Asset.GitHubRepository).Scan(&c.AssetID); err != nil {
		return fmt.Errorf("find asset for %s: %w", g.Asset.GitHubRepository, err)
	}
	return addContribution(ctx, s.q, c, nil) // its contributor ensured above
}

// deliveryName names a delivery in errors: its id, or repository@commit.
func deliveryName(g store.GitHubContribution) string {
	if g.DeliveryID != "" {
		return g.DeliveryID
	}
	return g.Asset.GitHubRepository + "@" + g.CommitHash
}

// DeliveryContribution implements store.Attribution: it finds the
// contribution a delivery's keys recorded, by the first of them that is
// known (the one that conflicted, or an earlier one of the same
// delivery).
func (s Attribution) DeliveryContribution(ctx context.Context, g store.GitHubContribution) (store.Contribution, error) {
	row := s.q.QueryRow(ctx, `SELECT `+contributionRead+` FROM contributions WHERE id = COALESCE(
			(SELECT contribution_id FROM github_deliveries WHERE delivery_id = $1),
			(SELECT contribution_id FROM github_commits WHERE repository = $2 AND commit_hash = $3),
			(SELECT contribution_id FROM github_bodies WHERE body_sha256 = $4))`,
		g.DeliveryID, g.Asset.GitHubRepository, g.CommitHash, g.BodySHA256)
	c, err := scanContribution(row)
	if err != nil {
		// A key conflicted, so its row exists (committed): anything else
		// is a failure, not a missing delivery.
		return store.Contribution{}, fmt.Errorf("find the contribution of delivery %s: %w", deliveryName(g), err)
	}
	return c, nil
}

// payoutBatch bounds the rows of one multi-row payout INSERT (5 parameters
// each, far below both engines' parameter limits).
const payoutBatch = 500

// ReviewContribution implements store.Attribution: the claim's row is
// updated only while it is still a claim, so two reviews of one claim
// cannot both apply, and the asset's total moves by the difference in
// the same transaction.
func (s Attribution) ReviewContribution(ctx context.Context, claim store.Contribution, r store.Review) (store.Contribution, error) {
	n, err := s.q.Exec(ctx, `UPDATE contributions SET status = $2, cost_micros = $3, coherence = $4, review_reason = $5,
		reviewed_by = $6, reviewed_at = $7 WHERE id = $1 AND status = $8`,
		claim.ID, r.Status, int64(r.Cost), int64(r.Coherence), r.Reason, r.By, max(database.Micros(r.At), 1), attribution.StatusClaimed)
	if err != nil {
		return store.Contribution{}, fmt.Errorf("review contribution %s: %w", claim.ID, err)
	}
	if n == 0 {
		return store.Contribution{}, fmt.Errorf("contribution %s is no claim: %w", claim.ID, store.ErrAlreadyExists)
	}
	after := r.Cost
	if r.Status == attribution.StatusRejected {
		after = 0
	}
	if delta := after - claim.Cost; delta != 0 {
		if _, err := s.q.Exec(ctx, `UPDATE assets SET total_cost_micros = total_cost_micros + $2 WHERE id = $1`,
			claim.AssetID, int64(delta)); err != nil {
			return store.Contribution{}, fmt.Errorf("move the total of asset %s: %w", claim.AssetID, err)
		}
	}
	out := claim
	out.Status, out.Cost, out.Coherence, out.Review = r.Status, r.Cost, r.Coherence, &r
	return out, nil
}

// AssetStakes implements store.Attribution.
func (s Attribution) AssetStakes(ctx context.Context, assetID string, backedOnly bool) ([]attribution.Stake, error) {
	var one int
	err := s.q.QueryRow(ctx, `SELECT 1 FROM assets WHERE id = $1`, assetID).Scan(&one)
	if errors.Is(err, database.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("find asset: %w", err)
	}
	leftOut := []any{attribution.StatusRejected, attribution.StatusRejected}
	if backedOnly {
		leftOut[1] = attribution.StatusClaimed
	}
	rows, err := s.q.Query(ctx, `SELECT contributor_id, coherence, CASE WHEN status = $4 THEN 1 ELSE 0 END,
			CAST(SUM(cost_micros) AS BIGINT)
		FROM contributions WHERE asset_id = $1 AND status <> $2 AND status <> $3
		GROUP BY contributor_id, coherence, CASE WHEN status = $4 THEN 1 ELSE 0 END`,
		assetID, leftOut[0], leftOut[1], attribution.StatusClaimed)
	if err != nil {
		return nil, fmt.Errorf("sum stakes: %w", err)
	}
	defer rows.Close()
	var out []attribution.Stake
	for rows.Next() {
		var (
			st               attribution.Stake
			coherence, claim int64
			cost             int64
		)
		if err := rows.Scan(&st.ContributorID, &coherence, &claim, &cost); err != nil {
			return nil, fmt.Errorf("sum stakes: %w", err)
		}
		st.Coherence, st.Cost, st.Claimed = attribution.Coherence(coherence), money.Micros(cost), claim == 1
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sum stakes: %w", err)
	}
	return out, nil
}

// InsertDistribution implements store.Attribution.
func (s Attribution) InsertDistribution(ctx context.Context, d store.Distribution) error {
	if _, err := s.q.Exec(ctx, `INSERT INTO distributions (id, asset_id, value_micros, payout_count, paid_cc, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		d.ID, d.AssetID, int64(d.Value), len(d.Payouts), boolInt(d.PaidCC), database.Micros(d.CreatedAt)); err != nil {
		return fmt.Errorf("insert distribution: %w", err)
	}
	for start := 0; start < len(d.Payouts); start += payoutBatch {
		batch := d.Payouts[start:min(start+payoutBatch, len(d.Payouts))]
		var q strings.Builder
		q.WriteString(`INSERT INTO payouts (distribution_id, position, contributor_id, amount_micros, claimed_micros, unpaid) VALUES `)
		args := make([]any, 0, 6*len(batch))
		for i, p := range batch {
			if i > 0 {
				q.WriteString(", ")
			}
			fmt.Fprintf(&q, "(%s)", database.Placeholders(len(args)+1, 6))
			args = append(args, d.ID, start+i, p.ContributorID, int64(p.Amount), int64(p.Claimed), boolInt(p.Unpaid))
		}
		if _, err := s.q.Exec(ctx, q.String(), args...); err != nil {
			return fmt.Errorf("insert payouts: %w", err)
		}
	}
	return nil
}

const distributionColumns = `id, asset_id, value_micros, payout_count, paid_cc, created_at`

func scanDistribution(row database.Row) (store.Distribution, error) {
	var (
		d       store.Distribution
		value   int64
		created int64
		paid    int
	)
	if err := row.Scan(&d.ID, &d.AssetID, &value, &d.PayoutCount, &paid, &created); err != nil {
		return store.Distribution{}, err
	}
	d.Value, d.CreatedAt, d.PaidCC = money.Micros(value), database.Time(created), paid == 1
	d.Payouts = []attribution.Payout{}
	return d, nil
}

// GetDistribution implements store.Attribution.
func (s Attribution) GetDistribution(ctx context.Context, id string, limit, offset int) (store.Distribution, error) {
	d, err := scanDistribution(s.q.QueryRow(ctx, `SELECT `+distributionColumns+` FROM distributions WHERE id = $1`, id))
	if errors.Is(err, database.ErrNoRows) {
		return store.Distribution{}, store.ErrNotFound
	}
	if err != nil {
		return store.Distribution{}, fmt.Errorf("get distribution %s: %w", id, err)
	}
	// Positions run from 0 without gaps, so a page is a range of the
	// primary key rather than an OFFSET scan. The end stays within the
	// column's 32 bits whatever offset a caller sends.
	end := min(int64(offset)+int64(limit), math.MaxInt32)
	byID := map[string]*store.Distribution{id: &d}
	if err := s.payouts(ctx, byID, `WHERE distribution_id = $1 AND position >= $2 AND position < $3 ORDER BY position`,
		id, min(int64(offset), math.MaxInt32), end); err != nil {
		return store.Distribution{}, err
	}
	return d, nil
}

// payouts reads the payouts the condition where selects, each with its
// payee's handle, and appends them to their distributions in ds.
func (s Attribution) payouts(ctx context.Context, ds map[string]*store.Distribution, where string, args ...any) error {
	rows, err := s.q.Query(ctx, `SELECT distribution_id, contributor_id, amount_micros, claimed_micros, unpaid,
		(SELECT handle FROM contributors WHERE contributors.id = payouts.contributor_id) FROM payouts `+where, args...)
	if err != nil {
		return fmt.Errorf("list payouts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			distID          string
			p               attribution.Payout
			amount, claimed int64
			unpaid          int
			handle          *string
		)
		if err := rows.Scan(&distID, &p.ContributorID, &amount, &claimed, &unpaid, &handle); err != nil {
			return fmt.Errorf("list payouts: %w", err)
		}
		p.Amount, p.Claimed, p.Unpaid = money.Micros(amount), money.Micros(claimed), unpaid == 1
		d := ds[distID]
		if d == nil {
			continue
		}
		d.Payouts = append(d.Payouts, p)
		if handle != nil {
			if d.Handles == nil {
				d.Handles = map[string]string{}
			}
			d.Handles[p.ContributorID] = *handle
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("list payouts: %w", err)
	}
	return nil
}

// ListAssetDistributions implements store.Attribution.
func (s Attribution) ListAssetDistributions(ctx context.Context, assetID string, limit, offset, payouts int) ([]store.Distribution, int, error) {
	ok, err := s.exists(ctx, "assets", "id", assetID)
	if err != nil {
		return nil, 0, err
	}
	if !ok {
		return nil, 0, store.ErrNotFound
	}
	var total int
	if err := s.q.QueryRow(ctx, `SELECT COUNT(*) FROM distributions WHERE asset_id = $1`, assetID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count distributions: %w", err)
	}
	rows, err := s.q.Query(ctx, `SELECT `+distributionColumns+` FROM distributions WHERE asset_id = $1
		ORDER BY created_at, id LIMIT $2 OFFSET $3`, assetID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("list distributions: %w", err)
	}
	defer rows.Close()
	out := []store.Distribution{}
	for rows.Next() {
		d, err := scanDistribution(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list distributions: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("list distributions: %w", err)
	}
	rows.Close()
	if len(out) == 0 || payouts <= 0 {
		return out, total, nil
	}
	args := make([]any, 0, len(out)+1)
	args = append(args, payouts)
	byID := make(map[string]*store.Distribution, len(out))
	for i := range out {
		args = append(args, out[i].ID)
		byID[out[i].ID] = &out[i]
	}
	if err := s.payouts(ctx, byID, `WHERE position < $1 AND distribution_id IN (`+database.Placeholders(2, len(out))+`)
		ORDER BY distribution_id, position`, args...); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// Counts implements store.Attribution.
func (s Attribution) Counts(ctx context.Context) (map[string]int, error) {
	return count(ctx, s.q, "assets", "contributions", "github_deliveries", "github_commits", "distributions", "payouts")
}

// boolInt stores a boolean as 0 or 1, the same on both engines.
func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// ListContributions implements store.Attribution. The asset and contributor
// filters ride the indexes contributions_asset and contributions_contributor,
// and the unfiltered list contributions_created, all in (created_at, id)
// order, so a keyset page starts where its cursor points instead of
// walking an offset.
func (s Attribution) ListContributions(ctx context.Context, f store.ContributionFilter) ([]store.Contribution, int, error) {
	var (
		where []string
		args  []any
	)
	if f.AssetID != "" {
		args = append(args, f.AssetID)
		where = append(where, fmt.Sprintf("asset_id = $%d", len(args)))
	}
	if f.ContributorID != "" {
		args = append(args, f.ContributorID)
		where = append(where, fmt.Sprintf("contributor_id = $%d", len(args)))
	}
	filter := ""
	if len(where) > 0 {
		filter = " WHERE " + strings.Join(where, " AND ")
	}
	// The totals of the whole list and of an asset's are kept as
	// contributions are written (migration 0027's trigger, the asset's
	// contribution_count): no page counts them.
	count := `SELECT COUNT(*) FROM contributions` + filter
	switch {
	case f.AssetID == "" && f.ContributorID == "":
		count = keptCount("contributions")
	case f.ContributorID == "":
		count = `SELECT COALESCE((SELECT contribution_count FROM assets WHERE id = $1), 0)`
	}
	var total int
	if err := s.q.QueryRow(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count contributions: %w", err)
	}
	pageWhere, pageArgs := where, args
	if f.After != nil {
		pageArgs = append(append([]any{}, args...), database.Micros(f.After.CreatedAt), f.After.ID)
		a, b := len(pageArgs)-1, len(pageArgs)
		pageWhere = append(append([]string{}, where...), database.Keyset(">", ">", a, b))
	}
	query := `SELECT ` + contributionRead + ` FROM contributions`
	if len(pageWhere) > 0 {
		query += " WHERE " + strings.Join(pageWhere, " AND ")
	}
	pageOffset := f.Offset
	if f.After != nil {
		pageOffset = 0 // the keyset says where the page starts
	}
	pageArgs = append(pageArgs, f.Limit, pageOffset)
	query += fmt.Sprintf(" ORDER BY created_at, id LIMIT $%d OFFSET $%d", len(pageArgs)-1, len(pageArgs))
	rows, err := s.q.Query(ctx, query, pageArgs...)
	if err != nil {
		return nil, 0, fmt.Errorf("list contributions: %w", err)
	}
	defer rows.Close()
	out := []store.Contribution{}
	for rows.Next() {
		c, err := scanContribution(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("list contributions: %w", err)
		}
		out = append(out, c)
	}
	return out, total, rows.Err()
}

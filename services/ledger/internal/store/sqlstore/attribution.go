package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/foundryhq/foundry/services/ledger/internal/attribution"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

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

// CreateAsset implements store.Store.
func (s *Store) CreateAsset(ctx context.Context, a store.Asset) error {
	_, err := s.db.Exec(ctx, `INSERT INTO assets (`+assetColumns+`) VALUES ($1, $2, $3, $4, $5, 0, 0, $6)`,
		a.ID, a.Type, a.Name, a.Description, database.NullString(a.GitHubRepository), database.Micros(a.CreatedAt))
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("create asset %s: %w", a.ID, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create asset %s: %w", a.ID, err)
	}
	return nil
}

// GetAsset implements store.Store.
func (s *Store) GetAsset(ctx context.Context, id string) (store.Asset, error) {
	a, err := scanAsset(s.db.QueryRow(ctx, `SELECT `+assetColumns+` FROM assets WHERE id = $1`, id))
	if errors.Is(err, database.ErrNoRows) {
		return store.Asset{}, store.ErrNotFound
	}
	if err != nil {
		return store.Asset{}, fmt.Errorf("get asset %s: %w", id, err)
	}
	return a, nil
}

// ListAssets implements store.Store.
func (s *Store) ListAssets(ctx context.Context, limit, offset int) ([]store.Asset, error) {
	rows, err := s.db.Query(ctx, `SELECT `+assetColumns+` FROM assets ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("list assets: %w", err)
	}
	defer rows.Close()
	out := []store.Asset{}
	for rows.Next() {
		a, err := scanAsset(rows)
		if err != nil {
			return nil, fmt.Errorf("list assets: %w", err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list assets: %w", err)
	}
	return out, nil
}

const contributionColumns = `id, contributor_id, asset_id, cost_micros, coherence, metadata, source, created_at`

func scanContribution(row database.Row) (store.Contribution, error) {
	var (
		c         store.Contribution
		cost      int64
		coherence int64
		meta      string
		created   int64
	)
	if err := row.Scan(&c.ID, &c.ContributorID, &c.AssetID, &cost, &coherence, &meta, &c.Source, &created); err != nil {
		return store.Contribution{}, err
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

// ensureContributor creates a contributor without a handle unless one with
// its id exists.
func ensureContributor(ctx context.Context, tx database.Querier, c store.Contributor) error {
	_, err := tx.Exec(ctx, `INSERT INTO contributors (id, handle, trust_level, created_at) VALUES ($1, NULL, $2, $3)
		ON CONFLICT (id) DO NOTHING`, c.ID, c.TrustLevel, database.Micros(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("ensure contributor %s: %w", c.ID, err)
	}
	return nil
}

// addContribution adds c's cost to its asset (the UPDATE takes the row lock
// that serialises concurrent contributions to one asset on Postgres) and
// inserts it.
func addContribution(ctx context.Context, tx database.Querier, c store.Contribution) error {
	meta, err := metadataJSON(c.Metadata)
	if err != nil {
		return err
	}
	n, err := tx.Exec(ctx, `UPDATE assets SET total_cost_micros = total_cost_micros + $2, contribution_count = contribution_count + 1
		WHERE id = $1 AND total_cost_micros <= $3`, c.AssetID, int64(c.Cost), int64(attribution.MaxAssetTotal-c.Cost))
	if err != nil {
		return fmt.Errorf("add to asset total: %w", err)
	}
	if n == 0 {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM assets WHERE id = $1`, c.AssetID).Scan(&one)
		if errors.Is(err, database.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("find asset: %w", err)
		}
		return store.ErrTotalTooLarge
	}
	_, err = tx.Exec(ctx, `INSERT INTO contributions (`+contributionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		c.ID, c.ContributorID, c.AssetID, int64(c.Cost), int64(c.Coherence), meta, c.Source, database.Micros(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("insert contribution: %w", err)
	}
	return nil
}

// CreateContribution implements store.Store.
func (s *Store) CreateContribution(ctx context.Context, c store.Contribution, contributor store.Contributor) error {
	err := s.db.Tx(ctx, func(tx database.Querier) error {
		if err := ensureContributor(ctx, tx, contributor); err != nil {
			return err
		}
		return addContribution(ctx, tx, c)
	})
	if err != nil {
		return fmt.Errorf("create contribution to asset %s: %w", c.AssetID, err)
	}
	return nil
}

// GetContribution implements store.Store.
func (s *Store) GetContribution(ctx context.Context, id string) (store.Contribution, error) {
	c, err := scanContribution(s.db.QueryRow(ctx, `SELECT `+contributionColumns+` FROM contributions WHERE id = $1`, id))
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
func (s *Store) exists(ctx context.Context, table, column, value string) (bool, error) {
	var one int
	err := s.db.QueryRow(ctx, `SELECT 1 FROM `+table+` WHERE `+column+` = $1`, value).Scan(&one)
	if errors.Is(err, database.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("find %s %s: %w", table, value, err)
	}
	return true, nil
}

func (s *Store) listContributions(ctx context.Context, table, column, value string, limit, offset int) ([]store.Contribution, error) {
	ok, err := s.exists(ctx, table, "id", value)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, store.ErrNotFound
	}
	rows, err := s.db.Query(ctx, `SELECT `+contributionColumns+` FROM contributions WHERE `+column+` = $1
		ORDER BY created_at, id LIMIT $2 OFFSET $3`, value, limit, offset)
	if err != nil {
		return nil, fmt.Errorf("list contributions: %w", err)
	}
	defer rows.Close()
	out := []store.Contribution{}
	for rows.Next() {
		c, err := scanContribution(rows)
		if err != nil {
			return nil, fmt.Errorf("list contributions: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list contributions: %w", err)
	}
	return out, nil
}

// ListAssetContributions implements store.Store.
func (s *Store) ListAssetContributions(ctx context.Context, assetID string, limit, offset int) ([]store.Contribution, error) {
	return s.listContributions(ctx, "assets", "asset_id", assetID, limit, offset)
}

// ListContributorContributions implements store.Store.
func (s *Store) ListContributorContributions(ctx context.Context, contributorID string, limit, offset int) ([]store.Contribution, error) {
	return s.listContributions(ctx, "contributors", "contributor_id", contributorID, limit, offset)
}

// errDuplicateDelivery aborts the transaction of a delivery recorded before.
var errDuplicateDelivery = errors.New("delivery already recorded")

// RecordGitHubContribution implements store.Store.
func (s *Store) RecordGitHubContribution(ctx context.Context, g store.GitHubContribution) (store.Contribution, bool, error) {
	c := g.Contribution
	err := s.db.Tx(ctx, func(tx database.Querier) error {
		// Claim the delivery first: a concurrent redelivery waits here for
		// this transaction and then fails on the key, having done nothing.
		_, err := tx.Exec(ctx, `INSERT INTO github_deliveries (delivery_id, contribution_id, received_at) VALUES ($1, $2, $3)`,
			g.DeliveryID, c.ID, database.Micros(c.CreatedAt))
		if database.IsUniqueViolation(err) {
			return errDuplicateDelivery
		}
		if err != nil {
			return fmt.Errorf("claim delivery: %w", err)
		}
		if err := ensureContributor(ctx, tx, g.Contributor); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO assets (`+assetColumns+`) VALUES ($1, $2, $3, $4, $5, 0, 0, $6)
			ON CONFLICT (github_repository) DO NOTHING`,
			g.Asset.ID, g.Asset.Type, g.Asset.Name, g.Asset.Description, g.Asset.GitHubRepository, database.Micros(g.Asset.CreatedAt)); err != nil {
			return fmt.Errorf("ensure asset for %s: %w", g.Asset.GitHubRepository, err)
		}
		if err := tx.QueryRow(ctx, `SELECT id FROM assets WHERE github_repository = $1`, g.Asset.GitHubRepository).Scan(&c.AssetID); err != nil {
			return fmt.Errorf("find asset for %s: %w", g.Asset.GitHubRepository, err)
		}
		return addContribution(ctx, tx, c)
	})
	if errors.Is(err, errDuplicateDelivery) {
		orig, err := s.deliveryContribution(ctx, g.DeliveryID)
		if err != nil {
			return store.Contribution{}, false, err
		}
		return orig, true, nil
	}
	if err != nil {
		return store.Contribution{}, false, fmt.Errorf("record delivery %s: %w", g.DeliveryID, err)
	}
	return c, false, nil
}

func (s *Store) deliveryContribution(ctx context.Context, deliveryID string) (store.Contribution, error) {
	c, err := scanContribution(s.db.QueryRow(ctx, `SELECT c.id, c.contributor_id, c.asset_id, c.cost_micros, c.coherence, c.metadata, c.source, c.created_at
		FROM github_deliveries d JOIN contributions c ON c.id = d.contribution_id WHERE d.delivery_id = $1`, deliveryID))
	if err != nil {
		// The key conflicted, so the row exists (committed): anything else
		// is a failure, not a missing delivery.
		return store.Contribution{}, fmt.Errorf("find the contribution of delivery %s: %w", deliveryID, err)
	}
	return c, nil
}

// payoutBatch bounds the rows of one multi-row payout INSERT (4 parameters
// each, far below both engines' parameter limits).
const payoutBatch = 500

// CreateDistribution implements store.Store.
func (s *Store) CreateDistribution(ctx context.Context, d store.Distribution, split store.SplitFunc) (store.Distribution, error) {
	err := s.db.Tx(ctx, func(tx database.Querier) error {
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM assets WHERE id = $1`, d.AssetID).Scan(&one)
		if errors.Is(err, database.ErrNoRows) {
			return store.ErrNotFound
		}
		if err != nil {
			return fmt.Errorf("find asset: %w", err)
		}
		stakes, err := assetStakes(ctx, tx, d.AssetID)
		if err != nil {
			return err
		}
		d.Payouts = split(stakes)
		if _, err := tx.Exec(ctx, `INSERT INTO distributions (id, asset_id, value_micros, created_at) VALUES ($1, $2, $3, $4)`,
			d.ID, d.AssetID, int64(d.Value), database.Micros(d.CreatedAt)); err != nil {
			return fmt.Errorf("insert distribution: %w", err)
		}
		for start := 0; start < len(d.Payouts); start += payoutBatch {
			batch := d.Payouts[start:min(start+payoutBatch, len(d.Payouts))]
			var q strings.Builder
			q.WriteString(`INSERT INTO payouts (distribution_id, position, contributor_id, amount_micros) VALUES `)
			args := make([]any, 0, 4*len(batch))
			for i, p := range batch {
				if i > 0 {
					q.WriteString(", ")
				}
				fmt.Fprintf(&q, "(%s)", database.Placeholders(len(args)+1, 4))
				args = append(args, d.ID, start+i, p.ContributorID, int64(p.Amount))
			}
			if _, err := tx.Exec(ctx, q.String(), args...); err != nil {
				return fmt.Errorf("insert payouts: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return store.Distribution{}, fmt.Errorf("create distribution of asset %s: %w", d.AssetID, err)
	}
	return d, nil
}

// assetStakes sums an asset's contribution costs per contributor and
// coherence score: the split's input, aggregated where the rows are.
func assetStakes(ctx context.Context, tx database.Querier, assetID string) ([]attribution.Stake, error) {
	rows, err := tx.Query(ctx, `SELECT contributor_id, coherence, CAST(SUM(cost_micros) AS BIGINT)
		FROM contributions WHERE asset_id = $1 GROUP BY contributor_id, coherence`, assetID)
	if err != nil {
		return nil, fmt.Errorf("sum stakes: %w", err)
	}
	defer rows.Close()
	var out []attribution.Stake
	for rows.Next() {
		var (
			st        attribution.Stake
			coherence int64
			cost      int64
		)
		if err := rows.Scan(&st.ContributorID, &coherence, &cost); err != nil {
			return nil, fmt.Errorf("sum stakes: %w", err)
		}
		st.Coherence, st.Cost = attribution.Coherence(coherence), money.Micros(cost)
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sum stakes: %w", err)
	}
	return out, nil
}

// GetDistribution implements store.Store.
func (s *Store) GetDistribution(ctx context.Context, id string) (store.Distribution, error) {
	var (
		d       store.Distribution
		value   int64
		created int64
	)
	err := s.db.QueryRow(ctx, `SELECT id, asset_id, value_micros, created_at FROM distributions WHERE id = $1`, id).
		Scan(&d.ID, &d.AssetID, &value, &created)
	if errors.Is(err, database.ErrNoRows) {
		return store.Distribution{}, store.ErrNotFound
	}
	if err != nil {
		return store.Distribution{}, fmt.Errorf("get distribution %s: %w", id, err)
	}
	d.Value, d.CreatedAt = money.Micros(value), database.Time(created)
	payouts, err := s.payouts(ctx, `SELECT distribution_id, contributor_id, amount_micros FROM payouts WHERE distribution_id = $1 ORDER BY position`, id)
	if err != nil {
		return store.Distribution{}, err
	}
	d.Payouts = payouts[id]
	if d.Payouts == nil {
		d.Payouts = []attribution.Payout{}
	}
	return d, nil
}

// payouts runs a payout query and groups its rows by distribution.
func (s *Store) payouts(ctx context.Context, query, arg string) (map[string][]attribution.Payout, error) {
	rows, err := s.db.Query(ctx, query, arg)
	if err != nil {
		return nil, fmt.Errorf("list payouts: %w", err)
	}
	defer rows.Close()
	out := map[string][]attribution.Payout{}
	for rows.Next() {
		var (
			distID string
			p      attribution.Payout
			amount int64
		)
		if err := rows.Scan(&distID, &p.ContributorID, &amount); err != nil {
			return nil, fmt.Errorf("list payouts: %w", err)
		}
		p.Amount = money.Micros(amount)
		out[distID] = append(out[distID], p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list payouts: %w", err)
	}
	return out, nil
}

// ListAssetDistributions implements store.Store.
func (s *Store) ListAssetDistributions(ctx context.Context, assetID string) ([]store.Distribution, error) {
	ok, err := s.exists(ctx, "assets", "id", assetID)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, store.ErrNotFound
	}
	rows, err := s.db.Query(ctx, `SELECT id, asset_id, value_micros, created_at FROM distributions WHERE asset_id = $1 ORDER BY created_at, id`, assetID)
	if err != nil {
		return nil, fmt.Errorf("list distributions: %w", err)
	}
	defer rows.Close()
	out := []store.Distribution{}
	for rows.Next() {
		var (
			d       store.Distribution
			value   int64
			created int64
		)
		if err := rows.Scan(&d.ID, &d.AssetID, &value, &created); err != nil {
			return nil, fmt.Errorf("list distributions: %w", err)
		}
		d.Value, d.CreatedAt = money.Micros(value), database.Time(created)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list distributions: %w", err)
	}
	rows.Close()
	payouts, err := s.payouts(ctx, `SELECT p.distribution_id, p.contributor_id, p.amount_micros FROM payouts p
		JOIN distributions d ON d.id = p.distribution_id WHERE d.asset_id = $1 ORDER BY p.distribution_id, p.position`, assetID)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Payouts = payouts[out[i].ID]
		if out[i].Payouts == nil {
			out[i].Payouts = []attribution.Payout{}
		}
	}
	return out, nil
}

package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// UsageSnapshots implements store.UsageSnapshots over a querier.
type UsageSnapshots struct {
	q database.Querier
}

var _ store.UsageSnapshots = UsageSnapshots{}

// NewUsageSnapshots returns the usage snapshot repository over q.
func NewUsageSnapshots(q database.Querier) UsageSnapshots { return UsageSnapshots{q: q} }

// Add implements store.UsageSnapshots.
func (s UsageSnapshots) Add(ctx context.Context, snap store.UsageSnapshot) error {
	metrics, err := json.Marshal(snap.Metrics)
	if err != nil {
		return fmt.Errorf("encode usage metrics: %w", err)
	}
	_, err = s.q.Exec(ctx, `INSERT INTO usage_snapshots (id, provider, family, source, metrics, collected_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		snap.ID, snap.Provider, snap.Family, snap.Source, string(metrics), database.Micros(snap.CollectedAt), database.Micros(snap.CreatedAt))
	if err != nil {
		return fmt.Errorf("store %s usage snapshot: %w", snap.Provider, err)
	}
	return nil
}

// Trim implements store.UsageSnapshots.
func (s UsageSnapshots) Trim(ctx context.Context, provider string, keep int) (int64, error) {
	n, err := s.q.Exec(ctx, `DELETE FROM usage_snapshots WHERE provider = $1 AND id NOT IN (
		SELECT id FROM usage_snapshots WHERE provider = $1
		ORDER BY collected_at DESC, created_at DESC, id DESC LIMIT $2)`, provider, keep)
	if err != nil {
		return 0, fmt.Errorf("trim %s usage snapshots: %w", provider, err)
	}
	return n, nil
}

// Latest implements store.UsageSnapshots.
func (s UsageSnapshots) Latest(ctx context.Context) ([]store.UsageSnapshot, error) {
	rows, err := s.q.Query(ctx, `
		SELECT id, provider, family, source, metrics, collected_at, created_at FROM (
			SELECT id, provider, family, source, metrics, collected_at, created_at,
				ROW_NUMBER() OVER (PARTITION BY provider ORDER BY collected_at DESC, created_at DESC, id DESC) AS rn
			FROM usage_snapshots) latest
		WHERE rn = 1 ORDER BY provider`)
	if err != nil {
		return nil, fmt.Errorf("latest usage snapshots: %w", err)
	}
	defer rows.Close()
	var out []store.UsageSnapshot
	for rows.Next() {
		var (
			snap             store.UsageSnapshot
			metrics          string
			collected, added int64
		)
		if err := rows.Scan(&snap.ID, &snap.Provider, &snap.Family, &snap.Source, &metrics, &collected, &added); err != nil {
			return nil, fmt.Errorf("latest usage snapshots: %w", err)
		}
		if err := json.Unmarshal([]byte(metrics), &snap.Metrics); err != nil {
			return nil, fmt.Errorf("decode usage snapshot %s: %w", snap.ID, err)
		}
		snap.CollectedAt, snap.CreatedAt = database.Time(collected), database.Time(added)
		out = append(out, snap)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("latest usage snapshots: %w", err)
	}
	return out, nil
}

package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Snapshots is the SQL health snapshots repository.
type Snapshots struct {
	q database.Querier
}

var _ store.Snapshots = (*Snapshots)(nil)

// NewSnapshots returns the snapshots repository over q (the pool or a
// transaction).
func NewSnapshots(q database.Querier) *Snapshots { return &Snapshots{q: q} }

// Save implements store.Snapshots.
func (r *Snapshots) Save(ctx context.Context, sn store.Snapshot) error {
	_, err := r.q.Exec(ctx, `INSERT INTO health_snapshots (id, taken_at, total_ideas, too_large, too_small, overlap, healthy, suggestion_count)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		sn.ID, sn.TakenAt.UnixMicro(), sn.TotalIdeas, sn.TooLarge, sn.TooSmall, sn.Overlap, sn.Healthy, sn.Suggested)
	if err != nil {
		return fmt.Errorf("save snapshot: %w", err)
	}
	return nil
}

// Prune implements store.Snapshots: a range of health_snapshots_taken.
func (r *Snapshots) Prune(ctx context.Context, before time.Time, batch int) (int64, error) {
	n, err := r.q.Exec(ctx, `DELETE FROM health_snapshots WHERE id IN (
		SELECT id FROM health_snapshots WHERE taken_at < $1 ORDER BY taken_at, id LIMIT $2)`, before.UnixMicro(), batch)
	if err != nil {
		return 0, fmt.Errorf("prune snapshots: %w", err)
	}
	return n, nil
}

// Since implements store.Snapshots.
func (r *Snapshots) Since(ctx context.Context, since time.Time) ([]store.Snapshot, error) {
	rows, err := r.q.Query(ctx, `SELECT id, taken_at, total_ideas, too_large, too_small, overlap, healthy, suggestion_count
		FROM health_snapshots WHERE taken_at >= $1 ORDER BY taken_at, id`, since.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	defer rows.Close()
	out := []store.Snapshot{}
	for rows.Next() {
		var sn store.Snapshot
		var taken int64
		if err := rows.Scan(&sn.ID, &taken, &sn.TotalIdeas, &sn.TooLarge, &sn.TooSmall, &sn.Overlap, &sn.Healthy, &sn.Suggested); err != nil {
			return nil, fmt.Errorf("list snapshots: %w", err)
		}
		sn.TakenAt = database.Time(taken)
		out = append(out, sn)
	}
	return out, rows.Err()
}

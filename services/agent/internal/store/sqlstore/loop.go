package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// LoopPasses implements store.LoopPasses over a querier.
type LoopPasses struct {
	q database.Querier
}

var _ store.LoopPasses = LoopPasses{}

// NewLoopPasses returns the loop-pass repository over q.
func NewLoopPasses(q database.Querier) LoopPasses { return LoopPasses{q: q} }

// Insert implements store.LoopPasses. The pass and its count are two
// statements; the use case runs them in one transaction.
func (l LoopPasses) Insert(ctx context.Context, p store.LoopPass) error {
	if _, err := l.q.Exec(ctx, `INSERT INTO loop_passes (id, holder, outcome, idea_id, idea_score, stage_before, task_type,
		task_id, stage_after, detail, started_at, finished_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		p.ID, p.Holder, p.Outcome, p.IdeaID, p.Score, p.StageBefore, p.TaskType, p.TaskID, p.StageAfter, p.Detail,
		database.Micros(p.StartedAt), database.Micros(p.FinishedAt)); err != nil {
		return fmt.Errorf("insert loop pass: %w", err)
	}
	if _, err := l.q.Exec(ctx, `INSERT INTO loop_counts (outcome, passes) VALUES ($1, 1)
		ON CONFLICT (outcome) DO UPDATE SET passes = loop_counts.passes + 1`, p.Outcome); err != nil {
		return fmt.Errorf("count loop pass: %w", err)
	}
	return nil
}

// Latest implements store.LoopPasses.
func (l LoopPasses) Latest(ctx context.Context) (store.LoopPass, error) {
	var (
		p                 store.LoopPass
		started, finished int64
	)
	err := l.q.QueryRow(ctx, `SELECT id, holder, outcome, idea_id, idea_score, stage_before, task_type, task_id, stage_after,
		detail, started_at, finished_at FROM loop_passes ORDER BY finished_at DESC, id DESC LIMIT 1`).
		Scan(&p.ID, &p.Holder, &p.Outcome, &p.IdeaID, &p.Score, &p.StageBefore, &p.TaskType, &p.TaskID, &p.StageAfter,
			&p.Detail, &started, &finished)
	if errors.Is(err, database.ErrNoRows) {
		return store.LoopPass{}, store.ErrNotFound
	}
	if err != nil {
		return store.LoopPass{}, fmt.Errorf("read the latest loop pass: %w", err)
	}
	p.StartedAt, p.FinishedAt = database.Time(started), database.Time(finished)
	return p, nil
}

// Counts implements store.LoopPasses.
func (l LoopPasses) Counts(ctx context.Context) (map[string]int64, error) {
	rows, err := l.q.Query(ctx, `SELECT outcome, passes FROM loop_counts`)
	if err != nil {
		return nil, fmt.Errorf("read loop counts: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			outcome string
			n       int64
		)
		if err := rows.Scan(&outcome, &n); err != nil {
			return nil, err
		}
		out[outcome] = n
	}
	return out, rows.Err()
}

// Prune implements store.LoopPasses.
func (l LoopPasses) Prune(ctx context.Context, before time.Time) (int64, error) {
	n, err := l.q.Exec(ctx, `DELETE FROM loop_passes WHERE finished_at < $1`, database.Micros(before))
	if err != nil {
		return 0, fmt.Errorf("prune loop passes: %w", err)
	}
	return n, nil
}

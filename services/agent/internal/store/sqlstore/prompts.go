package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Prompts implements store.Prompts over a querier.
type Prompts struct {
	q database.Querier
}

var _ store.Prompts = Prompts{}

// NewPrompts returns the prompt A/B repository over q.
func NewPrompts(q database.Querier) Prompts { return Prompts{q: q} }

// RecordOutcome implements store.Prompts.
func (p Prompts) RecordOutcome(ctx context.Context, o store.Outcome) (bool, error) {
	n, err := p.q.Exec(ctx, `INSERT INTO prompt_outcomes (task_id, variant, value_score, resource_cost, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (task_id) DO NOTHING`,
		o.TaskID, o.Variant, o.ValueScore, o.ResourceCost, database.Micros(o.CreatedAt))
	if err != nil {
		return false, fmt.Errorf("record the prompt outcome of task %s: %w", o.TaskID, err)
	}
	return n == 1, nil
}

const armColumns = `variant, samples, sum_value, sum_cost, first_zeros`

func scanArm(s scanner) (abtest.Arm, error) {
	var a abtest.Arm
	err := s.Scan(&a.Variant, &a.Samples, &a.SumValue, &a.SumCost, &a.FirstZeros)
	return a, err
}

// LockArm implements store.Prompts. The row is created first when
// missing, so there is always a row to lock.
func (p Prompts) LockArm(ctx context.Context, variant string) (abtest.Arm, error) {
	if _, err := p.q.Exec(ctx, `INSERT INTO prompt_variants (variant, samples, sum_value, sum_cost, first_zeros, updated_at)
		VALUES ($1, 0, 0, 0, 0, 0) ON CONFLICT (variant) DO NOTHING`, variant); err != nil {
		return abtest.Arm{}, fmt.Errorf("open prompt variant %s: %w", variant, err)
	}
	query := `SELECT ` + armColumns + ` FROM prompt_variants WHERE variant = $1` + database.ForUpdate(p.q.Engine())
	a, err := scanArm(p.q.QueryRow(ctx, query, variant))
	if errors.Is(err, database.ErrNoRows) {
		return abtest.Arm{}, fmt.Errorf("prompt variant %s: %w", variant, store.ErrNotFound)
	}
	if err != nil {
		return abtest.Arm{}, fmt.Errorf("read prompt variant %s: %w", variant, err)
	}
	return a, nil
}

// SaveArm implements store.Prompts.
func (p Prompts) SaveArm(ctx context.Context, a abtest.Arm, at time.Time) error {
	if _, err := p.q.Exec(ctx, `UPDATE prompt_variants SET samples = $2, sum_value = $3, sum_cost = $4, first_zeros = $5,
		updated_at = $6 WHERE variant = $1`, a.Variant, a.Samples, a.SumValue, a.SumCost, a.FirstZeros, database.Micros(at)); err != nil {
		return fmt.Errorf("save prompt variant %s: %w", a.Variant, err)
	}
	return nil
}

// Arms implements store.Prompts.
func (p Prompts) Arms(ctx context.Context) ([]abtest.Arm, error) {
	rows, err := p.q.Query(ctx, `SELECT `+armColumns+` FROM prompt_variants ORDER BY variant`)
	if err != nil {
		return nil, fmt.Errorf("read prompt variants: %w", err)
	}
	defer rows.Close()
	out := []abtest.Arm{}
	for rows.Next() {
		a, err := scanArm(rows)
		if err != nil {
			return nil, fmt.Errorf("read prompt variants: %w", err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

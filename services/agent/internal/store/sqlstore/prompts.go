package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
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

const armColumns = `variant, samples, sum_value, sum_cost, first_zeros, blocked_at, probe`

func scanArm(s scanner) (abtest.Arm, error) {
	var (
		a       abtest.Arm
		blocked *int64
		probe   string
	)
	err := s.Scan(&a.Variant, &a.Samples, &a.SumValue, &a.SumCost, &a.FirstZeros, &blocked, &probe)
	a.BlockedAt, a.Probe = timeOf(blocked), abtest.Probe(probe)
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
		updated_at = $6, blocked_at = $7, probe = $8 WHERE variant = $1`, a.Variant, a.Samples, a.SumValue, a.SumCost, a.FirstZeros,
		database.Micros(at), database.NullMicros(a.BlockedAt), string(a.Probe)); err != nil {
		return fmt.Errorf("save prompt variant %s: %w", a.Variant, err)
	}
	return nil
}

// QueueDeleteOutcomes implements store.Prompts.
func (p Prompts) QueueDeleteOutcomes(b *database.Batch, taskIDs []string) {
	queueDeleteOf(b, "prompt_outcomes", "", taskIDs)
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

// StartProbe implements store.Prompts: one conditional UPDATE, which a
// second caller finds false.
func (p Prompts) StartProbe(ctx context.Context, variant string) (bool, error) {
	n, err := p.q.Exec(ctx, `UPDATE prompt_variants SET probe = $2 WHERE variant = $1 AND probe = ''`,
		variant, string(abtest.Probing))
	if err != nil {
		return false, fmt.Errorf("start the probe of prompt variant %s: %w", variant, err)
	}
	return n == 1, nil
}

const promptColumns = `name, version, task_type, text, created_at`

func scanPrompt(s scanner) (store.Prompt, error) {
	var (
		pr      store.Prompt
		typ     string
		created int64
	)
	err := s.Scan(&pr.Name, &pr.Version, &typ, &pr.Text, &created)
	pr.Type, pr.CreatedAt = task.Type(typ), database.Time(created)
	return pr, err
}

// InsertPrompt implements store.Prompts.
func (p Prompts) InsertPrompt(ctx context.Context, pr store.Prompt) error {
	n, err := p.q.Exec(ctx, `INSERT INTO prompts (`+promptColumns+`) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
		pr.Name, pr.Version, string(pr.Type), pr.Text, database.Micros(pr.CreatedAt))
	if err != nil {
		return fmt.Errorf("store prompt %s version %d: %w", pr.Name, pr.Version, err)
	}
	if n == 0 {
		return fmt.Errorf("prompt %s version %d: %w", pr.Name, pr.Version, store.ErrAlreadyExists)
	}
	return nil
}

// Prompt implements store.Prompts.
func (p Prompts) Prompt(ctx context.Context, name string, version int) (store.Prompt, error) {
	query, args := `SELECT `+promptColumns+` FROM prompts WHERE name = $1 ORDER BY version DESC LIMIT 1`, []any{name}
	if version > 0 {
		query, args = `SELECT `+promptColumns+` FROM prompts WHERE name = $1 AND version = $2`, []any{name, version}
	}
	pr, err := scanPrompt(p.q.QueryRow(ctx, query, args...))
	if errors.Is(err, database.ErrNoRows) {
		return store.Prompt{}, fmt.Errorf("prompt %s: %w", name, store.ErrNotFound)
	}
	if err != nil {
		return store.Prompt{}, fmt.Errorf("read prompt %s: %w", name, err)
	}
	return pr, nil
}

// LatestPrompts implements store.Prompts: the newest version of each
// name, by the index on (task_type, name, version).
func (p Prompts) LatestPrompts(ctx context.Context, typ task.Type) ([]store.Prompt, error) {
	where, args := "", []any{}
	if typ != "" {
		where, args = ` WHERE task_type = $1`, []any{string(typ)}
	}
	rows, err := p.q.Query(ctx, `SELECT p.name, p.version, p.task_type, p.text, p.created_at, v.versions FROM prompts p
		JOIN (SELECT name, MAX(version) AS latest, COUNT(*) AS versions FROM prompts`+where+` GROUP BY name) v
		ON p.name = v.name AND p.version = v.latest ORDER BY p.name`, args...)
	if err != nil {
		return nil, fmt.Errorf("read prompts: %w", err)
	}
	defer rows.Close()
	out := []store.Prompt{}
	for rows.Next() {
		var (
			pr      store.Prompt
			typ     string
			created int64
		)
		if err := rows.Scan(&pr.Name, &pr.Version, &typ, &pr.Text, &created, &pr.Versions); err != nil {
			return nil, fmt.Errorf("read prompts: %w", err)
		}
		pr.Type, pr.CreatedAt = task.Type(typ), database.Time(created)
		out = append(out, pr)
	}
	return out, rows.Err()
}

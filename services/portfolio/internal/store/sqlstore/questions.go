package sqlstore

import (
	"context"
	"fmt"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Questions is the SQL questions repository.
type Questions struct {
	q database.Querier
}

var _ store.Questions = (*Questions)(nil)

// NewQuestions returns the questions repository over q (the pool or a
// transaction).
func NewQuestions(q database.Querier) *Questions { return &Questions{q: q} }

// Add implements store.Questions.
func (r *Questions) Add(ctx context.Context, q store.Question) error {
	n, err := r.q.Exec(ctx, `UPDATE ideas SET open_question_count = open_question_count + 1 WHERE id = $1`, q.IdeaID)
	if err != nil {
		return fmt.Errorf("count question: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("idea %s: %w", q.IdeaID, store.ErrNotFound)
	}
	_, err = r.q.Exec(ctx, `INSERT INTO idea_questions (id, idea_id, question, status, created_at) VALUES ($1, $2, $3, $4, $5)`,
		q.ID, q.IdeaID, q.Text, q.Status, q.CreatedAt.UnixMicro())
	if err != nil {
		return fmt.Errorf("add question: %w", err)
	}
	return nil
}

// List implements store.Questions.
func (r *Questions) List(ctx context.Context, ideaID string) ([]store.Question, error) {
	if _, err := getIdea(ctx, r.q, ideaID, false); err != nil {
		return nil, err
	}
	rows, err := r.q.Query(ctx, `SELECT id, idea_id, question, status, created_at FROM idea_questions
		WHERE idea_id = $1 ORDER BY created_at, id`, ideaID)
	if err != nil {
		return nil, fmt.Errorf("list questions: %w", err)
	}
	defer rows.Close()
	out := []store.Question{}
	for rows.Next() {
		var q store.Question
		var created int64
		if err := rows.Scan(&q.ID, &q.IdeaID, &q.Text, &q.Status, &created); err != nil {
			return nil, fmt.Errorf("list questions: %w", err)
		}
		q.CreatedAt = database.Time(created)
		out = append(out, q)
	}
	return out, rows.Err()
}

// Open implements store.Questions.
func (r *Questions) Open(ctx context.Context) (map[string][]string, error) {
	rows, err := r.q.Query(ctx, `SELECT q.idea_id, q.question FROM idea_questions q JOIN ideas i ON i.id = q.idea_id
		WHERE q.status = 'open' AND i.archived = FALSE ORDER BY q.idea_id, q.created_at, q.id`)
	if err != nil {
		return nil, fmt.Errorf("list open questions: %w", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id, text string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, fmt.Errorf("list open questions: %w", err)
		}
		out[id] = append(out[id], text)
	}
	return out, rows.Err()
}

package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// MaxQuestionLen bounds a question's text, in bytes.
const MaxQuestionLen = 2000

// AddQuestion stores an open question about an idea and counts it on the
// idea, in one transaction. store.ErrNotFound when the idea is absent.
func (a *App) AddQuestion(ctx context.Context, ideaID, text string) (store.Question, error) {
	if text == "" || len(text) > MaxQuestionLen {
		return store.Question{}, fault.Validation(fault.Field("question", "must be 1 to %d bytes", MaxQuestionLen))
	}
	q := store.Question{ID: a.cfg.NewID(), IdeaID: ideaID, Text: text, Status: "open", CreatedAt: a.now()}
	if err := a.tx(ctx, func(r Repos) error { return r.Questions.Add(ctx, q) }); err != nil {
		return store.Question{}, IdeaError(err, ideaID)
	}
	return q, nil
}

// Questions returns an idea's questions, oldest first. store.ErrNotFound
// when the idea is absent.
func (a *App) Questions(ctx context.Context, ideaID string) ([]store.Question, error) {
	qs, err := a.read().Questions.List(ctx, ideaID)
	return qs, IdeaError(err, ideaID)
}

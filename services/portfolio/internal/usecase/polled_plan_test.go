package usecase_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// portfolioGrowing are the portfolio's tables that grow with its history.
var portfolioGrowing = []string{"ideas", "idea_tags", "idea_questions", "idea_task_events", "health_snapshots",
	"stage_changes", "idea_revisions"}

// TestPolledRoutesReadIndexRanges: every statement the routes the
// dashboard reads send (the ideas, the portfolio's progress, an idea, its
// stage history, revisions and questions, the tags, the stage times and
// the health history, and the storage report's row counts) reads the
// tables that grow with history by ranges
// of their indexes, in the generic plan Postgres caches for it
// (dbtest.RequireIndexReads). Right-sizing is not here: it still reads
// every active idea (issue 38).
func TestPolledRoutesReadIndexRanges(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.Postgres, "portfolio", store.Migrations())
	var rec dbtest.Recording
	app := usecase.New(db, func(q database.Querier) usecase.Repos { return repos(rec.Wrap(q)) }, usecase.Config{})
	ctx := context.Background()
	op := idea.Editor{Operator: true, Actor: "admin"}
	for _, id := range []string{"a", "b", "c"} {
		_, err := app.CreateIdea(ctx, op, idea.Draft{ID: id, Name: "Idea " + id, Tags: []string{"infra"}})
		require.NoError(t, err)
	}
	_, err := app.Advance(ctx, op, "a", "")
	require.NoError(t, err)
	_, err = db.Exec(ctx, `ANALYZE`)
	require.NoError(t, err)

	days := int32(30)
	dbtest.RequireCallsReadIndexRanges(t, db, &rec, map[string]func() error{
		"GET /api/ideas":          func() error { _, err := app.ListIdeas(ctx, usecase.ListQuery{}); return err },
		"GET /api/ideas?tags=":    func() error { _, err := app.ListIdeas(ctx, usecase.ListQuery{Tags: []string{"infra"}}); return err },
		"GET /api/ideas/progress": func() error { _, err := app.Progress(ctx, nil, 0); return err },
		"GET /api/ideas/{id}":     func() error { _, err := app.Idea(ctx, "a"); return err },
		"GET /api/ideas/{id}/stages": func() error {
			_, err := app.Stages(ctx, "a", nil, 0)
			return err
		},
		"GET /api/ideas/{id}/revisions": func() error {
			_, err := app.Revisions(ctx, "a", nil, 0)
			return err
		},
		"GET /api/ideas/{id}/questions":       func() error { _, err := app.Questions(ctx, "a"); return err },
		"GET /api/ideas/tags":                 func() error { _, err := app.Tags(ctx); return err },
		"GET /api/ideas/stage-times":          func() error { _, err := app.StageTimes(ctx, &days); return err },
		"GET /api/ideas/right-sizing/history": func() error { _, err := app.History(ctx, &days); return err },
		"GET /api/ideas/storage":              func() error { _, err := app.Storage(ctx); return err },
	}, portfolioGrowing...)
}

package usecase_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// countingQ counts the trips its querier makes to the database: a
// statement, or a batch (one pipelined round trip on Postgres).
type countingQ struct {
	database.Querier
	n *atomic.Int64
}

func (q countingQ) Exec(ctx context.Context, s string, args ...any) (int64, error) {
	q.n.Add(1)
	return q.Querier.Exec(ctx, s, args...)
}

func (q countingQ) Query(ctx context.Context, s string, args ...any) (database.Rows, error) {
	q.n.Add(1)
	return q.Querier.Query(ctx, s, args...)
}

func (q countingQ) QueryRow(ctx context.Context, s string, args ...any) database.Row {
	q.n.Add(1)
	return q.Querier.QueryRow(ctx, s, args...)
}

func (q countingQ) SendBatch(ctx context.Context, b *database.Batch) error {
	q.n.Add(1)
	return q.Querier.SendBatch(ctx, b)
}

// countingApp is openApp counting the trips its repositories make.
func countingApp(t *testing.T, engine database.Engine) (*usecase.App, *atomic.Int64) {
	t.Helper()
	trips := new(atomic.Int64)
	return usecase.New(dbtest.Open(t, engine, "portfolio", store.Migrations()), func(q database.Querier) usecase.Repos {
		return repos(countingQ{Querier: q, n: trips})
	}, usecase.Config{}), trips
}

// TestListIdeasIsOneTrip: a page of ideas, their tags, the total and the
// portfolio summary are read in one trip, filtered or not, and every idea
// of the page has its tags.
func TestListIdeasIsOneTrip(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		app, trips := countingApp(t, engine)
		op := idea.Editor{Operator: true, Actor: "admin"}
		for _, d := range []idea.Draft{
			{ID: "a", Name: "Idea a", Tags: []string{"ml", "infra"}},
			{ID: "b", Name: "Idea b"},
			{ID: "c", Name: "Idea c", Tags: []string{"ml"}},
		} {
			_, err := app.CreateIdea(ctx, op, d)
			require.NoError(t, err)
		}
		for _, q := range []usecase.ListQuery{{}, {Tags: []string{"ml"}}, {OnlyUnvalidated: true}} {
			before := trips.Load()
			page, err := app.ListIdeas(ctx, q)
			require.NoError(t, err)
			require.Equal(t, int64(1), trips.Load()-before, "%+v: one trip", q)
			require.Equal(t, 3, page.Totals.Ideas, "%+v: the portfolio's summary", q)
			tags := map[string][]string{}
			for _, i := range page.Ideas {
				tags[i.ID] = i.Tags
			}
			if len(q.Tags) == 0 {
				require.Equal(t, 3, page.Total)
				require.Empty(t, tags["b"])
			} else {
				require.Equal(t, 2, page.Total, "the filtered count")
			}
			require.Equal(t, []string{"infra", "ml"}, tags["a"], "%+v", q)
			require.Equal(t, []string{"ml"}, tags["c"], "%+v", q)
		}
	})
}

// TestProgressReadsCountsAndPagesOnly: the progress dashboard is the
// counts the writes keep and a page of each stage, two trips whatever
// the portfolio's size (it read every active idea), and answers what it
// did: every stage, its count, a page of its ids by score, archived ideas
// left out.
func TestProgressReadsCountsAndPagesOnly(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		app, trips := countingApp(t, engine)
		op := idea.Editor{Operator: true, Actor: "admin"}
		for _, d := range []idea.Draft{
			{ID: "low", Name: "Low", PotentialValue: 1, EstimatedCost: 1},
			{ID: "high", Name: "High", PotentialValue: 90, EstimatedCost: 1},
			{ID: "mid", Name: "Mid", PotentialValue: 10, EstimatedCost: 1},
			{ID: "done", Name: "Done", PotentialValue: 5, EstimatedCost: 1, Stage: "complete"},
			{ID: "dup", Name: "Dup", PotentialValue: 50, EstimatedCost: 1},
		} {
			_, err := app.CreateIdea(ctx, op, d)
			require.NoError(t, err)
		}
		_, err := app.Merge(ctx, "high", "dup")
		require.NoError(t, err)

		two := int32(2)
		before := trips.Load()
		p, err := app.Progress(ctx, &two, 0)
		require.NoError(t, err)
		require.Equal(t, int64(2), trips.Load()-before, "the counts and the pages")
		require.Equal(t, 4, p.Total, "the merged duplicate is archived")
		require.Equal(t, 0.25, p.CompletionPct)
		require.Equal(t, usecase.StageBucket{Count: 3, IdeaIDs: []string{"high", "mid"}}, p.ByStage[idea.None], "a page by score")
		require.Equal(t, usecase.StageBucket{Count: 1, IdeaIDs: []string{"done"}}, p.ByStage[idea.Complete])
		require.Equal(t, usecase.StageBucket{IdeaIDs: []string{}}, p.ByStage[idea.Testing], "every stage, empty ones too")
		require.Len(t, p.ByStage, len(idea.Stages))
		p, err = app.Progress(ctx, &two, 2)
		require.NoError(t, err)
		require.Equal(t, []string{"low"}, p.ByStage[idea.None].IdeaIDs, "the next page")
		require.Equal(t, 3, p.ByStage[idea.None].Count)
	})
}

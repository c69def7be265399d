package sqlstore

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// TestAPageOfEachStageIsAnIndexRange: the progress dashboard's pages are
// each a range of ideas_stage_rank, in the generic plan Postgres caches
// (dbtest.GenericPlan) with 20 000 ideas analyzed and sequential and
// bitmap scans disabled where the planner can do without: one index scan
// a stage, no scan of the portfolio.
func TestAPageOfEachStageIsAnIndexRange(t *testing.T) {
	t.Parallel()
	db := dbtest.Open(t, database.Postgres, "portfolio", store.Migrations())
	ctx := context.Background()
	_, err := db.Exec(ctx, `INSERT INTO ideas (id, name, description, potential_value, estimated_cost, actual_value, actual_cost,
			confidence, resistance_risk, stage, manifestation_status, score, archived, created_at, updated_at)
		SELECT 'i' || g, 'Idea ' || g, '', g % 100, 1, 0, 0, 0.5, 1,
			(ARRAY['none', 'specced', 'implementing', 'testing', 'reviewing', 'complete'])[1 + g % 6], 'none',
			(g % 100) * 0.25, g % 50 = 0, g, g
		FROM generate_series(1, 20000) g`)
	require.NoError(t, err)
	_, err = db.Exec(ctx, `ANALYZE ideas`)
	require.NoError(t, err)

	query, args := stagePagesQuery(100, 200)
	plan := dbtest.GenericPlan(t, db, query, args, "enable_seqscan = off", "enable_bitmapscan = off")
	require.NotContains(t, plan, "Seq Scan", plan)
	require.Equal(t, len(idea.Stages), strings.Count(plan, "using ideas_stage_rank"), "a range of the index a stage:\n%s", plan)
}

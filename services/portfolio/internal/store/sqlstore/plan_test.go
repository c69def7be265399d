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
// each a range of ideas_stage_rank, on Postgres with 20 000 ideas
// analyzed and sequential and bitmap scans disabled where the planner
// can do without: one index scan a stage, no scan of the portfolio.
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
	var lines []string
	require.NoError(t, db.Tx(ctx, func(tx database.Querier) error {
		for _, set := range []string{`SET LOCAL enable_seqscan = off`, `SET LOCAL enable_bitmapscan = off`} {
			if _, err := tx.Exec(ctx, set); err != nil {
				return err
			}
		}
		rows, err := tx.Query(ctx, "EXPLAIN "+query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				return err
			}
			lines = append(lines, line)
		}
		return rows.Err()
	}))
	plan := strings.Join(lines, "\n")
	require.NotContains(t, plan, "Seq Scan", plan)
	require.Equal(t, len(idea.Stages), strings.Count(plan, "using ideas_stage_rank"), "a range of the index a stage:\n%s", plan)
}

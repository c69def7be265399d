package sqlstore_test

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/migrate"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
	"github.com/foundryhq/foundry/services/portfolio/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/portfolio/internal/store/storetest"
)

// migrationsBefore returns the portfolio's migrations older than version
// prefix (such as "0005").
func migrationsBefore(t *testing.T, prefix string) fs.FS {
	t.Helper()
	out := fstest.MapFS{}
	require.NoError(t, fs.WalkDir(store.Migrations(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() >= prefix {
			return err
		}
		data, err := fs.ReadFile(store.Migrations(), path)
		out[path] = &fstest.MapFile{Data: data}
		return err
	}))
	return out
}

// TestMigrationBackfillsStints builds a stage history as the portfolio
// kept it before migration 0005 (an idea from before the history, so with
// a "migrated" change, and one created since, its changes inserted out of
// time order) and checks the migration gives every change its stint: the
// time since the idea's previous change by (at, id), unknown at a creation
// and after a migrated change.
func TestMigrationBackfillsStints(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "portfolio", nil)
		_, err := migrate.Up(ctx, db, migrationsBefore(t, "0004"))
		require.NoError(t, err)
		// An idea from before the history: 0004 records it as migrated at
		// its last update (T0).
		insertIdeaBefore(t, db, "old", idea.None, false)
		_, err = migrate.Up(ctx, db, migrationsBefore(t, "0005"))
		require.NoError(t, err)

		at := func(d time.Duration) int64 { return database.Micros(storetest.T0.Add(d)) }
		for _, c := range []struct {
			id, idea string
			from     any
			to       string
			at       int64
			reason   string
		}{
			{"old-1", "old", "none", "specced", at(time.Hour), "advance"},
			{"old-2", "old", "specced", "implementing", at(3 * time.Hour), "advance"},
			// Newest first: the backfill orders by (at, id), not by insertion.
			{"new-3", "new", "specced", "testing", at(90 * time.Minute), "operator"},
			{"new-2", "new", "none", "specced", at(90 * time.Minute), "advance"},
			{"new-1", "new", nil, "none", at(time.Hour), "created"},
		} {
			// As RecordStage wrote a change before 0005.
			_, err := db.Exec(ctx, `INSERT INTO stage_changes (id, idea_id, from_stage, to_stage, at, actor, reason)
				VALUES ($1, $2, $3, $4, $5, 'admin', $6)`, c.id, c.idea, c.from, c.to, c.at, c.reason)
			require.NoError(t, err)
		}

		_, err = migrate.Up(ctx, db, store.Migrations())
		require.NoError(t, err)

		rows, err := db.Query(ctx, `SELECT id, stint_us FROM stage_changes ORDER BY id`)
		require.NoError(t, err)
		got := map[string]*int64{}
		for rows.Next() {
			var (
				id    string
				stint *int64
			)
			require.NoError(t, rows.Scan(&id, &stint))
			got[id] = stint
		}
		require.NoError(t, rows.Err())
		rows.Close()
		us := func(d time.Duration) *int64 { v := d.Microseconds(); return &v }
		require.Equal(t, map[string]*int64{
			"migrated:old": nil,               // the history's start: no stage before it
			"old-1":        nil,               // none began before the history: unknown
			"old-2":        us(2 * time.Hour), // specced from old-1
			"new-1":        nil,               // a creation
			"new-2":        us(30 * time.Minute),
			"new-3":        us(0), // the same microsecond as new-2, after it by id
		}, got)

		stints, err := sqlstore.NewIdeas(db).Stints(ctx, storetest.T0)
		require.NoError(t, err)
		require.Equal(t, map[idea.Stage][]time.Duration{
			idea.None:    {30 * time.Minute},
			idea.Specced: {0, 2 * time.Hour},
		}, stints, "the backfilled stints are read like the ones written since")
	})
}

// insertIdeaBefore stores an idea as the repository did before migration
// 0006 (today's Create also counts it by stage, in a table older schemas
// lack): its row alone, at T0.
func insertIdeaBefore(t *testing.T, db *database.DB, id string, stage idea.Stage, archived bool) {
	t.Helper()
	at := database.Micros(storetest.T0)
	_, err := db.Exec(context.Background(), `INSERT INTO ideas (id, name, description, potential_value, estimated_cost,
		actual_value, actual_cost, confidence, resistance_risk, stage, manifestation_status, score, archived, created_at, updated_at)
		VALUES ($1, $2, '', 1, 1, 0, 0, 0.5, 0.1, $3, 'none', 1, $4, $5, $5)`, id, "Idea "+id, string(stage), archived, at)
	require.NoError(t, err)
}

// TestMigrationCountsTheStages: migration 0006 counts the active ideas of
// each stage, and the counts move with every write after it.
func TestMigrationCountsTheStages(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "portfolio", nil)
		_, err := migrate.Up(ctx, db, migrationsBefore(t, "0006"))
		require.NoError(t, err)
		insertIdeaBefore(t, db, "a", idea.None, false)
		insertIdeaBefore(t, db, "b", idea.Testing, false)
		insertIdeaBefore(t, db, "c", idea.Testing, false)
		insertIdeaBefore(t, db, "merged", idea.Testing, true)

		_, err = migrate.Up(ctx, db, store.Migrations())
		require.NoError(t, err)
		ideas := sqlstore.NewIdeas(db)
		got, err := ideas.StageTotals(ctx)
		require.NoError(t, err)
		require.Equal(t, map[idea.Stage]int{idea.None: 1, idea.Testing: 2}, got, "archived ideas are not counted")

		require.NoError(t, db.Tx(ctx, func(q database.Querier) error {
			r := sqlstore.NewIdeas(q)
			before, err := r.Lock(ctx, "b")
			if err != nil {
				return err
			}
			after := before
			after.Stage = idea.Reviewing
			return r.Update(ctx, before, after)
		}))
		got, err = ideas.StageTotals(ctx)
		require.NoError(t, err)
		require.Equal(t, map[idea.Stage]int{idea.None: 1, idea.Testing: 1, idea.Reviewing: 1}, got)
	})
}

// TestMigrationKeepsEarlierChangesWithoutHandles: the changes recorded
// before migration 0007 read back without a handle (the portfolio never
// saw one), whatever their actor; a change recorded since keeps its own.
func TestMigrationKeepsEarlierChangesWithoutHandles(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "portfolio", nil)
		_, err := migrate.Up(ctx, db, migrationsBefore(t, "0007"))
		require.NoError(t, err)
		insertIdeaBefore(t, db, "a", idea.None, false)
		_, err = db.Exec(ctx, `INSERT INTO stage_changes (id, idea_id, from_stage, to_stage, at, actor, reason)
			VALUES ('c0', 'a', NULL, 'none', $1, 'ada-id', 'created')`, database.Micros(storetest.T0))
		require.NoError(t, err)

		_, err = migrate.Up(ctx, db, store.Migrations())
		require.NoError(t, err)
		ideas := sqlstore.NewIdeas(db)
		later := store.StageChange{ID: "c1", IdeaID: "a", From: idea.None, To: idea.Specced, At: storetest.T0.Add(time.Hour),
			Actor: "ada-id", ActorHandle: "ada", Reason: "update"}
		require.NoError(t, ideas.RecordStage(ctx, later))
		got, _, err := ideas.Stages(ctx, "a", 10, 0)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, []string{"ada-id", ""}, []string{got[0].Actor, got[0].ActorHandle}, "recorded before: no handle")
		require.Equal(t, "ada", got[1].ActorHandle)
	})
}

// TestMigrationTakesSplitParentsOutOfTheTotals: migration 0008 marks the
// parents of existing children split and takes their values out of the
// totals, which counted them beside their children.
func TestMigrationTakesSplitParentsOutOfTheTotals(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "portfolio", nil)
		_, err := migrate.Up(ctx, db, migrationsBefore(t, "0008"))
		require.NoError(t, err)
		at := database.Micros(storetest.T0)
		for _, r := range []struct {
			id, parent     string
			potential, act float64
		}{{"p", "", 90.5, 3}, {"c1", "p", 45.25, 1}, {"c2", "p", 45.25, 0}, {"o", "", 10.000001, 0}} {
			_, err := db.Exec(ctx, `INSERT INTO ideas (id, name, description, potential_value, estimated_cost,
				actual_value, actual_cost, confidence, resistance_risk, stage, manifestation_status, score, archived, created_at, updated_at,
				parent_idea_id) VALUES ($1, $1, '', $2, 1, $3, 0, 0.5, 0.1, 'none', 'none', 1, FALSE, $4, $4, $5)`,
				r.id, r.potential, r.act, at, database.NullString(r.parent))
			require.NoError(t, err)
		}
		// The totals as the store kept them: every active idea's value.
		_, err = db.Exec(ctx, `UPDATE portfolio_totals SET total_ideas = 4, potential_value_micros = 191000001,
			actual_value_micros = 4000000 WHERE id = 1`)
		require.NoError(t, err)

		_, err = migrate.Up(ctx, db, store.Migrations())
		require.NoError(t, err)
		totals, err := sqlstore.NewIdeas(db).Totals(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Totals{Ideas: 4, PotentialValue: 100.500001, ActualValue: 1}, totals,
			"the children's and the other's value, the parent's not again")
		p, err := sqlstore.NewIdeas(db).Get(ctx, "p")
		require.NoError(t, err)
		require.True(t, p.Split)
		c, err := sqlstore.NewIdeas(db).Get(ctx, "c1")
		require.NoError(t, err)
		require.False(t, c.Split)
	})
}

// TestMigrationStartsEveryIdeasRevisions: migration 0011 gives each idea
// one "migrated" revision with its values as stored (a contributor's idea
// pending), the first a staker can read back; later revisions follow it.
func TestMigrationStartsEveryIdeasRevisions(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		db := dbtest.Open(t, engine, "portfolio", nil)
		_, err := migrate.Up(ctx, db, migrationsBefore(t, "0011"))
		require.NoError(t, err)
		insertIdeaBefore(t, db, "a", idea.None, false)
		insertIdeaBefore(t, db, "b", idea.Testing, true)
		_, err = db.Exec(ctx, `UPDATE ideas SET created_by = 'ada-id', values_accepted = FALSE WHERE id = 'b'`)
		require.NoError(t, err)

		_, err = migrate.Up(ctx, db, store.Migrations())
		require.NoError(t, err)
		ideas := sqlstore.NewIdeas(db)
		for _, want := range []store.Revision{
			{ID: "migrated:a", IdeaID: "a", At: storetest.T0, Reason: "migrated",
				Steering: idea.Steering{Name: "Idea a", PotentialValue: 1, EstimatedCost: 1, Confidence: 0.5, ResistanceRisk: 0.1, Review: idea.Accepted}},
			{ID: "migrated:b", IdeaID: "b", At: storetest.T0, Reason: "migrated",
				Steering: idea.Steering{Name: "Idea b", PotentialValue: 1, EstimatedCost: 1, Confidence: 0.5, ResistanceRisk: 0.1, Review: idea.Pending}},
		} {
			got, total, err := ideas.Revisions(ctx, want.IdeaID, 10, 0)
			require.NoError(t, err)
			require.Equal(t, []store.Revision{want}, got)
			require.Equal(t, 1, total)
		}
	})
}

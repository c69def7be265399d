package sqlstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Ideas is the SQL ideas repository.
type Ideas struct {
	q database.Querier
}

var _ store.Ideas = (*Ideas)(nil)

// NewIdeas returns the ideas repository over q (the pool or a transaction)
// of an open, migrated database.
func NewIdeas(q database.Querier) *Ideas { return &Ideas{q: q} }

const ideaColumns = `id, name, description, potential_value, estimated_cost, actual_value, actual_cost,
	confidence, resistance_risk, stage, manifestation_status,
	cost_compute, cost_infrastructure, cost_human_attention,
	value_adoption, value_lineage, value_friction_avoided,
	open_question_count, task_count, parent_idea_id, merged_into_id, archived, created_at, updated_at, created_by, split,
	impact_version, impact_usage_records, impact_revenue_records, impact_earned_micros, impact_revenue_micros, impact_paid_micros,
	impact_last_at, values_accepted`

// scanIdea reads a row of ideaColumns, followed by extra columns into
// extra.
func scanIdea(row database.Row, extra ...any) (idea.Idea, error) {
	var (
		i                           idea.Idea
		stage, manifestation        string
		cc, ci, ch, va, vl, vf      *float64
		parent, merged, createdBy   *string
		createdMicros, updatedMicro int64
		impact                      idea.Impact
		impactAt                    int64
		accepted                    bool
	)
	err := row.Scan(append([]any{&i.ID, &i.Name, &i.Description, &i.PotentialValue, &i.EstimatedCost, &i.ActualValue, &i.ActualCost,
		&i.Confidence, &i.ResistanceRisk, &stage, &manifestation,
		&cc, &ci, &ch, &va, &vl, &vf,
		&i.OpenQuestions, &i.TaskCount, &parent, &merged, &i.Archived, &createdMicros, &updatedMicro, &createdBy, &i.Split,
		&impact.Version, &impact.UsageRecords, &impact.RevenueRecords, &impact.EarnedMicros, &impact.RevenueMicros, &impact.PaidMicros,
		&impactAt, &accepted}, extra...)...)
	if err != nil {
		return idea.Idea{}, err
	}
	i.Stage, i.Manifestation = idea.Stage(stage), idea.Manifestation(manifestation)
	if cc != nil && ci != nil && ch != nil {
		i.CostVector = &idea.CostVector{Compute: *cc, Infrastructure: *ci, HumanAttention: *ch}
	}
	if va != nil && vl != nil && vf != nil {
		i.ValueVector = &idea.ValueVector{Adoption: *va, Lineage: *vl, FrictionAvoided: *vf}
	}
	if parent != nil {
		i.ParentID = *parent
	}
	if merged != nil {
		i.MergedIntoID = *merged
	}
	if createdBy != nil {
		i.CreatedBy = *createdBy
	}
	i.CreatedAt, i.UpdatedAt = database.Time(createdMicros), database.Time(updatedMicro)
	if impact.Version > 0 {
		impact.LastAt = database.Time(impactAt)
		i.Impact = &impact
	}
	i.Review = idea.Pending
	if accepted {
		i.Review = idea.Accepted
	}
	i.Tags = []string{}
	return i, nil
}

// ideaArgs are the values of ideaColumns, in order.
func ideaArgs(i idea.Idea) []any {
	var cc, ci, ch, va, vl, vf *float64
	if v := i.CostVector; v != nil {
		cc, ci, ch = &v.Compute, &v.Infrastructure, &v.HumanAttention
	}
	if v := i.ValueVector; v != nil {
		va, vl, vf = &v.Adoption, &v.Lineage, &v.FrictionAvoided
	}
	var impact idea.Impact
	var impactAt int64
	if i.Impact != nil {
		impact, impactAt = *i.Impact, i.Impact.LastAt.UnixMicro()
	}
	return []any{i.ID, i.Name, i.Description, i.PotentialValue, i.EstimatedCost, i.ActualValue, i.ActualCost,
		i.Confidence, i.ResistanceRisk, string(i.Stage), string(i.Manifestation),
		cc, ci, ch, va, vl, vf,
		i.OpenQuestions, i.TaskCount, database.NullString(i.ParentID), database.NullString(i.MergedIntoID), i.Archived,
		i.CreatedAt.UnixMicro(), i.UpdatedAt.UnixMicro(), database.NullString(i.CreatedBy), i.Split,
		impact.Version, impact.UsageRecords, impact.RevenueRecords, impact.EarnedMicros, impact.RevenueMicros, impact.PaidMicros, impactAt,
		i.Review == idea.Accepted}
}

// Create implements store.Ideas.
func (r *Ideas) Create(ctx context.Context, i idea.Idea) error {
	err := insertIdea(ctx, r.q, i)
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("create idea %s: %w", i.ID, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create idea %s: %w", i.ID, err)
	}
	return nil
}

func insertIdea(ctx context.Context, tx database.Querier, i idea.Idea) error {
	args := append(ideaArgs(i), i.Score())
	if _, err := tx.Exec(ctx, `INSERT INTO ideas (`+ideaColumns+`, score) VALUES (`+database.Placeholders(1, len(args))+`)`, args...); err != nil {
		return err
	}
	if err := insertTags(ctx, tx, i.ID, i.Tags); err != nil {
		return err
	}
	return adjustTotals(ctx, tx, idea.Idea{Archived: true}, i)
}

func insertTags(ctx context.Context, tx database.Querier, id string, tags []string) error {
	for _, t := range tags {
		if _, err := tx.Exec(ctx, `INSERT INTO idea_tags (idea_id, tag) VALUES ($1, $2)`, id, t); err != nil {
			return err
		}
	}
	return nil
}

// contribution is what one idea adds to the portfolio totals.
type contribution struct{ ideas, validated, potential, actual int64 }

func contributionOf(i idea.Idea) contribution {
	if i.Archived {
		return contribution{}
	}
	c := contribution{ideas: 1, potential: amountMicros(i.PotentialValue), actual: amountMicros(i.ActualValue)}
	if i.Split {
		// Its children carry its value: counted there, not twice.
		c.potential, c.actual = 0, 0
	}
	if i.Manifestation == idea.Validated {
		c.validated = 1
	}
	return c
}

// amountMicros is an amount in exact micro-units, as the totals keep it.
func amountMicros(v float64) int64 { return int64(math.Round(v * 1e6)) }

// adjustTotals moves the totals, and the counts by stage and by tag, from
// before's contribution to after's.
func adjustTotals(ctx context.Context, tx database.Querier, before, after idea.Idea) error {
	if b, a := contributionOf(before), contributionOf(after); a != b {
		if _, err := tx.Exec(ctx, `UPDATE portfolio_totals SET total_ideas = total_ideas + $1, validated_ideas = validated_ideas + $2,
			potential_value_micros = potential_value_micros + $3, actual_value_micros = actual_value_micros + $4 WHERE id = 1`,
			a.ideas-b.ideas, a.validated-b.validated, a.potential-b.potential, a.actual-b.actual); err != nil {
			return err
		}
	}
	if err := adjustStages(ctx, tx, before, after); err != nil {
		return err
	}
	return adjustTags(ctx, tx, before, after)
}

// adjustTags moves the counts of active ideas by tag from before's tags to
// after's.
func adjustTags(ctx context.Context, tx database.Querier, before, after idea.Idea) error {
	delta := map[string]int64{}
	if !before.Archived {
		for _, t := range before.Tags {
			delta[t]--
		}
	}
	if !after.Archived {
		for _, t := range after.Tags {
			delta[t]++
		}
	}
	return addCounts(ctx, tx, "tag_totals", "tag", delta)
}

// adjustStages moves one active idea from before's stage to after's.
func adjustStages(ctx context.Context, tx database.Querier, before, after idea.Idea) error {
	delta := map[idea.Stage]int64{}
	if !before.Archived {
		delta[before.Stage]--
	}
	if !after.Archived {
		delta[after.Stage]++
	}
	return addCounts(ctx, tx, "stage_totals", "stage", delta)
}

// addCounts adds delta to the ideas counted by key in table (stage_totals
// or tag_totals; a constant, never input). The rows are written in key
// order (after portfolio_totals), so two transactions moving ideas in
// opposite directions take the rows' locks in the same order instead of
// deadlocking.
func addCounts[K ~string](ctx context.Context, tx database.Querier, table, key string, delta map[K]int64) error {
	keys := make([]K, 0, len(delta))
	for k, d := range delta {
		if d != 0 {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (`+key+`, ideas) VALUES ($1, $2)
			ON CONFLICT (`+key+`) DO UPDATE SET ideas = `+table+`.ideas + excluded.ideas`, string(k), delta[k]); err != nil {
			return fmt.Errorf("count the ideas of %s %s: %w", key, k, err)
		}
	}
	return nil
}

// StageTotals implements store.Ideas: one row per stage.
func (r *Ideas) StageTotals(ctx context.Context) (map[idea.Stage]int, error) {
	rows, err := r.q.Query(ctx, `SELECT stage, ideas FROM stage_totals WHERE ideas <> 0`)
	if err != nil {
		return nil, fmt.Errorf("read the ideas by stage: %w", err)
	}
	defer rows.Close()
	out := map[idea.Stage]int{}
	for rows.Next() {
		var (
			st string
			n  int
		)
		if err := rows.Scan(&st, &n); err != nil {
			return nil, fmt.Errorf("read the ideas by stage: %w", err)
		}
		out[idea.Stage(st)] = n
	}
	return out, rows.Err()
}

// Get implements store.Ideas.
func (r *Ideas) Get(ctx context.Context, id string) (idea.Idea, error) {
	return getIdea(ctx, r.q, id, false)
}

// Lock implements store.Ideas.
func (r *Ideas) Lock(ctx context.Context, id string) (idea.Idea, error) {
	return getIdea(ctx, r.q, id, true)
}

func getIdea(ctx context.Context, q database.Querier, id string, lock bool) (idea.Idea, error) {
	// One round trip: the idea joined with its tags, one row per tag (one
	// row with a NULL tag when it has none). The lock takes the idea's row
	// only.
	query := `SELECT ` + ideaColumns + `, t.tag FROM ideas LEFT JOIN idea_tags t ON t.idea_id = ideas.id
		WHERE ideas.id = $1 ORDER BY t.tag`
	if lock {
		query += database.ForUpdate(q.Engine(), "ideas")
	}
	rows, err := q.Query(ctx, query, id)
	if err != nil {
		return idea.Idea{}, fmt.Errorf("load idea %s: %w", id, err)
	}
	defer rows.Close()
	var (
		out   idea.Idea
		found bool
	)
	for rows.Next() {
		var tag *string
		i, err := scanIdea(rows, &tag)
		if err != nil {
			return idea.Idea{}, fmt.Errorf("load idea %s: %w", id, err)
		}
		if !found {
			out, found = i, true
		}
		if tag != nil {
			out.Tags = append(out.Tags, *tag)
		}
	}
	if err := rows.Err(); err != nil {
		return idea.Idea{}, fmt.Errorf("load idea %s: %w", id, err)
	}
	if !found {
		return idea.Idea{}, fmt.Errorf("idea %s: %w", id, store.ErrNotFound)
	}
	return out, nil
}

// loadTags returns the tags of the given ideas (all ideas when ids is nil).
func loadTags(ctx context.Context, q database.Querier, ids []string) (map[string][]string, error) {
	query := `SELECT idea_id, tag FROM idea_tags ORDER BY idea_id, tag`
	var args []any
	if ids != nil {
		if len(ids) == 0 {
			return map[string][]string{}, nil
		}
		query = `SELECT idea_id, tag FROM idea_tags WHERE idea_id IN (` + database.Placeholders(1, len(ids)) + `) ORDER BY idea_id, tag`
		for _, id := range ids {
			args = append(args, id)
		}
	}
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("load tags: %w", err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id, tag string
		if err := rows.Scan(&id, &tag); err != nil {
			return nil, fmt.Errorf("load tags: %w", err)
		}
		out[id] = append(out[id], tag)
	}
	return out, rows.Err()
}

// queryIdeas runs a SELECT of ideaColumns and attaches each idea's tags.
func queryIdeas(ctx context.Context, q database.Querier, query string, args ...any) ([]idea.Idea, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list ideas: %w", err)
	}
	defer rows.Close()
	var ideas []idea.Idea
	for rows.Next() {
		i, err := scanIdea(rows)
		if err != nil {
			return nil, fmt.Errorf("list ideas: %w", err)
		}
		ideas = append(ideas, i)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list ideas: %w", err)
	}
	var ids []string
	if len(ideas) <= 500 {
		ids = make([]string, len(ideas))
		for k, i := range ideas {
			ids[k] = i.ID
		}
	}
	tags, err := loadTags(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	for k := range ideas {
		if t := tags[ideas[k].ID]; t != nil {
			ideas[k].Tags = t
		}
	}
	return ideas, nil
}

// List implements store.Ideas in one trip: the page joined with its tags,
// the portfolio totals and, when those do not give the total (a tag filter,
// or complete ideas left out), the filtered count, in one batch. The page
// is read through the ideas_rank index (archived, values_accepted DESC,
// score DESC, id): accepted ideas first, each group by score, so its
// cost does not grow with the portfolio; only a filtered total is counted.
// Reading the tags in the page's own statement (one row per tag, a NULL tag
// for an idea with none) gives every idea of the page its tags as they
// were when the page was read; a second statement for them, keyed by the
// page's ids, cost a round trip.
func (r *Ideas) List(ctx context.Context, f store.Filter) ([]idea.Idea, int, store.Totals, error) {
	where := []string{"archived = FALSE"}
	var args []any
	if f.OnlyUnvalidated {
		where = append(where, "manifestation_status <> 'validated'")
	}
	if f.ExcludeComplete {
		where = append(where, "stage <> 'complete'")
	}
	if f.OnlyAccepted {
		where = append(where, "values_accepted = TRUE")
	}
	if len(f.Tags) > 0 {
		for _, t := range f.Tags {
			args = append(args, t)
		}
		where = append(where, `id IN (SELECT idea_id FROM idea_tags WHERE tag IN (`+database.Placeholders(1, len(f.Tags))+
			`) GROUP BY idea_id HAVING COUNT(*) = `+fmt.Sprint(len(f.Tags))+`)`)
	}
	cond := strings.Join(where, " AND ")
	n := len(args)
	var (
		b      database.Batch
		ideas  []idea.Idea
		totals store.Totals
		count  int
	)
	b.Query(func(rows database.Rows) error {
		for rows.Next() {
			var tag *string
			i, err := scanIdea(rows, &tag)
			if err != nil {
				return err
			}
			// An idea's rows are consecutive (ordered by the page's order,
			// then the tag).
			if k := len(ideas) - 1; k < 0 || ideas[k].ID != i.ID {
				ideas = append(ideas, i)
			}
			if tag != nil {
				k := len(ideas) - 1
				ideas[k].Tags = append(ideas[k].Tags, *tag)
			}
		}
		return rows.Err()
	}, `SELECT `+ideaColumns+`, t.tag FROM (SELECT score, `+ideaColumns+` FROM ideas WHERE `+cond+
		fmt.Sprintf(` ORDER BY values_accepted DESC, score DESC, id LIMIT $%d OFFSET $%d`, n+1, n+2)+
		`) page LEFT JOIN idea_tags t ON t.idea_id = page.id ORDER BY page.values_accepted DESC, page.score DESC, page.id, t.tag`,
		append(slices.Clone(args), f.Limit, f.Offset)...)
	queueTotals(&b, &totals)
	counted := len(f.Tags) > 0 || f.ExcludeComplete || f.OnlyAccepted
	if counted {
		b.QueryRow(func(row database.Row) error { return row.Scan(&count) }, `SELECT COUNT(*) FROM ideas WHERE `+cond, args...)
	}
	if err := r.q.SendBatch(ctx, &b); err != nil {
		return nil, 0, store.Totals{}, fmt.Errorf("list ideas: %w", err)
	}
	total := count
	if !counted {
		total = totals.Ideas
		if f.OnlyUnvalidated {
			total = totals.Ideas - totals.Validated
		}
	}
	return ideas, total, totals, nil
}

// Totals implements store.Ideas.
func (r *Ideas) Totals(ctx context.Context) (store.Totals, error) {
	var (
		b database.Batch
		t store.Totals
	)
	queueTotals(&b, &t)
	if err := r.q.SendBatch(ctx, &b); err != nil {
		return store.Totals{}, fmt.Errorf("read totals: %w", err)
	}
	return t, nil
}

// queueTotals queues the read of the portfolio totals into t.
func queueTotals(b *database.Batch, t *store.Totals) {
	b.QueryRow(func(row database.Row) error {
		var potential, actual int64
		if err := row.Scan(&t.Ideas, &t.Validated, &potential, &actual); err != nil {
			return err
		}
		t.PotentialValue, t.ActualValue = float64(potential)/1e6, float64(actual)/1e6
		return nil
	}, `SELECT total_ideas, validated_ideas, potential_value_micros, actual_value_micros FROM portfolio_totals WHERE id = 1`)
}

// Update implements store.Ideas.
func (r *Ideas) Update(ctx context.Context, before, after idea.Idea) error {
	return writeIdea(ctx, r.q, before, after)
}

// writeIdea stores after over before (same id) and moves the totals.
func writeIdea(ctx context.Context, tx database.Querier, before, after idea.Idea) error {
	args := ideaArgs(after)
	// ideaArgs starts with the id; the SET list covers the other columns.
	cols := strings.Split(ideaColumns, ",")
	sets := make([]string, 0, len(cols))
	for k, c := range cols[1:] {
		sets = append(sets, fmt.Sprintf("%s = $%d", strings.TrimSpace(c), k+2))
	}
	args = append(args, after.Score())
	sets = append(sets, fmt.Sprintf("score = $%d", len(args)))
	if _, err := tx.Exec(ctx, `UPDATE ideas SET `+strings.Join(sets, ", ")+` WHERE id = $1`, args...); err != nil {
		return fmt.Errorf("update idea %s: %w", after.ID, err)
	}
	if strings.Join(before.Tags, ",") != strings.Join(after.Tags, ",") {
		if _, err := tx.Exec(ctx, `DELETE FROM idea_tags WHERE idea_id = $1`, after.ID); err != nil {
			return fmt.Errorf("replace tags: %w", err)
		}
		if err := insertTags(ctx, tx, after.ID, after.Tags); err != nil {
			return fmt.Errorf("replace tags: %w", err)
		}
	}
	return adjustTotals(ctx, tx, before, after)
}

// TaskSeen implements store.Ideas.
func (r *Ideas) TaskSeen(ctx context.Context, taskID string) (bool, error) {
	var seen int
	if err := r.q.QueryRow(ctx, `SELECT COUNT(*) FROM idea_task_events WHERE task_id = $1`, taskID).Scan(&seen); err != nil {
		return false, fmt.Errorf("look up task %s: %w", taskID, err)
	}
	return seen > 0, nil
}

// RecordTask implements store.Ideas. The task row is inserted before the
// idea is written: a second report of the same task collides with it.
func (r *Ideas) RecordTask(ctx context.Context, e store.TaskEvent) error {
	_, err := r.q.Exec(ctx, `INSERT INTO idea_task_events (task_id, idea_id, task_type, from_stage, to_stage, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, e.TaskID, e.IdeaID, e.TaskType, string(e.From), string(e.To), e.At.UnixMicro())
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("record task %s: %w", e.TaskID, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("record task %s: %w", e.TaskID, err)
	}
	return nil
}

// Active implements store.Ideas.
func (r *Ideas) Active(ctx context.Context) ([]idea.Idea, error) {
	return queryIdeas(ctx, r.q, `SELECT `+ideaColumns+` FROM ideas WHERE archived = FALSE ORDER BY score DESC, id`)
}

// StagePages implements store.Ideas in one statement: a page of each
// stage, each read from the ideas_stage_rank index (archived, stage,
// score DESC, id), and the at most len(idea.Stages) × limit rows ordered
// again once joined.
func (r *Ideas) StagePages(ctx context.Context, limit, offset int) (map[idea.Stage][]string, error) {
	query, args := stagePagesQuery(limit, offset)
	rows, err := r.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read a page of each stage: %w", err)
	}
	defer rows.Close()
	out := map[idea.Stage][]string{}
	for rows.Next() {
		var stage, id string
		if err := rows.Scan(&stage, &id); err != nil {
			return nil, fmt.Errorf("read a page of each stage: %w", err)
		}
		out[idea.Stage(stage)] = append(out[idea.Stage(stage)], id)
	}
	return out, rows.Err()
}

// stagePagesQuery is StagePages' statement and its arguments.
func stagePagesQuery(limit, offset int) (string, []any) {
	parts := make([]string, len(idea.Stages))
	args := []any{limit, offset}
	for k, s := range idea.Stages {
		args = append(args, string(s))
		parts[k] = fmt.Sprintf(`SELECT * FROM (SELECT stage, score, id FROM ideas WHERE archived = FALSE AND stage = $%d
			ORDER BY score DESC, id LIMIT $1 OFFSET $2) s%d`, len(args), k)
	}
	return `SELECT stage, id FROM (` + strings.Join(parts, ` UNION ALL `) + `) p ORDER BY stage, score DESC, id`, args
}

// ChildCounts implements store.Ideas.
func (r *Ideas) ChildCounts(ctx context.Context) (map[string]int, error) {
	rows, err := r.q.Query(ctx, `SELECT parent_idea_id, COUNT(*) FROM ideas WHERE parent_idea_id IS NOT NULL GROUP BY parent_idea_id`)
	if err != nil {
		return nil, fmt.Errorf("count children: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("count children: %w", err)
		}
		out[id] = n
	}
	return out, rows.Err()
}

// Tags implements store.Ideas.
func (r *Ideas) Tags(ctx context.Context) ([]store.TagCount, error) {
	// Kept by every idea write (adjustTags): one row per tag.
	rows, err := r.q.Query(ctx, `SELECT tag, ideas FROM tag_totals WHERE ideas > 0 ORDER BY tag`)
	if err != nil {
		return nil, fmt.Errorf("tags catalog: %w", err)
	}
	defer rows.Close()
	out := []store.TagCount{}
	for rows.Next() {
		var tc store.TagCount
		if err := rows.Scan(&tc.Tag, &tc.Ideas); err != nil {
			return nil, fmt.Errorf("tags catalog: %w", err)
		}
		out = append(out, tc)
	}
	return out, rows.Err()
}

// Counts implements store.Ideas.
func (r *Ideas) Counts(ctx context.Context) (store.Counts, error) {
	// Kept by triggers (migration 0014): no walk of any table.
	rows, err := r.q.Query(ctx, `SELECT name, SUM(n) FROM row_counts GROUP BY name`)
	if err != nil {
		return store.Counts{}, fmt.Errorf("count rows: %w", err)
	}
	defer rows.Close()
	var c store.Counts
	for rows.Next() {
		var (
			name string
			n    int
		)
		if err := rows.Scan(&name, &n); err != nil {
			return store.Counts{}, fmt.Errorf("count rows: %w", err)
		}
		switch name {
		case "ideas":
			c.Ideas = n
		case "idea_questions":
			c.Questions = n
		case "idea_tags":
			c.IdeaTags = n
		case "health_snapshots":
			c.Snapshots = n
		}
	}
	return c, rows.Err()
}

// RecordStage implements store.Ideas. The stint is worked out in the
// INSERT itself, by migration 0005's rule: the idea's latest change before
// this one by (at, id), one step back along stage_changes_idea, gives it
// (NULL when that change is "migrated", when there is none, and at a
// creation). The previous change is bounded by this one's (at, id), so a
// stint is never negative and equals what the migration's backfill would
// have written. The CAST gives $3 a type where it is tested: Postgres
// infers none from IS NULL alone and refuses the statement.
func (r *Ideas) RecordStage(ctx context.Context, c store.StageChange) error {
	var from any
	if c.From != "" {
		from = string(c.From)
	}
	var handle any
	if c.ActorHandle != "" {
		handle = c.ActorHandle
	}
	if _, err := r.q.Exec(ctx, `INSERT INTO stage_changes (id, idea_id, from_stage, to_stage, at, actor, reason, actor_handle, stint_us)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN CAST($3 AS TEXT) IS NULL THEN NULL ELSE (
			SELECT CASE WHEN prev.reason = 'migrated' THEN NULL ELSE $5 - prev.at END
			FROM stage_changes prev
			WHERE prev.idea_id = $2 AND (prev.at < $5 OR (prev.at = $5 AND prev.id < $1))
			ORDER BY prev.at DESC, prev.id DESC
			LIMIT 1) END`,
		c.ID, c.IdeaID, from, string(c.To), database.Micros(c.At), c.Actor, c.Reason, handle); err != nil {
		return fmt.Errorf("record the stage of %s: %w", c.IdeaID, err)
	}
	return nil
}

// Stints implements store.Ideas in one query whose cost follows the
// stints in the window, not the history: the stages are listed so that
// each is one range of the stage_changes_exit index (from_stage, at) from
// since on (an IN on the index's first column; a bare at >= since would
// walk the whole index). The rows of the window whose stint is unknown
// (the first change after a "migrated" one) are read and dropped; the
// sort by stint covers the window's rows only.
func (r *Ideas) Stints(ctx context.Context, since time.Time) (map[idea.Stage][]time.Duration, error) {
	args := make([]any, 0, len(idea.Stages)+1)
	args = append(args, database.Micros(since))
	for _, s := range idea.Stages {
		args = append(args, string(s))
	}
	rows, err := r.q.Query(ctx, `SELECT from_stage, stint_us FROM stage_changes
		WHERE from_stage IN (`+database.Placeholders(2, len(idea.Stages))+`) AND at >= $1 AND stint_us IS NOT NULL
		ORDER BY from_stage, stint_us`, args...)
	if err != nil {
		return nil, fmt.Errorf("read the stints since %s: %w", since, err)
	}
	defer rows.Close()
	out := map[idea.Stage][]time.Duration{}
	for rows.Next() {
		var (
			stage string
			us    int64
		)
		if err := rows.Scan(&stage, &us); err != nil {
			return nil, fmt.Errorf("read the stints since %s: %w", since, err)
		}
		out[idea.Stage(stage)] = append(out[idea.Stage(stage)], time.Duration(us)*time.Microsecond)
	}
	return out, rows.Err()
}

// stages is the stage history: stage_changes. An idea's first change
// has no from_stage.
var stages = newHistory("the stages", "stage_changes", "from_stage, to_stage, actor, reason, actor_handle")

// Stages implements store.Ideas in one round trip (history.page): the
// count of the idea's changes and the page are two ranges of the
// (idea_id, at, id) index.
func (r *Ideas) Stages(ctx context.Context, ideaID string, limit, offset int) ([]store.StageChange, int, error) {
	return page(ctx, r.q, stages, ideaID, limit, offset, func() ([]any, func(string, time.Time) store.StageChange) {
		var from, to, actor, reason, handle *string
		return []any{&from, &to, &actor, &reason, &handle}, func(id string, at time.Time) store.StageChange {
			return store.StageChange{ID: id, IdeaID: ideaID, From: idea.Stage(text(from)), To: idea.Stage(*to),
				At: at, Actor: *actor, Reason: *reason, ActorHandle: text(handle)}
		}
	})
}

// Package sqlstore implements the portfolio store on Postgres and SQLite
// with one set of SQL statements (see the platform database package).
package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Store is the SQL portfolio store.
type Store struct {
	db *database.DB
}

var _ store.Store = (*Store)(nil)

// New returns a store over an open, migrated database.
func New(db *database.DB) *Store { return &Store{db: db} }

const ideaColumns = `id, name, description, potential_value, estimated_cost, actual_value, actual_cost,
	confidence, resistance_risk, stage, manifestation_status,
	cost_compute, cost_infrastructure, cost_human_attention,
	value_adoption, value_lineage, value_friction_avoided,
	open_question_count, task_count, parent_idea_id, merged_into_id, archived, created_at, updated_at`

func scanIdea(row database.Row) (idea.Idea, error) {
	var (
		i                           idea.Idea
		stage, manifestation        string
		cc, ci, ch, va, vl, vf      *float64
		parent, merged              *string
		createdMicros, updatedMicro int64
	)
	err := row.Scan(&i.ID, &i.Name, &i.Description, &i.PotentialValue, &i.EstimatedCost, &i.ActualValue, &i.ActualCost,
		&i.Confidence, &i.ResistanceRisk, &stage, &manifestation,
		&cc, &ci, &ch, &va, &vl, &vf,
		&i.OpenQuestions, &i.TaskCount, &parent, &merged, &i.Archived, &createdMicros, &updatedMicro)
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
	i.CreatedAt, i.UpdatedAt = database.Time(createdMicros), database.Time(updatedMicro)
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
	return []any{i.ID, i.Name, i.Description, i.PotentialValue, i.EstimatedCost, i.ActualValue, i.ActualCost,
		i.Confidence, i.ResistanceRisk, string(i.Stage), string(i.Manifestation),
		cc, ci, ch, va, vl, vf,
		i.OpenQuestions, i.TaskCount, database.NullString(i.ParentID), database.NullString(i.MergedIntoID), i.Archived,
		i.CreatedAt.UnixMicro(), i.UpdatedAt.UnixMicro()}
}

// CreateIdea implements store.Store.
func (s *Store) CreateIdea(ctx context.Context, i idea.Idea) error {
	err := s.db.Tx(ctx, func(tx database.Querier) error { return insertIdea(ctx, tx, i) })
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
	if i.Manifestation == idea.Validated {
		c.validated = 1
	}
	return c
}

// amountMicros is an amount in exact micro-units, as the totals keep it.
func amountMicros(v float64) int64 { return int64(math.Round(v * 1e6)) }

// adjustTotals moves the totals from before's contribution to after's.
func adjustTotals(ctx context.Context, tx database.Querier, before, after idea.Idea) error {
	b, a := contributionOf(before), contributionOf(after)
	if a == b {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE portfolio_totals SET total_ideas = total_ideas + $1, validated_ideas = validated_ideas + $2,
		potential_value_micros = potential_value_micros + $3, actual_value_micros = actual_value_micros + $4 WHERE id = 1`,
		a.ideas-b.ideas, a.validated-b.validated, a.potential-b.potential, a.actual-b.actual)
	return err
}

// GetIdea implements store.Store.
func (s *Store) GetIdea(ctx context.Context, id string) (idea.Idea, error) {
	i, err := getIdea(ctx, s.db, id, false)
	if err != nil {
		return idea.Idea{}, err
	}
	return i, nil
}

func getIdea(ctx context.Context, q database.Querier, id string, lock bool) (idea.Idea, error) {
	query := `SELECT ` + ideaColumns + ` FROM ideas WHERE id = $1`
	if lock && q.Engine() == database.Postgres {
		query += ` FOR UPDATE`
	}
	i, err := scanIdea(q.QueryRow(ctx, query, id))
	if errors.Is(err, database.ErrNoRows) {
		return idea.Idea{}, fmt.Errorf("idea %s: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return idea.Idea{}, fmt.Errorf("load idea %s: %w", id, err)
	}
	tags, err := loadTags(ctx, q, []string{id})
	if err != nil {
		return idea.Idea{}, err
	}
	if t := tags[id]; t != nil {
		i.Tags = t
	}
	return i, nil
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

// ListIdeas implements store.Store. The page is read through the ideas_rank
// index (archived, score DESC, id), so its cost does not grow with the
// portfolio; only a filtered total is counted.
func (s *Store) ListIdeas(ctx context.Context, f store.Filter) ([]idea.Idea, int, error) {
	where := []string{"archived = FALSE"}
	var args []any
	if f.OnlyUnvalidated {
		where = append(where, "manifestation_status <> 'validated'")
	}
	if f.ExcludeComplete {
		where = append(where, "stage <> 'complete'")
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
	ideas, err := queryIdeas(ctx, s.db, `SELECT `+ideaColumns+` FROM ideas WHERE `+cond+
		fmt.Sprintf(` ORDER BY score DESC, id LIMIT $%d OFFSET $%d`, n+1, n+2), append(args, f.Limit, f.Offset)...)
	if err != nil {
		return nil, 0, err
	}
	var total int
	switch {
	case len(f.Tags) == 0 && !f.ExcludeComplete:
		t, err := s.Totals(ctx)
		if err != nil {
			return nil, 0, err
		}
		total = t.Ideas
		if f.OnlyUnvalidated {
			total = t.Ideas - t.Validated
		}
	default:
		if err := s.db.QueryRow(ctx, `SELECT COUNT(*) FROM ideas WHERE `+cond, args...).Scan(&total); err != nil {
			return nil, 0, fmt.Errorf("count ideas: %w", err)
		}
	}
	return ideas, total, nil
}

// Totals implements store.Store.
func (s *Store) Totals(ctx context.Context) (store.Totals, error) {
	var t store.Totals
	var potential, actual int64
	err := s.db.QueryRow(ctx, `SELECT total_ideas, validated_ideas, potential_value_micros, actual_value_micros
		FROM portfolio_totals WHERE id = 1`).Scan(&t.Ideas, &t.Validated, &potential, &actual)
	if err != nil {
		return store.Totals{}, fmt.Errorf("read totals: %w", err)
	}
	t.PotentialValue, t.ActualValue = float64(potential)/1e6, float64(actual)/1e6
	return t, nil
}

// UpdateIdea implements store.Store.
func (s *Store) UpdateIdea(ctx context.Context, id string, change func(*idea.Idea) error) (idea.Idea, error) {
	var out idea.Idea
	err := s.db.Tx(ctx, func(tx database.Querier) error {
		before, err := getIdea(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if before.Archived {
			return fmt.Errorf("idea %s: %w", id, store.ErrArchived)
		}
		after := before
		after.Tags = append([]string(nil), before.Tags...)
		if err := change(&after); err != nil {
			return err
		}
		if err := writeIdea(ctx, tx, before, after); err != nil {
			return err
		}
		out = after
		return nil
	})
	return out, err
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

// AdvanceForTask implements store.Store. The task row is inserted first: a
// second report of the same task collides with it and changes nothing.
func (s *Store) AdvanceForTask(ctx context.Context, id, taskID, taskType string, at time.Time, advance func(*idea.Idea) bool) (idea.Idea, bool, idea.Stage, error) {
	var (
		out   idea.Idea
		moved bool
		from  idea.Stage
	)
	err := s.db.Tx(ctx, func(tx database.Querier) error {
		before, err := getIdea(ctx, tx, id, true)
		if err != nil {
			return err
		}
		out, moved, from = before, false, before.Stage
		var seen int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM idea_task_events WHERE task_id = $1`, taskID).Scan(&seen); err != nil {
			return fmt.Errorf("look up task %s: %w", taskID, err)
		}
		if seen > 0 || before.Archived {
			return nil
		}
		after := before
		moved = advance(&after)
		after.TaskCount++
		after.UpdatedAt = at
		if _, err := tx.Exec(ctx, `INSERT INTO idea_task_events (task_id, idea_id, task_type, from_stage, to_stage, created_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, taskID, id, taskType, string(before.Stage), string(after.Stage), at.UnixMicro()); err != nil {
			return fmt.Errorf("record task %s: %w", taskID, err)
		}
		if err := writeIdea(ctx, tx, before, after); err != nil {
			return err
		}
		out = after
		return nil
	})
	if database.IsUniqueViolation(err) {
		// A concurrent report of the same task won the race.
		i, gerr := s.GetIdea(ctx, id)
		return i, false, i.Stage, gerr
	}
	return out, moved, from, err
}

// AddQuestion implements store.Store.
func (s *Store) AddQuestion(ctx context.Context, q store.Question) error {
	return s.db.Tx(ctx, func(tx database.Querier) error {
		n, err := tx.Exec(ctx, `UPDATE ideas SET open_question_count = open_question_count + 1 WHERE id = $1`, q.IdeaID)
		if err != nil {
			return fmt.Errorf("count question: %w", err)
		}
		if n == 0 {
			return fmt.Errorf("idea %s: %w", q.IdeaID, store.ErrNotFound)
		}
		_, err = tx.Exec(ctx, `INSERT INTO idea_questions (id, idea_id, question, status, created_at) VALUES ($1, $2, $3, $4, $5)`,
			q.ID, q.IdeaID, q.Text, q.Status, q.CreatedAt.UnixMicro())
		if err != nil {
			return fmt.Errorf("add question: %w", err)
		}
		return nil
	})
}

// ListQuestions implements store.Store.
func (s *Store) ListQuestions(ctx context.Context, ideaID string) ([]store.Question, error) {
	if _, err := s.GetIdea(ctx, ideaID); err != nil {
		return nil, err
	}
	rows, err := s.db.Query(ctx, `SELECT id, idea_id, question, status, created_at FROM idea_questions
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

// OpenQuestions implements store.Store.
func (s *Store) OpenQuestions(ctx context.Context) (map[string][]string, error) {
	rows, err := s.db.Query(ctx, `SELECT q.idea_id, q.question FROM idea_questions q JOIN ideas i ON i.id = q.idea_id
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

// ActiveIdeas implements store.Store.
func (s *Store) ActiveIdeas(ctx context.Context) ([]idea.Idea, error) {
	return queryIdeas(ctx, s.db, `SELECT `+ideaColumns+` FROM ideas WHERE archived = FALSE ORDER BY score DESC, id`)
}

// ChildCounts implements store.Store.
func (s *Store) ChildCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.db.Query(ctx, `SELECT parent_idea_id, COUNT(*) FROM ideas WHERE parent_idea_id IS NOT NULL GROUP BY parent_idea_id`)
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

// Tags implements store.Store.
func (s *Store) Tags(ctx context.Context) ([]store.TagCount, error) {
	rows, err := s.db.Query(ctx, `SELECT t.tag, COUNT(*) FROM idea_tags t JOIN ideas i ON i.id = t.idea_id
		WHERE i.archived = FALSE GROUP BY t.tag ORDER BY t.tag`)
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

// Split implements store.Store.
func (s *Store) Split(ctx context.Context, parentID string, children []idea.Idea) error {
	err := s.db.Tx(ctx, func(tx database.Querier) error {
		parent, err := getIdea(ctx, tx, parentID, true)
		if err != nil {
			return err
		}
		if parent.Archived {
			return fmt.Errorf("idea %s: %w", parentID, store.ErrArchived)
		}
		for _, c := range children {
			c.ParentID = parentID
			if err := insertIdea(ctx, tx, c); err != nil {
				return fmt.Errorf("create child %s: %w", c.ID, err)
			}
		}
		return nil
	})
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("split %s: %w", parentID, store.ErrAlreadyExists)
	}
	return err
}

// Merge implements store.Store. Both ideas are locked in id order so two
// merges of the same pair cannot deadlock.
func (s *Store) Merge(ctx context.Context, keepID, foldID string, now time.Time) (idea.Idea, error) {
	var out idea.Idea
	err := s.db.Tx(ctx, func(tx database.Querier) error {
		first, second := keepID, foldID
		if second < first {
			first, second = second, first
		}
		loaded := map[string]idea.Idea{}
		for _, id := range []string{first, second} {
			i, err := getIdea(ctx, tx, id, true)
			if err != nil {
				return err
			}
			if i.Archived {
				return fmt.Errorf("idea %s: %w", id, store.ErrArchived)
			}
			loaded[id] = i
		}
		keep, fold := loaded[keepID], loaded[foldID]
		keptAfter := keep
		keptAfter.Tags = unionTags(keep.Tags, fold.Tags)
		keptAfter.UpdatedAt = now
		if err := writeIdea(ctx, tx, keep, keptAfter); err != nil {
			return err
		}
		foldAfter := fold
		foldAfter.Archived, foldAfter.MergedIntoID, foldAfter.UpdatedAt = true, keepID, now
		if err := writeIdea(ctx, tx, fold, foldAfter); err != nil {
			return err
		}
		out = keptAfter
		return nil
	})
	return out, err
}

func unionTags(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range append(append([]string(nil), a...), b...) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	normalized, err := idea.NormalizeTags(out)
	if err != nil {
		return a // both lists were valid; the union can only exceed the count limit
	}
	return normalized
}

// SaveSnapshot implements store.Store.
func (s *Store) SaveSnapshot(ctx context.Context, sn store.Snapshot) error {
	_, err := s.db.Exec(ctx, `INSERT INTO health_snapshots (id, taken_at, total_ideas, too_large, too_small, overlap, healthy, suggestion_count)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		sn.ID, sn.TakenAt.UnixMicro(), sn.TotalIdeas, sn.TooLarge, sn.TooSmall, sn.Overlap, sn.Healthy, sn.Suggested)
	if err != nil {
		return fmt.Errorf("save snapshot: %w", err)
	}
	return nil
}

// Snapshots implements store.Store.
func (s *Store) Snapshots(ctx context.Context, since time.Time) ([]store.Snapshot, error) {
	rows, err := s.db.Query(ctx, `SELECT id, taken_at, total_ideas, too_large, too_small, overlap, healthy, suggestion_count
		FROM health_snapshots WHERE taken_at >= $1 ORDER BY taken_at, id`, since.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	defer rows.Close()
	out := []store.Snapshot{}
	for rows.Next() {
		var sn store.Snapshot
		var taken int64
		if err := rows.Scan(&sn.ID, &taken, &sn.TotalIdeas, &sn.TooLarge, &sn.TooSmall, &sn.Overlap, &sn.Healthy, &sn.Suggested); err != nil {
			return nil, fmt.Errorf("list snapshots: %w", err)
		}
		sn.TakenAt = database.Time(taken)
		out = append(out, sn)
	}
	return out, rows.Err()
}

// Counts implements store.Store.
func (s *Store) Counts(ctx context.Context) (store.Counts, error) {
	var c store.Counts
	err := s.db.QueryRow(ctx, `SELECT
		(SELECT COUNT(*) FROM ideas), (SELECT COUNT(*) FROM idea_questions),
		(SELECT COUNT(*) FROM idea_tags), (SELECT COUNT(*) FROM health_snapshots)`).
		Scan(&c.Ideas, &c.Questions, &c.IdeaTags, &c.Snapshots)
	if err != nil {
		return store.Counts{}, fmt.Errorf("count rows: %w", err)
	}
	return c, nil
}

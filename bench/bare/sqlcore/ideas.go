package sqlcore

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ---------------------------------------------------------------------------
// 2. GET /api/ideas/{id} and 3. GET /api/ideas
//
// GetIdea mirrors portfolio handler.GetIdea (handler/handler.go) →
// usecase.App.Idea (usecase/ideas.go) → sqlstore.Ideas.Get → getIdea
// (store/sqlstore/ideas.go): one statement, the idea joined with its tags,
// one round trip on both servers.
//
// ListIdeas mirrors portfolio handler.ListIdeas → usecase.App.ListIdeas →
// sqlstore.Ideas.List (the page by score, the page's tags, the totals row
// for pagination.total, or a COUNT(*) when tags filter) and
// sqlstore.Ideas.Totals again for the summary. One round trip: the four
// statements in one batch. Deliberate difference: Foundry's tag query names
// the page's ids (IN ($1, …, $n)), which are known only once the page is
// read; the bare server's tag query selects the same page as a subquery
// (same WHERE, ORDER BY, LIMIT and OFFSET), so it needs no ids. The totals
// row is read twice, as Foundry reads it twice.

const ideaColumns = `id, name, description, potential_value, estimated_cost, actual_value, actual_cost,
	confidence, resistance_risk, stage, manifestation_status,
	cost_compute, cost_infrastructure, cost_human_attention,
	value_adoption, value_lineage, value_friction_avoided,
	open_question_count, task_count, parent_idea_id, merged_into_id, archived, created_at, updated_at`

const (
	// sqlGetIdea is getIdea's one statement: the idea with its tags, one
	// row per tag (a NULL tag when none).
	sqlGetIdea = `SELECT ` + ideaColumns + `, t.tag FROM portfolio.ideas LEFT JOIN portfolio.idea_tags t
		ON t.idea_id = ideas.id WHERE ideas.id = $1 ORDER BY t.tag`
	sqlIdeaTotals = `SELECT total_ideas, validated_ideas, potential_value_micros, actual_value_micros
		FROM portfolio.portfolio_totals WHERE id = 1`
	// Portfolio list limits (portfolio handler.DefaultLimit and MaxLimit).
	defaultIdeaLimit = 50
	maxIdeaLimit     = 500
	maxTags          = 32
)

// ideaRow is a row of ideaColumns.
type ideaRow struct {
	ID, Name, Description                                              string
	PotentialValue, EstimatedCost, ActualValue, ActualCost, Confidence float64
	ResistanceRisk                                                     float64
	Stage, Manifestation                                               string
	CostCompute, CostInfra, CostHuman                                  *float64
	ValueAdoption, ValueLineage, ValueFriction                         *float64
	OpenQuestions, TaskCount                                           int
	ParentID, MergedIntoID                                             *string
	Archived                                                           bool
	CreatedAt, UpdatedAt                                               int64
}

func scanIdea(row pgx.Row, extra ...any) (ideaRow, error) {
	var i ideaRow
	err := row.Scan(append([]any{&i.ID, &i.Name, &i.Description, &i.PotentialValue, &i.EstimatedCost, &i.ActualValue, &i.ActualCost,
		&i.Confidence, &i.ResistanceRisk, &i.Stage, &i.Manifestation,
		&i.CostCompute, &i.CostInfra, &i.CostHuman, &i.ValueAdoption, &i.ValueLineage, &i.ValueFriction,
		&i.OpenQuestions, &i.TaskCount, &i.ParentID, &i.MergedIntoID, &i.Archived, &i.CreatedAt, &i.UpdatedAt}, extra...)...)
	return i, err
}

// CostVector is an idea's cost split by kind.
type CostVector struct {
	Compute        float64 `json:"compute"`
	Infrastructure float64 `json:"infrastructure"`
	HumanAttention float64 `json:"human_attention"`
}

// ValueVector is an idea's value split by source.
type ValueVector struct {
	Adoption        float64 `json:"adoption"`
	Lineage         float64 `json:"lineage"`
	FrictionAvoided float64 `json:"friction_avoided"`
}

// Idea is an idea as the routes answer it.
type Idea struct {
	ID                  string      `json:"id"`
	Name                string      `json:"name"`
	Description         string      `json:"description"`
	PotentialValue      float64     `json:"potential_value"`
	EstimatedCost       float64     `json:"estimated_cost"`
	ActualValue         float64     `json:"actual_value"`
	ActualCost          float64     `json:"actual_cost"`
	Confidence          float64     `json:"confidence"`
	ResistanceRisk      float64     `json:"resistance_risk"`
	Stage               string      `json:"stage"`
	ManifestationStatus string      `json:"manifestation_status"`
	Tags                []string    `json:"tags"`
	CostVector          CostVector  `json:"cost_vector"`
	ValueVector         ValueVector `json:"value_vector"`
	Score               float64     `json:"score"`
	OpenQuestionCount   int         `json:"open_question_count"`
	ParentIdeaID        *string     `json:"parent_idea_id"`
	Archived            bool        `json:"archived"`
	CreatedAt           string      `json:"created_at"`
	UpdatedAt           string      `json:"updated_at"`
}

// ideaOut is portfolio handler.toProto: the vectors default to splits of the
// estimates (idea.Costs, idea.Values) and the score (idea.Score) is shown
// to 4 decimals.
func ideaOut(i ideaRow, tags []string) Idea {
	if tags == nil {
		tags = []string{}
	}
	cv := CostVector{Compute: 0.60 * i.EstimatedCost, Infrastructure: 0.15 * i.EstimatedCost, HumanAttention: 0.25 * i.EstimatedCost}
	if i.CostCompute != nil && i.CostInfra != nil && i.CostHuman != nil {
		cv = CostVector{Compute: *i.CostCompute, Infrastructure: *i.CostInfra, HumanAttention: *i.CostHuman}
	}
	vv := ValueVector{Adoption: 0.50 * i.PotentialValue, Lineage: 0.30 * i.PotentialValue, FrictionAvoided: 0.20 * i.PotentialValue}
	if i.ValueAdoption != nil && i.ValueLineage != nil && i.ValueFriction != nil {
		vv = ValueVector{Adoption: *i.ValueAdoption, Lineage: *i.ValueLineage, FrictionAvoided: *i.ValueFriction}
	}
	score := i.PotentialValue * i.Confidence / math.Max(i.EstimatedCost+i.ResistanceRisk, 0.5)
	return Idea{
		ID: i.ID, Name: i.Name, Description: i.Description,
		PotentialValue: i.PotentialValue, EstimatedCost: i.EstimatedCost, ActualValue: i.ActualValue, ActualCost: i.ActualCost,
		Confidence: i.Confidence, ResistanceRisk: i.ResistanceRisk, Stage: i.Stage, ManifestationStatus: i.Manifestation,
		Tags: tags, CostVector: cv, ValueVector: vv, Score: math.Round(score*1e4) / 1e4,
		OpenQuestionCount: i.OpenQuestions, ParentIdeaID: i.ParentID, Archived: i.Archived,
		CreatedAt: rfc3339(fromMicros(i.CreatedAt)), UpdatedAt: rfc3339(fromMicros(i.UpdatedAt)),
	}
}

// readTags collects the (idea_id, tag) rows of a tags query.
func readTags(br pgx.BatchResults) (map[string][]string, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id, tag string
		if err := rows.Scan(&id, &tag); err != nil {
			return nil, err
		}
		out[id] = append(out[id], tag)
	}
	return out, rows.Err()
}

// GetIdea is GET /api/ideas/{id}.
func (core *Core) GetIdea(ctx context.Context, id string) (Idea, error) {
	b := &pgx.Batch{}
	b.Queue(sqlGetIdea, id)
	var out Idea
	err := core.run(ctx, b, func(br pgx.BatchResults) error {
		i, tags, found, err := readIdeaTags(br)
		if err != nil {
			return fmt.Errorf("load idea %s: %w", id, err)
		}
		if !found {
			return fail(http.StatusNotFound, "idea %s not found", id)
		}
		out = ideaOut(i, tags)
		return nil
	})
	if err != nil {
		return Idea{}, err
	}
	return out, nil
}

var (
	tagPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
	spaceRuns  = regexp.MustCompile(`\s+`)
)

// normalizeTags is idea.NormalizeTags.
func normalizeTags(tags []string) ([]string, error) {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		n := spaceRuns.ReplaceAllString(strings.ToLower(strings.TrimSpace(t)), "-")
		if !tagPattern.MatchString(n) {
			return nil, fmt.Errorf("tag %q must be 1 to 40 letters, digits, _ or - after normalising", t)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxTags {
		return nil, fmt.Errorf("at most %d tags", maxTags)
	}
	return out, nil
}

// IdeaSummary totals the portfolio.
type IdeaSummary struct {
	TotalIdeas          int64   `json:"total_ideas"`
	UnvalidatedIdeas    int64   `json:"unvalidated_ideas"`
	ValidatedIdeas      int64   `json:"validated_ideas"`
	TotalPotentialValue float64 `json:"total_potential_value"`
	TotalActualValue    float64 `json:"total_actual_value"`
	TotalValueGap       float64 `json:"total_value_gap"`
}

// Pagination describes a page of a list.
type Pagination struct {
	Limit   int   `json:"limit"`
	Offset  int   `json:"offset"`
	Total   int64 `json:"total"`
	HasMore bool  `json:"has_more"`
}

// IdeaList is GET /api/ideas' answer.
type IdeaList struct {
	Ideas      []Idea      `json:"ideas"`
	Summary    IdeaSummary `json:"summary"`
	Pagination Pagination  `json:"pagination"`
}

type ideaTotals struct{ ideas, validated, potential, actual int64 }

func scanTotals(row pgx.Row) (ideaTotals, error) {
	var t ideaTotals
	err := row.Scan(&t.ideas, &t.validated, &t.potential, &t.actual)
	return t, err
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// IdeaQuery is GET /api/ideas' query, each field checked (IdeaLimit,
// IdeaOffset, IdeaTags).
type IdeaQuery struct {
	Limit, Offset   int
	OnlyUnvalidated bool
	Tags            []string
}

// IdeaLimit is the page's size: the default when the request gives none.
func IdeaLimit(lp *int) (int, error) {
	if lp == nil {
		return defaultIdeaLimit, nil
	}
	if *lp < 1 || *lp > maxIdeaLimit {
		return 0, invalid(field("limit", "must be between 1 and %d", maxIdeaLimit))
	}
	return *lp, nil
}

// IdeaOffset is the page's offset: 0 when the request gives none.
func IdeaOffset(op *int) (int, error) {
	if op == nil {
		return 0, nil
	}
	if *op < 0 {
		return 0, invalid(field("offset", "must not be negative"))
	}
	return *op, nil
}

// IdeaTags normalises the tags the ideas must all carry.
func IdeaTags(raw []string) ([]string, error) {
	tags, err := normalizeTags(raw)
	if err != nil {
		return nil, invalid(field("tags", "%v", err))
	}
	return tags, nil
}

// ListIdeas is GET /api/ideas with a checked query.
func (core *Core) ListIdeas(ctx context.Context, q IdeaQuery) (IdeaList, error) {
	limit, offset, onlyUnvalidated, tags := q.Limit, q.Offset, q.OnlyUnvalidated, q.Tags

	// The WHERE clause of sqlstore.Ideas.List.
	where := []string{"archived = FALSE"}
	var args []any
	if onlyUnvalidated {
		where = append(where, "manifestation_status <> 'validated'")
	}
	if len(tags) > 0 {
		ph := make([]string, len(tags))
		for k, t := range tags {
			args = append(args, t)
			ph[k] = "$" + strconv.Itoa(k+1)
		}
		where = append(where, `id IN (SELECT idea_id FROM portfolio.idea_tags WHERE tag IN (`+strings.Join(ph, ", ")+
			`) GROUP BY idea_id HAVING COUNT(*) = `+strconv.Itoa(len(tags))+`)`)
	}
	cond := strings.Join(where, " AND ")
	n := len(args)
	page := fmt.Sprintf(` ORDER BY score DESC, id LIMIT $%d OFFSET $%d`, n+1, n+2)
	pageArgs := append(slices.Clone(args), limit, offset)

	b := &pgx.Batch{}
	b.Queue(`SELECT `+ideaColumns+` FROM portfolio.ideas WHERE `+cond+page, pageArgs...)
	b.Queue(`SELECT idea_id, tag FROM portfolio.idea_tags WHERE idea_id IN (SELECT id FROM portfolio.ideas WHERE `+cond+page+
		`) ORDER BY idea_id, tag`, pageArgs...)
	if len(tags) == 0 {
		b.Queue(sqlIdeaTotals)
	} else {
		b.Queue(`SELECT COUNT(*) FROM portfolio.ideas WHERE `+cond, args...)
	}
	b.Queue(sqlIdeaTotals)

	var (
		ideas  []ideaRow
		byIdea map[string][]string
		total  int64
		totals ideaTotals
	)
	err := core.run(ctx, b, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("list ideas: %w", err)
		}
		for rows.Next() {
			i, err := scanIdea(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("list ideas: %w", err)
			}
			ideas = append(ideas, i)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list ideas: %w", err)
		}
		if byIdea, err = readTags(br); err != nil {
			return fmt.Errorf("load tags: %w", err)
		}
		if len(tags) == 0 {
			t, err := scanTotals(br.QueryRow())
			if err != nil {
				return fmt.Errorf("read totals: %w", err)
			}
			total = t.ideas
			if onlyUnvalidated {
				total = t.ideas - t.validated
			}
		} else if err := br.QueryRow().Scan(&total); err != nil {
			return fmt.Errorf("count ideas: %w", err)
		}
		if totals, err = scanTotals(br.QueryRow()); err != nil {
			return fmt.Errorf("read totals: %w", err)
		}
		return nil
	})
	if err != nil {
		return IdeaList{}, err
	}
	potential, actual := float64(totals.potential)/1e6, float64(totals.actual)/1e6
	out := IdeaList{
		Ideas: make([]Idea, 0, len(ideas)),
		Summary: IdeaSummary{
			TotalIdeas: totals.ideas, ValidatedIdeas: totals.validated, UnvalidatedIdeas: totals.ideas - totals.validated,
			TotalPotentialValue: round6(potential), TotalActualValue: round6(actual), TotalValueGap: round6(potential - actual),
		},
		Pagination: Pagination{Limit: limit, Offset: offset, Total: total, HasMore: int64(offset+len(ideas)) < total},
	}
	for _, i := range ideas {
		out.Ideas = append(out.Ideas, ideaOut(i, byIdea[i.ID]))
	}
	return out, nil
}

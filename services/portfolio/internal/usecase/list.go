package usecase

import (
	"context"
	"math"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Page is one page of the ranked list with the portfolio totals.
type Page struct {
	Ideas []idea.Idea
	// Total is how many ideas match the filter in all.
	Total  int
	Totals store.Totals
	// Limit and Offset are the page's bounds, the defaults applied.
	Limit, Offset int
}

// Page sizes of the lists.
const (
	DefaultLimit          = 50
	DefaultCandidateLimit = 10
	MaxLimit              = 500
	// DefaultProgressLimit and MaxProgressLimit bound the idea ids listed
	// per stage by the progress dashboard.
	DefaultProgressLimit = 100
	MaxProgressLimit     = 1000
)

// ListQuery asks for a page of the ranked list, as the caller gave it.
type ListQuery struct {
	OnlyUnvalidated bool
	Tags            []string
	// Limit is DefaultLimit when nil, else 1..MaxLimit.
	Limit  *int32
	Offset int32
}

// ListIdeas returns a page of active ideas by score (descending, then id)
// and the portfolio totals.
func (a *App) ListIdeas(ctx context.Context, q ListQuery) (Page, error) {
	limit, offset, errs := fault.PageFields(q.Limit, q.Offset, DefaultLimit, MaxLimit)
	tags, err := idea.NormalizeTags(q.Tags)
	if err != nil {
		errs = append(errs, fault.Field("tags", "%v", err))
	}
	if len(errs) > 0 {
		return Page{}, fault.Validation(errs...)
	}
	f := store.Filter{OnlyUnvalidated: q.OnlyUnvalidated, Tags: tags, Limit: limit, Offset: offset}
	ideas, total, totals, err := a.read().Ideas.List(ctx, f)
	if err != nil {
		return Page{}, err
	}
	return Page{Ideas: ideas, Total: total, Totals: totals, Limit: limit, Offset: offset}, nil
}

// Candidates returns up to limit active ideas not yet complete whose
// values an operator accepted, best score first: the ideas work can be
// picked from. A contributor's idea awaiting review is left out, so its
// own claims of value never steer the loop.
func (a *App) Candidates(ctx context.Context, limit *int32) ([]idea.Idea, error) {
	l, _, err := fault.Page(limit, 0, DefaultCandidateLimit, MaxLimit)
	if err != nil {
		return nil, err
	}
	ideas, _, _, err := a.read().Ideas.List(ctx, store.Filter{ExcludeComplete: true, OnlyAccepted: true, Limit: l})
	return ideas, err
}

// Tags is the tags catalog over active ideas, ordered by tag.
func (a *App) Tags(ctx context.Context) ([]store.TagCount, error) {
	return a.read().Ideas.Tags(ctx)
}

// Progress is the progress dashboard: how many active ideas are at each
// stage, a page of each stage's idea ids, and the share at complete.
type Progress struct {
	Total int
	// ByStage has every stage, empty ones included.
	ByStage       map[idea.Stage]StageBucket
	CompletionPct float64
}

// StageBucket is one stage of the dashboard: its count and a page of its
// ideas' ids, best score first.
type StageBucket struct {
	Count   int
	IdeaIDs []string
}

// Progress counts the active ideas by stage and lists a page (limit
// DefaultProgressLimit when nil, else 1..MaxProgressLimit, from offset) of
// each stage's ideas; CompletionPct is rounded to four places. The counts
// are the ones every write keeps and each page a range of an index: it
// read every active idea (30 s and gigabytes at 10^6 ideas).
func (a *App) Progress(ctx context.Context, limit *int32, offset int32) (Progress, error) {
	l, o, err := fault.Page(limit, offset, DefaultProgressLimit, MaxProgressLimit)
	if err != nil {
		return Progress{}, err
	}
	r := a.read()
	counts, err := r.Ideas.StageTotals(ctx)
	if err != nil {
		return Progress{}, err
	}
	pages, err := r.Ideas.StagePages(ctx, l, o)
	if err != nil {
		return Progress{}, err
	}
	out := Progress{ByStage: make(map[idea.Stage]StageBucket, len(idea.Stages))}
	for _, s := range idea.Stages {
		ids := pages[s]
		if ids == nil {
			ids = []string{}
		}
		out.ByStage[s] = StageBucket{Count: counts[s], IdeaIDs: ids}
		out.Total += counts[s]
	}
	if out.Total > 0 {
		out.CompletionPct = math.Round(float64(counts[idea.Complete])/float64(out.Total)*1e4) / 1e4
	}
	return out, nil
}

package usecase

import (
	"context"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Analysis is a right-sizing report over the active portfolio.
type Analysis struct {
	Report rightsizing.Report
	// Items are the analysed ideas by id.
	Items map[string]rightsizing.Item
	// At is when the analysis ran.
	At time.Time
}

// Analyze runs right-sizing (a pure function of the active ideas, their
// open questions and child counts) over the active portfolio.
func (a *App) Analyze(ctx context.Context) (Analysis, error) {
	r := a.read()
	ideas, err := r.Ideas.Active(ctx)
	if err != nil {
		return Analysis{}, err
	}
	questions, err := r.Questions.Open(ctx)
	if err != nil {
		return Analysis{}, err
	}
	children, err := r.Ideas.ChildCounts(ctx)
	if err != nil {
		return Analysis{}, err
	}
	items := make([]rightsizing.Item, 0, len(ideas))
	byID := make(map[string]rightsizing.Item, len(ideas))
	for _, i := range ideas {
		it := rightsizing.Item{
			ID: i.ID, Name: i.Name, Description: i.Description, Score: i.Score(),
			InProgress:    i.Stage != idea.None && i.Stage != idea.Complete,
			OpenQuestions: questions[i.ID], TaskCount: i.TaskCount, ChildCount: children[i.ID],
		}
		items = append(items, it)
		byID[i.ID] = it
	}
	return Analysis{Report: rightsizing.AnalyzeWithin(items, a.cfg.Limits), Items: byID, At: a.now()}, nil
}

// ProposeSplit builds the child ideas a split of parent would create: the
// proposed children, or those right-sizing proposes when there are none.
// Each child starts at stage none and takes an equal share of the parent's
// value and cost estimates (rightsizing.Shares: exact, they add up), its confidence, resistance and tags. Nothing is
// stored (see Split).
func (a *App) ProposeSplit(ctx context.Context, parent idea.Idea, proposed []rightsizing.Child) ([]idea.Idea, error) {
	if len(proposed) == 0 {
		an, err := a.Analyze(ctx)
		if err != nil {
			return nil, err
		}
		proposed = rightsizing.ProposeChildren(an.Items[parent.ID])
	}
	now := a.now()
	values, costs := rightsizing.Shares(parent.PotentialValue, len(proposed)), rightsizing.Shares(parent.EstimatedCost, len(proposed))
	children := make([]idea.Idea, 0, len(proposed))
	for k, c := range proposed {
		child, err := idea.New(idea.Draft{
			Name: c.Name, Description: c.Description,
			PotentialValue: values[k], EstimatedCost: costs[k],
			Confidence: &parent.Confidence, ResistanceRisk: &parent.ResistanceRisk, Tags: parent.Tags,
		}, a.cfg.NewID(), now)
		if err != nil {
			return nil, err
		}
		child.ParentID = parent.ID
		children = append(children, child)
	}
	return children, nil
}

// Split stores children of an active parent in one transaction, under the
// parent's lock. store.ErrArchived when the parent is archived,
// store.ErrAlreadyExists when a child's id is taken (nothing is stored).
func (a *App) Split(ctx context.Context, parentID string, children []idea.Idea) error {
	err := a.tx(ctx, func(r Repos) error {
		parent, err := r.Ideas.Lock(ctx, parentID)
		if err != nil {
			return err
		}
		if parent.Archived {
			return fmt.Errorf("idea %s: %w", parentID, store.ErrArchived)
		}
		if len(children) > 0 && !parent.Split {
			// The children carry the parent's value from now on.
			split := parent
			split.Split = true
			if err := r.Ideas.Update(ctx, parent, split); err != nil {
				return err
			}
		}
		for _, c := range children {
			c.ParentID = parentID
			if err := a.create(ctx, r, c, "split:"+parentID, ""); err != nil {
				return fmt.Errorf("create child %s: %w", c.ID, err)
			}
		}
		return nil
	})
	return wrap("split "+parentID, err)
}

// Merge folds foldID into keepID (idea.Merge: keep gains fold's tags, fold
// is archived) in one transaction and returns keep as stored. Both ideas
// are locked in id order, so two merges of the same pair cannot deadlock.
// store.ErrArchived when either is archived.
func (a *App) Merge(ctx context.Context, keepID, foldID string) (idea.Idea, error) {
	now := a.now()
	var out idea.Idea
	err := a.tx(ctx, func(r Repos) error {
		first, second := keepID, foldID
		if second < first {
			first, second = second, first
		}
		loaded := map[string]idea.Idea{}
		for _, id := range []string{first, second} {
			i, err := r.Ideas.Lock(ctx, id)
			if err != nil {
				return err
			}
			if i.Archived {
				return fmt.Errorf("idea %s: %w", id, store.ErrArchived)
			}
			loaded[id] = i
		}
		keep, fold := loaded[keepID], loaded[foldID]
		kept, folded := idea.Merge(keep, fold, now)
		if err := r.Ideas.Update(ctx, keep, kept); err != nil {
			return err
		}
		if err := r.Ideas.Update(ctx, fold, folded); err != nil {
			return err
		}
		out = kept
		return nil
	})
	return out, err
}

// TakeSnapshot records the portfolio's current health.
func (a *App) TakeSnapshot(ctx context.Context) (store.Snapshot, error) {
	an, err := a.Analyze(ctx)
	if err != nil {
		return store.Snapshot{}, err
	}
	h := an.Report.Health
	s := store.Snapshot{
		ID: a.cfg.NewID(), TakenAt: an.At, TotalIdeas: h.Total, TooLarge: h.TooLarge,
		TooSmall: h.TooSmall, Overlap: h.Overlap, Healthy: h.Healthy, Suggested: h.Suggestions,
	}
	return s, a.tx(ctx, func(r Repos) error { return r.Snapshots.Save(ctx, s) })
}

// DefaultSnapshotRetention is how long health snapshots are kept: past
// the longest history GET /api/ideas/right-sizing/history answers
// (MaxHistoryDays).
const DefaultSnapshotRetention = 400 * 24 * time.Hour

// PruneSnapshots deletes at most batch of the health snapshots taken
// before before, oldest first, and reports how many: the retention
// runner's prune (retention.Retainer).
func (a *App) PruneSnapshots(ctx context.Context, before time.Time, batch int) (int64, error) {
	var n int64
	err := a.tx(ctx, func(r Repos) error {
		var err error
		n, err = r.Snapshots.Prune(ctx, before, batch)
		return err
	})
	return n, err
}

// History window bounds, in days.
const (
	DefaultHistoryDays = 30
	MaxHistoryDays     = 365
)

// History returns the health snapshots of the last days days
// (DefaultHistoryDays when nil, else 1..MaxHistoryDays), oldest first.
func (a *App) History(ctx context.Context, days *int32) ([]store.Snapshot, error) {
	d := int32(DefaultHistoryDays)
	if days != nil {
		if *days < 1 || *days > MaxHistoryDays {
			return nil, fault.Validation(fault.Field("days", "must be between 1 and %d", MaxHistoryDays))
		}
		d = *days
	}
	return a.read().Snapshots.Since(ctx, a.now().Add(-time.Duration(d)*24*time.Hour))
}

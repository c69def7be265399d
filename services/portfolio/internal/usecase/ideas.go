package usecase

import (
	"context"
	"errors"
	"fmt"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// CreateIdea validates a draft and stores the idea it describes (a new id
// when the draft has none), stamped with the current time and, for a
// contributor, with its creator. store.ErrAlreadyExists when the id is
// taken.
func (a *App) CreateIdea(ctx context.Context, ed idea.Editor, d idea.Draft) (idea.Idea, error) {
	if err := ed.CheckCreate(d); err != nil {
		return idea.Idea{}, err
	}
	d.CreatedBy = ed.ContributorID
	i, err := idea.New(d, a.cfg.NewID(), a.now())
	if err != nil {
		return idea.Idea{}, err
	}
	if err := a.tx(ctx, func(r Repos) error { return r.Ideas.Create(ctx, i) }); err != nil {
		return idea.Idea{}, err
	}
	return i, nil
}

// Idea returns an idea, archived or not. store.ErrNotFound when absent.
func (a *App) Idea(ctx context.Context, id string) (idea.Idea, error) {
	return a.read().Ideas.Get(ctx, id)
}

// Page is one page of the ranked list with the portfolio totals.
type Page struct {
	Ideas []idea.Idea
	// Total is how many ideas match the filter in all.
	Total  int
	Totals store.Totals
}

// ListIdeas returns a page of active ideas by score (descending, then id)
// and the portfolio totals.
func (a *App) ListIdeas(ctx context.Context, f store.Filter) (Page, error) {
	r := a.read()
	ideas, total, err := r.Ideas.List(ctx, f)
	if err != nil {
		return Page{}, err
	}
	totals, err := r.Ideas.Totals(ctx)
	if err != nil {
		return Page{}, err
	}
	return Page{Ideas: ideas, Total: total, Totals: totals}, nil
}

// Candidates returns up to limit active ideas not yet complete, best score
// first: the ideas work can be picked from.
func (a *App) Candidates(ctx context.Context, limit int) ([]idea.Idea, error) {
	ideas, _, err := a.read().Ideas.List(ctx, store.Filter{ExcludeComplete: true, Limit: limit})
	return ideas, err
}

// ActiveIdeas returns every active idea, by score (descending, then id).
func (a *App) ActiveIdeas(ctx context.Context) ([]idea.Idea, error) {
	return a.read().Ideas.Active(ctx)
}

// Tags is the tags catalog over active ideas, ordered by tag.
func (a *App) Tags(ctx context.Context) ([]store.TagCount, error) {
	return a.read().Ideas.Tags(ctx)
}

// UpdateIdea applies a patch (idea.Apply) to an idea, when ed may change
// it (idea.Editor.CheckEdit).
func (a *App) UpdateIdea(ctx context.Context, ed idea.Editor, id string, p idea.Patch) (idea.Idea, error) {
	now := a.now()
	return a.change(ctx, id, func(i *idea.Idea) error {
		if err := ed.CheckEdit(*i, p.Stage != nil); err != nil {
			return err
		}
		return i.Apply(p, now)
	})
}

// SetTags replaces an idea's tags, when ed may change it.
func (a *App) SetTags(ctx context.Context, ed idea.Editor, id string, tags []string) (idea.Idea, error) {
	return a.UpdateIdea(ctx, ed, id, idea.Patch{Tags: &tags})
}

// Advance moves an idea exactly one stage forward; concurrent advances of
// one idea each move it once (a fault.Conflict past complete).
func (a *App) Advance(ctx context.Context, id string) (idea.Idea, error) {
	now := a.now()
	return a.change(ctx, id, func(i *idea.Idea) error { return i.Advance(now) })
}

// SetStage moves an idea to any stage (the administrator's override).
func (a *App) SetStage(ctx context.Context, id, stage string) (idea.Idea, error) {
	// Checked before the idea is read: a bad stage is a 422 whether or not
	// the idea exists.
	if _, err := idea.ParseStage(stage); err != nil {
		return idea.Idea{}, fault.Validation(fault.Field("stage", "%v", err))
	}
	now := a.now()
	return a.change(ctx, id, func(i *idea.Idea) error { return i.SetStage(stage, now) })
}

// change reads the idea under its lock, applies rule and writes the result,
// in one transaction: concurrent changes of one idea apply one after the
// other, each seeing the previous one's result. An error from rule aborts
// and is returned as is, and nothing is written. rule may run more than
// once (a retried transaction), so it must only modify the idea.
// store.ErrNotFound when absent; store.ErrArchived for an archived idea.
func (a *App) change(ctx context.Context, id string, rule func(*idea.Idea) error) (idea.Idea, error) {
	var out idea.Idea
	err := a.tx(ctx, func(r Repos) error {
		before, err := r.Ideas.Lock(ctx, id)
		if err != nil {
			return err
		}
		if before.Archived {
			return fmt.Errorf("idea %s: %w", id, store.ErrArchived)
		}
		after := before
		after.Tags = append([]string(nil), before.Tags...)
		if err := rule(&after); err != nil {
			return err
		}
		if err := r.Ideas.Update(ctx, before, after); err != nil {
			return err
		}
		out = after
		return nil
	})
	return out, err
}

// TaskOutcome is what reporting a completed task did to its idea.
type TaskOutcome struct {
	// Idea is the idea after the report.
	Idea idea.Idea
	// Moved reports whether the idea moved a stage.
	Moved bool
	// From is the stage before the report.
	From idea.Stage
}

// AdvanceForTask applies a completed task of taskType to its idea
// (idea.AdvanceForTask: at most one stage) and counts the task, once per
// task id: a task id seen before, or an archived idea, changes nothing and
// answers the idea as it is, unmoved. store.ErrNotFound when the idea is
// absent.
func (a *App) AdvanceForTask(ctx context.Context, id, taskID, taskType string) (TaskOutcome, error) {
	var errs []fault.FieldError
	for _, f := range []struct{ name, v string }{{"idea_id", id}, {"task_id", taskID}, {"task_type", taskType}} {
		if f.v == "" {
			errs = append(errs, fault.Field(f.name, "is required"))
		}
	}
	if len(errs) > 0 {
		return TaskOutcome{}, fault.Validation(errs...)
	}
	at := a.now()
	var out TaskOutcome
	err := a.tx(ctx, func(r Repos) error {
		before, err := r.Ideas.Lock(ctx, id)
		if err != nil {
			return err
		}
		out = TaskOutcome{Idea: before, From: before.Stage}
		seen, err := r.Ideas.TaskSeen(ctx, taskID)
		if err != nil {
			return err
		}
		if seen || before.Archived {
			return nil
		}
		after := before
		after.Tags = append([]string(nil), before.Tags...)
		moved := after.AdvanceForTask(taskType, at)
		after.TaskCount++
		after.UpdatedAt = at
		// The task row goes first: a concurrent report of the same task
		// collides with it and changes nothing.
		if err := r.Ideas.RecordTask(ctx, store.TaskEvent{TaskID: taskID, IdeaID: id, TaskType: taskType, From: before.Stage, To: after.Stage, At: at}); err != nil {
			return err
		}
		if err := r.Ideas.Update(ctx, before, after); err != nil {
			return err
		}
		out = TaskOutcome{Idea: after, Moved: moved, From: before.Stage}
		return nil
	})
	if errors.Is(err, store.ErrAlreadyExists) {
		// A concurrent report of the same task won the race.
		i, gerr := a.read().Ideas.Get(ctx, id)
		return TaskOutcome{Idea: i, From: i.Stage}, gerr
	}
	return out, err
}

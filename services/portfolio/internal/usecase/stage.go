package usecase

import (
	"context"
	"errors"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// Advance moves an idea exactly one stage forward; concurrent advances of
// one idea each move it once (a fault.Conflict past complete).
func (a *App) Advance(ctx context.Context, ed idea.Editor, id, to string) (idea.Idea, error) {
	now := a.now()
	return a.change(ctx, id, moved{by: ed.Actor, handle: ed.Handle, why: "advance", at: now}, func(i *idea.Idea) error {
		return i.AdvanceTo(to, now)
	})
}

// SetStage moves an idea to any stage (the administrator's override).
func (a *App) SetStage(ctx context.Context, ed idea.Editor, id, stage string) (idea.Idea, error) {
	// Checked before the idea is read: a bad stage is a 422 whether or not
	// the idea exists.
	if _, err := idea.ParseStage(stage); err != nil {
		return idea.Idea{}, fault.Validation(fault.Field("stage", "%v", err))
	}
	now := a.now()
	return a.change(ctx, id, moved{by: ed.Actor, handle: ed.Handle, why: "operator", at: now}, func(i *idea.Idea) error {
		return i.SetStage(stage, now)
	})
}

// HistoryPage is a page of one of an idea's histories (its stages, its
// revisions), oldest first.
type HistoryPage[T any] struct {
	Items []T
	// Total counts the history's entries; Limit and Offset are the page's
	// bounds, the defaults applied.
	Total, Limit, Offset int
}

// Stages returns a page of an idea's stage history (history).
func (a *App) Stages(ctx context.Context, id string, limit *int32, offset int32) (HistoryPage[store.StageChange], error) {
	return history(ctx, id, limit, offset, a.read().Ideas.Stages)
}

// Revisions returns a page of an idea's revisions: what steered it
// (idea.Steering) from its creation on, each change with who made it.
func (a *App) Revisions(ctx context.Context, id string, limit *int32, offset int32) (HistoryPage[store.Revision], error) {
	return history(ctx, id, limit, offset, a.read().Ideas.Revisions)
}

// history reads a page of an idea's history with read (limit
// DefaultLimit when nil, else 1..MaxLimit, from offset): a history grows
// with every change, and an idea changed back and forth for years must
// not answer all of it at once. store.ErrNotFound (as a fault) when the
// idea does not exist; a bad page is a 422 whether or not it does.
func history[T any](ctx context.Context, id string, limit *int32, offset int32,
	read func(ctx context.Context, ideaID string, limit, offset int) ([]T, int, error)) (HistoryPage[T], error) {
	l, o, err := fault.Page(limit, offset, DefaultLimit, MaxLimit)
	if err != nil {
		return HistoryPage[T]{}, err
	}
	items, total, err := read(ctx, id, l, o)
	if err != nil {
		return HistoryPage[T]{}, IdeaError(err, id)
	}
	return HistoryPage[T]{Items: items, Total: total, Limit: l, Offset: o}, nil
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
		advanced := after.AdvanceForTask(taskType, at)
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
		if advanced {
			if err := r.Ideas.RecordStage(ctx, store.StageChange{ID: a.cfg.NewID(), IdeaID: id, From: before.Stage, To: after.Stage,
				At: at, Actor: "task:" + taskID, Reason: "task"}); err != nil {
				return err
			}
		}
		out = TaskOutcome{Idea: after, Moved: advanced, From: before.Stage}
		return nil
	})
	if errors.Is(err, store.ErrAlreadyExists) {
		// A concurrent report of the same task won the race.
		i, gerr := a.read().Ideas.Get(ctx, id)
		return TaskOutcome{Idea: i, From: i.Stage}, IdeaError(gerr, id)
	}
	return out, IdeaError(err, id)
}

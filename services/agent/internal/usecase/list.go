package usecase

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Page sizes of the task lists.
const (
	DefaultLimit = 50
	MaxLimit     = 500
)

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// Page is one page of a list.
type Page struct {
	Tasks  []store.Task
	Total  int
	Limit  int
	Offset int
}

// ListQuery filters and pages ListTasks.
type ListQuery struct {
	// Status, Type and IdeaID filter when not empty.
	Status string
	Type   string
	IdeaID string
	// Limit is DefaultLimit when nil.
	Limit  *int
	Offset int
}

func pageArgs(limit *int, offset int) (int, error) {
	l, _, err := fault.Page(limit, offset, DefaultLimit, MaxLimit)
	return l, err
}

// List returns a page of tasks, newest first, and how many match. The
// total comes from the status counters, never from counting tasks.
func (a *App) List(ctx context.Context, q ListQuery) (Page, error) {
	var errs []fault.FieldError
	f := store.Filter{Offset: q.Offset}
	if q.Status != "" {
		s, ok := task.ParseStatus(q.Status)
		if !ok {
			errs = append(errs, fault.Field("status", "must be one of pending, running, completed, failed, timed_out, needs_decision"))
		}
		f.Status = s
	}
	if q.Type != "" {
		t, ok := task.ParseType(q.Type)
		if !ok {
			errs = append(errs, fault.Field("task_type", "is not a task type"))
		}
		f.Type = t
	}
	if q.IdeaID != "" {
		// idea_id is matched exactly, as the task's context gave it.
		if utf8.RuneCountInString(q.IdeaID) > MaxIdeaID {
			errs = append(errs, fault.Field("idea_id", "must be at most %d characters", MaxIdeaID))
		}
		f.IdeaID = q.IdeaID
	}
	limit, err := pageArgs(q.Limit, q.Offset)
	if err != nil {
		fe, _ := fault.As(err)
		errs = append(errs, fe.Fields...)
	}
	if len(errs) > 0 {
		return Page{}, fault.Validation(errs...)
	}
	f.Limit = limit
	r := a.read()
	tasks, err := r.Tasks.List(ctx, f)
	if err != nil {
		return Page{}, wrap("list tasks", err)
	}
	if f.IdeaID != "" {
		// The status counters are not kept per idea.
		total, err := r.Tasks.Count(ctx, f)
		if err != nil {
			return Page{}, wrap("list tasks", err)
		}
		return Page{Tasks: tasks, Total: total, Limit: limit, Offset: q.Offset}, nil
	}
	counts, err := r.Stats.Counts(ctx)
	if err != nil {
		return Page{}, wrap("list tasks", err)
	}
	total := 0
	for _, c := range counts {
		if (f.Status == "" || c.Status == f.Status) && (f.Type == "" || c.Type == f.Type) {
			total += int(c.N)
		}
	}
	return Page{Tasks: tasks, Total: total, Limit: limit, Offset: q.Offset}, nil
}

// Attention returns a page of the tasks that need a human (failed or
// needs_decision), newest first, and how many there are.
func (a *App) Attention(ctx context.Context, limit *int, offset int) (Page, error) {
	l, err := pageArgs(limit, offset)
	if err != nil {
		return Page{}, err
	}
	r := a.read()
	tasks, err := r.Tasks.Attention(ctx, l, offset)
	if err != nil {
		return Page{}, wrap("list attention tasks", err)
	}
	counts, err := r.Stats.Counts(ctx)
	if err != nil {
		return Page{}, wrap("list attention tasks", err)
	}
	total := 0
	for _, c := range counts {
		if c.Status.NeedsAttention() {
			total += int(c.N)
		}
	}
	return Page{Tasks: tasks, Total: total, Limit: l, Offset: offset}, nil
}

// Counts are the tasks by status, every status present.
type Counts struct {
	Total    int
	ByStatus map[task.Status]int
}

// Count counts the tasks from the status counters.
func (a *App) Count(ctx context.Context) (Counts, error) {
	counts, err := a.read().Stats.Counts(ctx)
	if err != nil {
		return Counts{}, wrap("count tasks", err)
	}
	return countsOf(counts), nil
}

func countsOf(counts []store.Count) Counts {
	out := Counts{ByStatus: make(map[task.Status]int, len(task.Statuses))}
	for _, s := range task.Statuses {
		out.ByStatus[s] = 0
	}
	for _, c := range counts {
		out.ByStatus[c.Status] += int(c.N)
		out.Total += int(c.N)
	}
	return out
}

// OpenIdeas reports which of the ideas have an open task (pending, running
// or needs_decision).
func (a *App) OpenIdeas(ctx context.Context, ideaIDs []string) (map[string]bool, error) {
	out, err := a.read().Tasks.OpenIdeas(ctx, ideaIDs)
	return out, wrap("find open tasks", err)
}

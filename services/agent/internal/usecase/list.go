package usecase

import (
	"context"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/platform/cursor"
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
	// Next is the cursor of the following page ("" on the last one, and
	// on the attention list, which pages by offset).
	Next string
}

// taskList names the task list's cursors (platform/cursor).
const taskList = "tasks"

// ListQuery filters and pages ListTasks.
type ListQuery struct {
	// Status, Type and IdeaID filter when not empty.
	Status string
	Type   string
	IdeaID string
	// Limit is DefaultLimit when nil.
	Limit  *int
	Offset int
	// Cursor is a page's Next: the page after it, with the same filters.
	Cursor string
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
	at, ok, cerrs := cursor.DecodeAt(taskList, q.Cursor, q.Offset)
	errs = append(errs, cerrs...)
	offset := q.Offset
	if ok {
		f.Before, offset = &store.Key{CreatedAt: at.At, ID: at.ID}, at.Offset
	}
	if len(errs) > 0 {
		return Page{}, fault.Validation(errs...)
	}
	// One task past the page says whether another follows, whatever the
	// total (tasks created at the head meanwhile add to it, not to what
	// follows a cursor).
	f.Limit = limit + 1
	r := a.read()
	tasks, err := r.Tasks.List(ctx, f)
	if err != nil {
		return Page{}, wrap("list tasks", err)
	}
	// A keyset page's offset is its cursor's: counting the tasks before
	// it would cost what an offset read does.
	page := Page{Limit: limit, Offset: offset}
	page.Tasks, page.Next = cursor.PageAt(taskList, tasks, limit, offset, func(t store.Task) (time.Time, string) {
		return t.CreatedAt, t.ID
	})
	if f.IdeaID != "" {
		// An idea's tasks are counted apart (migration 0016).
		if page.Total, err = r.Stats.IdeaCount(ctx, f.IdeaID, f.Status, f.Type); err != nil {
			return Page{}, wrap("list tasks", err)
		}
		return page, nil
	}
	counts, err := r.Stats.Counts(ctx)
	if err != nil {
		return Page{}, wrap("list tasks", err)
	}
	for _, c := range counts {
		if (f.Status == "" || c.Status == f.Status) && (f.Type == "" || c.Type == f.Type) {
			page.Total += int(c.N)
		}
	}
	return page, nil
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

// IdeaFailures reports, for those of the ideas whose loop tasks failed
// since their last success, how many in a row and when the last did: the
// loop backs them off.
func (a *App) IdeaFailures(ctx context.Context, ideaIDs []string) (map[string]store.IdeaFailures, error) {
	out, err := a.read().Stats.IdeaFailures(ctx, ideaIDs)
	return out, wrap("read the ideas' failures", err)
}

// PendingLoopTasks returns, for those of the ideas that have one, their
// pending loop task: one no pass runs, which the loop adopts (Adopt).
func (a *App) PendingLoopTasks(ctx context.Context, ideaIDs []string) (map[string]string, error) {
	out, err := a.read().Tasks.PendingLoopTasks(ctx, ideaIDs, a.now())
	return out, wrap("read the ideas' pending loop tasks", err)
}

// The earlier stages a loop task's context carries: the newest
// MaxStageOutputs, each output's last StageOutputBytes and artifact's
// last StageArtifactBytes (a URL fits whole), so the context stays well
// under MaxContext beside the idea's description.
const (
	MaxStageOutputs    = 6
	StageOutputBytes   = 5 << 10
	StageArtifactBytes = 2 << 10
)

// StageOutputs returns what the idea's completed loop tasks produced,
// oldest first (MaxStageOutputs, StageOutputBytes, StageArtifactBytes).
func (a *App) StageOutputs(ctx context.Context, ideaID string) ([]store.StageOutput, error) {
	out, err := a.read().Tasks.StageOutputs(ctx, ideaID, MaxStageOutputs, StageOutputBytes, StageArtifactBytes)
	return out, wrap("read the stage outputs of idea "+ideaID, err)
}

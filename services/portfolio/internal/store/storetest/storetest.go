// Package storetest is the portfolio repositories' conformance suite: every
// engine's implementation must pass it. The repositories open no
// transactions, so the suite writes inside db.Tx as the use cases do; the
// use cases' own composite and concurrent behaviour (concurrent advances,
// a task counted once per id, split and merge) is tested in the usecase
// package, on every engine too. The stints of the stage history (stage
// times) are their own topic, in stints.go.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// T0 is the time the suite's fixtures are stamped with.
var T0 = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

// NewIdea builds a valid idea with the given score inputs, created at T0.
func NewIdea(t testing.TB, id string, potential, cost float64, tags ...string) idea.Idea {
	t.Helper()
	i, err := idea.New(idea.Draft{ID: id, Name: "Idea " + id, Description: "about " + id, PotentialValue: potential, EstimatedCost: cost, Tags: tags}, id, T0)
	require.NoError(t, err)
	return i
}

// Harness is what the suite runs against: an empty, migrated database and
// the constructors of the repositories over a querier.
type Harness struct {
	DB        *database.DB
	Ideas     func(q database.Querier) store.Ideas
	Questions func(q database.Querier) store.Questions
	Snapshots func(q database.Querier) store.Snapshots
}

// repos are the repositories over one querier.
type repos struct {
	ideas     store.Ideas
	questions store.Questions
	snapshots store.Snapshots
}

func (h Harness) over(q database.Querier) repos {
	return repos{ideas: h.Ideas(q), questions: h.Questions(q), snapshots: h.Snapshots(q)}
}

// read returns the repositories over the pool.
func (h Harness) read() repos { return h.over(h.DB) }

// write runs fn in one transaction, as a use case does.
func (h Harness) write(fn func(r repos) error) error {
	return h.DB.Tx(context.Background(), func(q database.Querier) error { return fn(h.over(q)) })
}

// create stores ideas, one transaction each.
func (h Harness) create(t *testing.T, ideas ...idea.Idea) {
	t.Helper()
	for _, i := range ideas {
		require.NoError(t, h.write(func(r repos) error { return r.ideas.Create(context.Background(), i) }))
	}
}

// change locks an idea, applies rule and writes the result in one
// transaction, the way the use cases change an idea.
func (h Harness) change(id string, rule func(*idea.Idea) error) (idea.Idea, error) {
	ctx := context.Background()
	var out idea.Idea
	err := h.write(func(r repos) error {
		before, err := r.ideas.Lock(ctx, id)
		if err != nil {
			return err
		}
		after := before
		after.Tags = append([]string(nil), before.Tags...)
		if err := rule(&after); err != nil {
			return err
		}
		if err := r.ideas.Update(ctx, before, after); err != nil {
			return err
		}
		out = after
		return nil
	})
	return out, err
}

// Run runs the suite; newHarness returns a harness over an empty database
// for one subtest.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()

	t.Run("create, get, duplicate", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		i := NewIdea(t, "a", 100, 10, "x", "y")
		i.CostVector = &idea.CostVector{Compute: 1, Infrastructure: 2, HumanAttention: 3}
		h.create(t, i)
		got, err := h.read().ideas.Get(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, i, got, "every field round-trips")
		err = h.write(func(r repos) error { return r.ideas.Create(ctx, NewIdea(t, "a", 1, 1)) })
		require.ErrorIs(t, err, store.ErrAlreadyExists)
		_, err = h.read().ideas.Get(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
		err = h.write(func(r repos) error { _, err := r.ideas.Lock(ctx, "missing"); return err })
		require.ErrorIs(t, err, store.ErrNotFound)
		totals, err := h.read().ideas.Totals(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Totals{Ideas: 1, PotentialValue: 100}, totals, "the duplicate was rolled back")
	})

	t.Run("ranking, filters, pagination and totals", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		// Scores: 100*0.5/11 = 4.545, 50*0.5/1.5 = 16.67, 10*0.5/1 = 5, 10*0.5/1 = 5 (tie: by id).
		h.create(t, NewIdea(t, "low", 100, 10, "ml"), NewIdea(t, "top", 50, 0.5, "ml", "infra"), NewIdea(t, "tie-b", 10, 0), NewIdea(t, "tie-a", 10, 0, "infra"))
		ideas := h.read().ideas
		page, total, listed, err := ideas.List(ctx, store.Filter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 4, total)
		require.Equal(t, []string{"top", "tie-a", "tie-b", "low"}, IDs(page))
		require.Equal(t, []string{"infra", "ml"}, page[0].Tags)
		require.Equal(t, []string{"infra"}, page[1].Tags)
		require.Empty(t, page[2].Tags, "an idea without tags has none")
		require.Equal(t, []string{"ml"}, page[3].Tags)
		require.Equal(t, store.Totals{Ideas: 4, PotentialValue: 170}, listed, "the totals read with the page")

		page, total, _, err = ideas.List(ctx, store.Filter{Limit: 2, Offset: 1})
		require.NoError(t, err)
		require.Equal(t, 4, total)
		require.Equal(t, []string{"tie-a", "tie-b"}, IDs(page))
		require.Equal(t, []string{"infra"}, page[0].Tags, "a page's tags are its own ideas'")

		page, total, listed, err = ideas.List(ctx, store.Filter{Limit: 10, Tags: []string{"ml", "infra"}})
		require.NoError(t, err)
		require.Equal(t, 1, total)
		require.Equal(t, []string{"top"}, IDs(page))
		require.Equal(t, []string{"infra", "ml"}, page[0].Tags, "every tag of a filtered idea, not only the filter's")
		require.Equal(t, 4, listed.Ideas, "the totals are the portfolio's, whatever the filter")

		_, err = h.change("low", func(i *idea.Idea) error { return i.SetStage("complete", T0) })
		require.NoError(t, err)
		page, total, _, err = ideas.List(ctx, store.Filter{Limit: 10, OnlyUnvalidated: true})
		require.NoError(t, err)
		require.Equal(t, 3, total)
		require.Equal(t, []string{"top", "tie-a", "tie-b"}, IDs(page))
		page, total, _, err = ideas.List(ctx, store.Filter{Limit: 10, ExcludeComplete: true})
		require.NoError(t, err)
		require.Equal(t, 3, total)
		require.Equal(t, []string{"top", "tie-a", "tie-b"}, IDs(page))

		totals, err := ideas.Totals(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Totals{Ideas: 4, Validated: 1, PotentialValue: 170, ActualValue: 0}, totals)
		active, err := ideas.Active(ctx)
		require.NoError(t, err)
		require.Equal(t, []string{"top", "tie-a", "tie-b", "low"}, IDs(active), "active ideas by score, then id")
	})

	t.Run("review: pending ideas rank after accepted ones and are not candidates", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		// A contributor's idea claiming the best score is pending: it ranks
		// after both accepted ones, and the loop's filter leaves it out.
		steer, err := idea.New(idea.Draft{ID: "steer", Name: "Steer", PotentialValue: 1e9, EstimatedCost: 0, CreatedBy: "mallory"}, "steer", T0)
		require.NoError(t, err)
		require.Equal(t, idea.Pending, steer.Review)
		h.create(t, NewIdea(t, "low", 10, 5), steer, NewIdea(t, "high", 50, 1))
		ideas := h.read().ideas
		page, total, _, err := ideas.List(ctx, store.Filter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 3, total)
		require.Equal(t, []string{"high", "low", "steer"}, IDs(page))
		require.Equal(t, []idea.Review{idea.Accepted, idea.Accepted, idea.Pending}, []idea.Review{page[0].Review, page[1].Review, page[2].Review})
		page, total, _, err = ideas.List(ctx, store.Filter{Limit: 10, ExcludeComplete: true, OnlyAccepted: true})
		require.NoError(t, err)
		require.Equal(t, 2, total)
		require.Equal(t, []string{"high", "low"}, IDs(page))

		accepted, err := h.change("steer", func(i *idea.Idea) error { return i.Apply(idea.Patch{Review: ptr("accepted")}, T0) })
		require.NoError(t, err)
		require.Equal(t, idea.Accepted, accepted.Review)
		got, err := ideas.Get(ctx, "steer")
		require.NoError(t, err)
		require.Equal(t, idea.Accepted, got.Review, "the review is stored")
		page, _, _, err = ideas.List(ctx, store.Filter{Limit: 10, OnlyAccepted: true})
		require.NoError(t, err)
		require.Equal(t, []string{"steer", "high", "low"}, IDs(page), "accepted, it ranks by its score")
	})

	t.Run("update keeps score, tags and totals in step", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.create(t, NewIdea(t, "a", 10, 0, "old"), NewIdea(t, "b", 20, 0))
		updated, err := h.change("a", func(i *idea.Idea) error {
			return i.Apply(idea.Patch{PotentialValue: ptr(100.0), ActualValue: ptr(2.5), Tags: ptr([]string{"new"})}, T0.Add(time.Minute))
		})
		require.NoError(t, err)
		require.Equal(t, []string{"new"}, updated.Tags)
		got, err := h.read().ideas.Get(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, updated, got)
		page, _, _, err := h.read().ideas.List(ctx, store.Filter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b"}, IDs(page), "the stored score moved with the value")
		totals, err := h.read().ideas.Totals(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Totals{Ideas: 2, PotentialValue: 120, ActualValue: 2.5}, totals)
		tags, err := h.read().ideas.Tags(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.TagCount{{Tag: "new", Ideas: 1}}, tags)

		// A transaction that fails after the write leaves no trace: not the
		// idea, not its tags, not the totals.
		boom := errors.New("refused")
		err = h.write(func(r repos) error {
			before, err := r.ideas.Lock(ctx, "a")
			if err != nil {
				return err
			}
			after := before
			after.Name, after.PotentialValue, after.Tags = "changed", 1, []string{"other"}
			if err := r.ideas.Update(ctx, before, after); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		unchanged, err := h.read().ideas.Get(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, got, unchanged, "a refused change writes nothing")
		totals, err = h.read().ideas.Totals(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Totals{Ideas: 2, PotentialValue: 120, ActualValue: 2.5}, totals)
		_, err = h.change("missing", func(*idea.Idea) error { return nil })
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("task events are recorded once per task id", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.create(t, NewIdea(t, "a", 1, 1))
		seen, err := h.read().ideas.TaskSeen(ctx, "task-1")
		require.NoError(t, err)
		require.False(t, seen)
		ev := store.TaskEvent{TaskID: "task-1", IdeaID: "a", TaskType: "spec", From: idea.None, To: idea.Specced, At: T0}
		require.NoError(t, h.write(func(r repos) error { return r.ideas.RecordTask(ctx, ev) }))
		seen, err = h.read().ideas.TaskSeen(ctx, "task-1")
		require.NoError(t, err)
		require.True(t, seen)
		err = h.write(func(r repos) error { return r.ideas.RecordTask(ctx, ev) })
		require.ErrorIs(t, err, store.ErrAlreadyExists, "a task id is recorded once")
	})

	t.Run("stage history: an idea's changes in time order, its own only", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.create(t, NewIdea(t, "a", 1, 1), NewIdea(t, "b", 1, 1))
		changes := []store.StageChange{
			{ID: "c2", IdeaID: "a", From: idea.None, To: idea.Specced, At: T0.Add(time.Minute), Actor: "admin", Reason: "advance"},
			{ID: "c1", IdeaID: "a", To: idea.None, At: T0, Actor: "ada-id", ActorHandle: "ada", Reason: "created"},
			{ID: "c3", IdeaID: "a", From: idea.Specced, To: idea.Implementing, At: T0.Add(time.Minute), Actor: "task:t1", Reason: "task"},
			{ID: "x", IdeaID: "b", To: idea.None, At: T0, Actor: "bob", Reason: "created"},
		}
		for _, c := range changes {
			require.NoError(t, h.write(func(r repos) error { return r.ideas.RecordStage(ctx, c) }))
		}
		got, total, err := h.read().ideas.Stages(ctx, "a", 10, 0)
		require.NoError(t, err)
		require.Equal(t, []store.StageChange{changes[1], changes[0], changes[2]}, got,
			"by time, then id; a creation's From reads back empty; the handle of a contributor's change with it, none for the others")
		require.Equal(t, 3, total)
		got, total, err = h.read().ideas.Stages(ctx, "a", 1, 1)
		require.NoError(t, err)
		require.Equal(t, []store.StageChange{changes[0]}, got, "a page")
		require.Equal(t, 3, total, "the total counts every page")
		got, total, err = h.read().ideas.Stages(ctx, "a", 2, 2)
		require.NoError(t, err)
		require.Equal(t, []store.StageChange{changes[2]}, got, "the last page")
		require.Equal(t, 3, total)
		past, total, err := h.read().ideas.Stages(ctx, "a", 10, 3)
		require.NoError(t, err)
		require.NotNil(t, past)
		require.Empty(t, past, "past the end: empty, not nil")
		require.Equal(t, 3, total, "past the end still counts")
		_, _, err = h.read().ideas.Stages(ctx, "missing", 10, 0)
		require.ErrorIs(t, err, store.ErrNotFound)
		h.create(t, NewIdea(t, "bare", 1, 1))
		none, total, err := h.read().ideas.Stages(ctx, "bare", 10, 0)
		require.NoError(t, err, "an idea without a recorded change (the harness records none)")
		require.NotNil(t, none)
		require.Empty(t, none)
		require.Zero(t, total)
	})

	t.Run("questions", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		h.create(t, NewIdea(t, "a", 1, 1))
		for k := range 3 {
			require.NoError(t, h.write(func(r repos) error {
				return r.questions.Add(ctx, store.Question{ID: fmt.Sprintf("q%d", k), IdeaID: "a", Text: fmt.Sprintf("why %d?", k), Status: "open", CreatedAt: T0.Add(time.Duration(k) * time.Second)})
			}))
		}
		qs, err := h.read().questions.List(ctx, "a")
		require.NoError(t, err)
		require.Len(t, qs, 3)
		require.Equal(t, store.Question{ID: "q0", IdeaID: "a", Text: "why 0?", Status: "open", CreatedAt: T0}, qs[0])
		open, err := h.read().questions.Open(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string][]string{"a": {"why 0?", "why 1?", "why 2?"}}, open)
		got, err := h.read().ideas.Get(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, 3, got.OpenQuestions)
		err = h.write(func(r repos) error {
			return r.questions.Add(ctx, store.Question{ID: "qx", IdeaID: "missing", Text: "?", Status: "open", CreatedAt: T0})
		})
		require.ErrorIs(t, err, store.ErrNotFound)
		_, err = h.read().questions.List(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("children and archived ideas", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		c1, c2 := NewIdea(t, "c1", 5, 1), NewIdea(t, "c2", 5, 1)
		c1.ParentID, c2.ParentID = "parent", "parent"
		h.create(t, NewIdea(t, "parent", 10, 1, "p"), c1, c2)
		got, err := h.read().ideas.Get(ctx, "c1")
		require.NoError(t, err)
		require.Equal(t, "parent", got.ParentID)
		children, err := h.read().ideas.ChildCounts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"parent": 2}, children)
		require.NoError(t, h.write(func(r repos) error {
			return r.questions.Add(ctx, store.Question{ID: "q", IdeaID: "parent", Text: "?", Status: "open", CreatedAt: T0})
		}))

		_, err = h.change("parent", func(i *idea.Idea) error { i.Archived, i.MergedIntoID = true, "c1"; return nil })
		require.NoError(t, err)
		folded, err := h.read().ideas.Get(ctx, "parent")
		require.NoError(t, err)
		require.True(t, folded.Archived, "an archived idea can still be read")
		require.Equal(t, "c1", folded.MergedIntoID)
		page, total, _, err := h.read().ideas.List(ctx, store.Filter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 2, total, "archived ideas leave the list and the totals")
		require.ElementsMatch(t, []string{"c1", "c2"}, IDs(page))
		totals, err := h.read().ideas.Totals(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Totals{Ideas: 2, PotentialValue: 10}, totals)
		active, err := h.read().ideas.Active(ctx)
		require.NoError(t, err)
		require.Len(t, active, 2)
		tags, err := h.read().ideas.Tags(ctx)
		require.NoError(t, err)
		require.Empty(t, tags, "the catalog counts active ideas only")
		open, err := h.read().questions.Open(ctx)
		require.NoError(t, err)
		require.Empty(t, open, "open questions of archived ideas are not listed")
	})

	t.Run("the ideas by stage follow every write", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		stages := func() map[idea.Stage]int {
			t.Helper()
			got, err := h.read().ideas.StageTotals(ctx)
			require.NoError(t, err)
			return got
		}
		require.Empty(t, stages())
		h.create(t, NewIdea(t, "a", 1, 1), NewIdea(t, "b", 1, 1), NewIdea(t, "c", 1, 1))
		require.Equal(t, map[idea.Stage]int{idea.None: 3}, stages())

		move := func(id string, to idea.Stage) {
			t.Helper()
			_, err := h.change(id, func(i *idea.Idea) error { i.Stage = to; return nil })
			require.NoError(t, err)
		}
		move("a", idea.Specced)
		move("b", idea.Testing)
		require.Equal(t, map[idea.Stage]int{idea.None: 1, idea.Specced: 1, idea.Testing: 1}, stages())
		_, err := h.change("b", func(i *idea.Idea) error { i.Name = "renamed"; return nil })
		require.NoError(t, err)
		require.Equal(t, map[idea.Stage]int{idea.None: 1, idea.Specced: 1, idea.Testing: 1}, stages(), "a change within a stage")

		_, err = h.change("b", func(i *idea.Idea) error { i.Archived, i.MergedIntoID = true, "a"; return nil })
		require.NoError(t, err)
		require.Equal(t, map[idea.Stage]int{idea.None: 1, idea.Specced: 1}, stages(), "an archived idea leaves its stage")

		boom := errors.New("refused")
		err = h.write(func(r repos) error {
			before, err := r.ideas.Lock(ctx, "c")
			if err != nil {
				return err
			}
			after := before
			after.Stage = idea.Complete
			if err := r.ideas.Update(ctx, before, after); err != nil {
				return err
			}
			return boom
		})
		require.ErrorIs(t, err, boom)
		require.Equal(t, map[idea.Stage]int{idea.None: 1, idea.Specced: 1}, stages(), "a refused change counts nothing")
	})

	t.Run("a page of each stage's active ideas, by score", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		none, err := h.read().ideas.StagePages(ctx, 10, 0)
		require.NoError(t, err)
		require.Empty(t, none)
		h.create(t, NewIdea(t, "a", 1, 1), NewIdea(t, "b", 9, 1), NewIdea(t, "c", 5, 1), NewIdea(t, "d", 5, 1),
			NewIdea(t, "e", 7, 1), NewIdea(t, "f", 3, 1))
		for id, to := range map[string]idea.Stage{"e": idea.Testing, "f": idea.Testing} {
			_, err := h.change(id, func(i *idea.Idea) error { i.Stage = to; return nil })
			require.NoError(t, err)
		}
		_, err = h.change("b", func(i *idea.Idea) error { i.Archived, i.MergedIntoID = true, "a"; return nil })
		require.NoError(t, err)
		got, err := h.read().ideas.StagePages(ctx, 2, 0)
		require.NoError(t, err)
		require.Equal(t, map[idea.Stage][]string{idea.None: {"c", "d"}, idea.Testing: {"e", "f"}}, got,
			"by score, ties by id; the archived idea left out")
		got, err = h.read().ideas.StagePages(ctx, 2, 2)
		require.NoError(t, err)
		require.Equal(t, map[idea.Stage][]string{idea.None: {"a"}}, got, "the next page of each stage")
	})

	t.Run("snapshots and counts", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		for k, at := range []time.Time{T0.Add(-48 * time.Hour), T0.Add(-time.Hour), T0} {
			require.NoError(t, h.write(func(r repos) error {
				return r.snapshots.Save(ctx, store.Snapshot{ID: fmt.Sprint(k), TakenAt: at, TotalIdeas: k, Healthy: k})
			}))
		}
		got, err := h.read().snapshots.Since(ctx, T0.Add(-24*time.Hour))
		require.NoError(t, err)
		require.Equal(t, []store.Snapshot{{ID: "1", TakenAt: T0.Add(-time.Hour), TotalIdeas: 1, Healthy: 1}, {ID: "2", TakenAt: T0, TotalIdeas: 2, Healthy: 2}}, got)
		h.create(t, NewIdea(t, "a", 1, 1, "t1", "t2"))
		counts, err := h.read().ideas.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Counts{Ideas: 1, IdeaTags: 2, Snapshots: 3}, counts)

		var n int64
		require.NoError(t, h.write(func(r repos) error {
			var err error
			n, err = r.snapshots.Prune(ctx, T0, 1)
			return err
		}))
		require.Equal(t, int64(1), n, "a batch, oldest first")
		got, err = h.read().snapshots.Since(ctx, T0.Add(-72*time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{"1", "2"}, []string{got[0].ID, got[1].ID})
		require.NoError(t, h.write(func(r repos) error {
			var err error
			n, err = r.snapshots.Prune(ctx, T0, 10)
			return err
		}))
		require.Equal(t, int64(1), n, "what was taken before the cut, and no later one")
		got, err = h.read().snapshots.Since(ctx, T0.Add(-72*time.Hour))
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, "2", got[0].ID)

		// The counts are kept as rows come and go: pruned snapshots, a
		// question, tags rewritten, another idea.
		require.NoError(t, h.write(func(r repos) error {
			return r.questions.Add(ctx, store.Question{ID: "q1", IdeaID: "a", Text: "why?", Status: "open", CreatedAt: T0})
		}))
		_, err = h.change("a", func(i *idea.Idea) error { i.Tags = []string{"t3"}; return nil })
		require.NoError(t, err)
		h.create(t, NewIdea(t, "b", 1, 1))
		counts, err = h.read().ideas.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Counts{Ideas: 2, Questions: 1, IdeaTags: 1, Snapshots: 1}, counts)
	})

	runStints(t, newHarness)
	runRevisions(t, newHarness)
}

// IDs returns the ideas' ids, in order.
func IDs(ideas []idea.Idea) []string {
	out := make([]string, len(ideas))
	for k, i := range ideas {
		out[k] = i.ID
	}
	return out
}

func ptr[T any](v T) *T { return &v }

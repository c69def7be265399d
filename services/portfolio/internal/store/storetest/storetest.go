// Package storetest is the portfolio store conformance suite: every engine's
// implementation must pass it.
package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

var t0 = time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)

// newIdea builds a valid idea with the given score inputs.
func newIdea(t *testing.T, id string, potential, cost float64, tags ...string) idea.Idea {
	t.Helper()
	i, err := idea.New(idea.Draft{ID: id, Name: "Idea " + id, Description: "about " + id, PotentialValue: potential, EstimatedCost: cost, Tags: tags}, id, t0)
	require.NoError(t, err)
	return i
}

// Run runs the suite; newStore returns an empty store for one subtest.
func Run(t *testing.T, newStore func(t *testing.T) store.Store) {
	ctx := context.Background()

	t.Run("create, get, duplicate", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		i := newIdea(t, "a", 100, 10, "x", "y")
		i.CostVector = &idea.CostVector{Compute: 1, Infrastructure: 2, HumanAttention: 3}
		require.NoError(t, s.CreateIdea(ctx, i))
		got, err := s.GetIdea(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, i, got, "every field round-trips")
		require.ErrorIs(t, s.CreateIdea(ctx, newIdea(t, "a", 1, 1)), store.ErrAlreadyExists)
		_, err = s.GetIdea(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("ranking, filters, pagination and totals", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		// Scores: 100*0.5/11 = 4.545, 50*0.5/1.5 = 16.67, 10*0.5/1 = 5, 10*0.5/1 = 5 (tie: by id).
		for _, i := range []idea.Idea{newIdea(t, "low", 100, 10, "ml"), newIdea(t, "top", 50, 0.5, "ml", "infra"), newIdea(t, "tie-b", 10, 0), newIdea(t, "tie-a", 10, 0, "infra")} {
			require.NoError(t, s.CreateIdea(ctx, i))
		}
		page, total, err := s.ListIdeas(ctx, store.Filter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 4, total)
		require.Equal(t, []string{"top", "tie-a", "tie-b", "low"}, ids(page))
		require.Equal(t, []string{"infra", "ml"}, page[0].Tags)

		page, total, err = s.ListIdeas(ctx, store.Filter{Limit: 2, Offset: 1})
		require.NoError(t, err)
		require.Equal(t, 4, total)
		require.Equal(t, []string{"tie-a", "tie-b"}, ids(page))

		page, total, err = s.ListIdeas(ctx, store.Filter{Limit: 10, Tags: []string{"ml", "infra"}})
		require.NoError(t, err)
		require.Equal(t, 1, total)
		require.Equal(t, []string{"top"}, ids(page))

		_, err = s.UpdateIdea(ctx, "low", func(i *idea.Idea) error { return i.SetStage("complete", t0) })
		require.NoError(t, err)
		page, total, err = s.ListIdeas(ctx, store.Filter{Limit: 10, OnlyUnvalidated: true})
		require.NoError(t, err)
		require.Equal(t, 3, total)
		require.Equal(t, []string{"top", "tie-a", "tie-b"}, ids(page))
		_, total, err = s.ListIdeas(ctx, store.Filter{Limit: 10, ExcludeComplete: true})
		require.NoError(t, err)
		require.Equal(t, 3, total)

		totals, err := s.Totals(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Totals{Ideas: 4, Validated: 1, PotentialValue: 170, ActualValue: 0}, totals)
	})

	t.Run("update keeps score, tags and totals in step", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		require.NoError(t, s.CreateIdea(ctx, newIdea(t, "a", 10, 0, "old")))
		require.NoError(t, s.CreateIdea(ctx, newIdea(t, "b", 20, 0)))
		updated, err := s.UpdateIdea(ctx, "a", func(i *idea.Idea) error {
			return i.Apply(idea.Patch{PotentialValue: ptr(100.0), ActualValue: ptr(2.5), Tags: ptr([]string{"new"})}, t0.Add(time.Minute))
		})
		require.NoError(t, err)
		require.Equal(t, []string{"new"}, updated.Tags)
		got, err := s.GetIdea(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, updated, got)
		page, _, err := s.ListIdeas(ctx, store.Filter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b"}, ids(page), "the stored score moved with the value")
		totals, err := s.Totals(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Totals{Ideas: 2, PotentialValue: 120, ActualValue: 2.5}, totals)
		tags, err := s.Tags(ctx)
		require.NoError(t, err)
		require.Equal(t, []store.TagCount{{Tag: "new", Ideas: 1}}, tags)

		boom := fmt.Errorf("refused")
		_, err = s.UpdateIdea(ctx, "a", func(i *idea.Idea) error { i.Name = "changed"; return boom })
		require.ErrorIs(t, err, boom)
		unchanged, err := s.GetIdea(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, got, unchanged, "a refused change writes nothing")
		_, err = s.UpdateIdea(ctx, "missing", func(*idea.Idea) error { return nil })
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("concurrent advances move one stage each", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		require.NoError(t, s.CreateIdea(ctx, newIdea(t, "a", 1, 1)))
		const racers = 8 // more than the five steps to complete
		var wg sync.WaitGroup
		errs := make([]error, racers)
		for k := range racers {
			wg.Go(func() {
				_, errs[k] = s.UpdateIdea(ctx, "a", func(i *idea.Idea) error { return i.Advance(t0) })
			})
		}
		wg.Wait()
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
			}
		}
		require.Equal(t, 5, ok, "exactly five advances succeed: none → complete")
		got, err := s.GetIdea(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, idea.Complete, got.Stage)
		totals, err := s.Totals(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, totals.Validated)
	})

	t.Run("a task advances its idea once", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		require.NoError(t, s.CreateIdea(ctx, newIdea(t, "a", 1, 1)))
		advance := func(i *idea.Idea) bool { return i.AdvanceForTask("spec", t0) }
		var wg sync.WaitGroup
		moves := make([]bool, 10)
		for k := range moves {
			wg.Go(func() {
				_, moved, _, err := s.AdvanceForTask(ctx, "a", "task-1", "spec", t0, advance)
				require.NoError(t, err)
				moves[k] = moved
			})
		}
		wg.Wait()
		n := 0
		for _, m := range moves {
			if m {
				n++
			}
		}
		require.Equal(t, 1, n, "one of ten reports of the same task moved the idea")
		got, err := s.GetIdea(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, idea.Specced, got.Stage)
		require.Equal(t, 1, got.TaskCount)

		_, moved, from, err := s.AdvanceForTask(ctx, "a", "task-2", "impl", t0, func(i *idea.Idea) bool { return i.AdvanceForTask("impl", t0) })
		require.NoError(t, err)
		require.True(t, moved)
		require.Equal(t, idea.Specced, from)
		_, _, _, err = s.AdvanceForTask(ctx, "missing", "task-3", "spec", t0, advance)
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("questions", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		require.NoError(t, s.CreateIdea(ctx, newIdea(t, "a", 1, 1)))
		for k := range 3 {
			require.NoError(t, s.AddQuestion(ctx, store.Question{ID: fmt.Sprintf("q%d", k), IdeaID: "a", Text: fmt.Sprintf("why %d?", k), Status: "open", CreatedAt: t0.Add(time.Duration(k) * time.Second)}))
		}
		qs, err := s.ListQuestions(ctx, "a")
		require.NoError(t, err)
		require.Len(t, qs, 3)
		require.Equal(t, store.Question{ID: "q0", IdeaID: "a", Text: "why 0?", Status: "open", CreatedAt: t0}, qs[0])
		open, err := s.OpenQuestions(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string][]string{"a": {"why 0?", "why 1?", "why 2?"}}, open)
		got, err := s.GetIdea(ctx, "a")
		require.NoError(t, err)
		require.Equal(t, 3, got.OpenQuestions)
		require.ErrorIs(t, s.AddQuestion(ctx, store.Question{ID: "qx", IdeaID: "missing", Text: "?", Status: "open", CreatedAt: t0}), store.ErrNotFound)
		_, err = s.ListQuestions(ctx, "missing")
		require.ErrorIs(t, err, store.ErrNotFound)
	})

	t.Run("split and merge", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		require.NoError(t, s.CreateIdea(ctx, newIdea(t, "parent", 10, 1, "p")))
		require.NoError(t, s.Split(ctx, "parent", []idea.Idea{newIdea(t, "c1", 5, 1), newIdea(t, "c2", 5, 1)}))
		c1, err := s.GetIdea(ctx, "c1")
		require.NoError(t, err)
		require.Equal(t, "parent", c1.ParentID)
		children, err := s.ChildCounts(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"parent": 2}, children)
		require.ErrorIs(t, s.Split(ctx, "parent", []idea.Idea{newIdea(t, "c1", 1, 1)}), store.ErrAlreadyExists)
		_, err = s.GetIdea(ctx, "c1")
		require.NoError(t, err)

		kept, err := s.Merge(ctx, "c1", "parent", t0.Add(time.Hour))
		require.NoError(t, err)
		require.Equal(t, []string{"p"}, kept.Tags, "the kept idea gains the folded one's tags")
		folded, err := s.GetIdea(ctx, "parent")
		require.NoError(t, err)
		require.True(t, folded.Archived)
		require.Equal(t, "c1", folded.MergedIntoID)
		_, err = s.UpdateIdea(ctx, "parent", func(*idea.Idea) error { return nil })
		require.ErrorIs(t, err, store.ErrArchived)
		_, err = s.Merge(ctx, "c2", "parent", t0)
		require.ErrorIs(t, err, store.ErrArchived)
		page, total, err := s.ListIdeas(ctx, store.Filter{Limit: 10})
		require.NoError(t, err)
		require.Equal(t, 2, total, "archived ideas leave the list and the totals")
		require.ElementsMatch(t, []string{"c1", "c2"}, ids(page))
		active, err := s.ActiveIdeas(ctx)
		require.NoError(t, err)
		require.Len(t, active, 2)
	})

	t.Run("snapshots and counts", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		for k, at := range []time.Time{t0.Add(-48 * time.Hour), t0.Add(-time.Hour), t0} {
			require.NoError(t, s.SaveSnapshot(ctx, store.Snapshot{ID: fmt.Sprint(k), TakenAt: at, TotalIdeas: k, Healthy: k}))
		}
		got, err := s.Snapshots(ctx, t0.Add(-24*time.Hour))
		require.NoError(t, err)
		require.Equal(t, []store.Snapshot{{ID: "1", TakenAt: t0.Add(-time.Hour), TotalIdeas: 1, Healthy: 1}, {ID: "2", TakenAt: t0, TotalIdeas: 2, Healthy: 2}}, got)
		require.NoError(t, s.CreateIdea(ctx, newIdea(t, "a", 1, 1, "t1", "t2")))
		counts, err := s.Counts(ctx)
		require.NoError(t, err)
		require.Equal(t, store.Counts{Ideas: 1, IdeaTags: 2, Snapshots: 3}, counts)
	})
}

func ids(ideas []idea.Idea) []string {
	out := make([]string, len(ideas))
	for k, i := range ideas {
		out[k] = i.ID
	}
	return out
}

func ptr[T any](v T) *T { return &v }

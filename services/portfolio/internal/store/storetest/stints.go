package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// runStints is the stints topic: the time an idea stayed in a stage,
// worked out when the change out of it is recorded, and read over a window
// of exits.
func runStints(t *testing.T, newHarness func(t *testing.T) Harness) {
	ctx := context.Background()
	record := func(t *testing.T, h Harness, changes ...store.StageChange) {
		t.Helper()
		for _, c := range changes {
			require.NoError(t, h.write(func(r repos) error { return r.ideas.RecordStage(ctx, c) }))
		}
	}
	stints := func(t *testing.T, h Harness, since time.Time) map[idea.Stage][]time.Duration {
		t.Helper()
		got, err := h.read().ideas.Stints(ctx, since)
		require.NoError(t, err)
		require.NotNil(t, got)
		return got
	}
	at := T0.Add

	t.Run("stints: a change's stint is worked out on insert from the idea's previous change", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		record(t, h,
			store.StageChange{ID: "a0", IdeaID: "a", To: idea.None, At: at(0), Actor: "ada", Reason: "created"},
			store.StageChange{ID: "b0", IdeaID: "b", To: idea.None, At: at(0), Actor: "bob", Reason: "created"},
			store.StageChange{ID: "a1", IdeaID: "a", From: idea.None, To: idea.Specced, At: at(10 * time.Minute), Actor: "admin", Reason: "advance"},
			store.StageChange{ID: "b1", IdeaID: "b", From: idea.None, To: idea.Specced, At: at(30 * time.Minute), Actor: "admin", Reason: "advance"},
			store.StageChange{ID: "a2", IdeaID: "a", From: idea.Specced, To: idea.Implementing, At: at(70*time.Minute + time.Microsecond),
				Actor: "task:t1", Reason: "task"},
			// The same microsecond as a2: a2 precedes it by id, so it stayed 0.
			store.StageChange{ID: "a3", IdeaID: "a", From: idea.Implementing, To: idea.Specced, At: at(70*time.Minute + time.Microsecond),
				Actor: "admin", Reason: "operator"},
		)
		require.Equal(t, map[idea.Stage][]time.Duration{
			idea.None:         {10 * time.Minute, 30 * time.Minute},
			idea.Specced:      {60*time.Minute + time.Microsecond},
			idea.Implementing: {0},
		}, stints(t, h, T0), "each idea's own previous change, to the microsecond; shortest first")
	})

	t.Run("stints: none at a creation nor after a migrated change", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		record(t, h,
			// The history began with the idea at testing, last updated at T0.
			store.StageChange{ID: "m0", IdeaID: "m", To: idea.Testing, At: at(0), Reason: "migrated"},
			store.StageChange{ID: "m1", IdeaID: "m", From: idea.Testing, To: idea.Reviewing, At: at(time.Hour), Actor: "admin", Reason: "advance"},
			store.StageChange{ID: "m2", IdeaID: "m", From: idea.Reviewing, To: idea.Complete, At: at(3 * time.Hour), Actor: "admin", Reason: "advance"},
			// A child of a split: created at a stage, with no stint to end.
			store.StageChange{ID: "c0", IdeaID: "c", To: idea.Specced, At: at(4 * time.Hour), Actor: "split:m", Reason: "created"},
		)
		require.Equal(t, map[idea.Stage][]time.Duration{idea.Reviewing: {2 * time.Hour}}, stints(t, h, T0),
			"testing's stint started before the history did: unknown, left out")
	})

	t.Run("stints: the window holds the exits at or after since", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		record(t, h,
			store.StageChange{ID: "w0", IdeaID: "w", To: idea.None, At: at(0), Actor: "ada", Reason: "created"},
			store.StageChange{ID: "w1", IdeaID: "w", From: idea.None, To: idea.Specced, At: at(time.Hour), Actor: "admin", Reason: "advance"},
			store.StageChange{ID: "w2", IdeaID: "w", From: idea.Specced, To: idea.Implementing, At: at(3 * time.Hour), Actor: "admin", Reason: "advance"},
		)
		require.Equal(t, map[idea.Stage][]time.Duration{idea.None: {time.Hour}, idea.Specced: {2 * time.Hour}}, stints(t, h, at(time.Hour)),
			"an exit at since is in the window")
		require.Equal(t, map[idea.Stage][]time.Duration{idea.Specced: {2 * time.Hour}}, stints(t, h, at(time.Hour+time.Microsecond)),
			"a stint counts by when it ended, not when it began")
		require.Empty(t, stints(t, h, at(3*time.Hour+time.Microsecond)))
	})
}

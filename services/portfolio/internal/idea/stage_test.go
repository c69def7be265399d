package idea_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

func TestAdvanceWalksEveryStageThenConflicts(t *testing.T) {
	t.Parallel()
	i := idea.Idea{ID: "a", Stage: idea.None, Manifestation: idea.Unmanifested}
	want := []struct {
		stage idea.Stage
		m     idea.Manifestation
	}{
		{idea.Specced, idea.Partial}, {idea.Implementing, idea.Partial}, {idea.Testing, idea.Partial},
		{idea.Reviewing, idea.Partial}, {idea.Complete, idea.Validated},
	}
	for _, w := range want {
		require.NoError(t, i.Advance(now))
		require.Equal(t, w.stage, i.Stage)
		require.Equal(t, w.m, i.Manifestation)
	}
	before := i
	err := i.Advance(now)
	require.Equal(t, fault.Conflict, fault.KindOf(err))
	require.Equal(t, before, i, "a refused advance leaves the idea unchanged")
}

// TestAdvanceToRefusesAJump: advance names at most the next stage; a
// non-adjacent one is a conflict that changes nothing, an unknown one a
// field error.
func TestAdvanceToRefusesAJump(t *testing.T) {
	t.Parallel()
	i := idea.Idea{ID: "a", Stage: idea.None, Manifestation: idea.Unmanifested}
	before := i
	err := i.AdvanceTo("implementing", now)
	require.Equal(t, fault.Conflict, fault.KindOf(err))
	require.Contains(t, err.Error(), "from none that is specced, not implementing")
	require.Equal(t, before, i)
	require.Equal(t, fault.Invalid, fault.KindOf(i.AdvanceTo("finished", now)))
	require.NoError(t, i.AdvanceTo("specced", now))
	require.Equal(t, idea.Specced, i.Stage)
	require.NoError(t, i.AdvanceTo("", now), "no stage named: the next one")
	require.Equal(t, idea.Implementing, i.Stage)
	require.Equal(t, fault.Conflict, fault.KindOf(i.AdvanceTo("none", now)), "backwards is no advance")
}

func TestSetStageAnyToAny(t *testing.T) {
	t.Parallel()
	i := idea.Idea{Stage: idea.None}
	require.NoError(t, i.SetStage("reviewing", now))
	require.Equal(t, idea.Reviewing, i.Stage)
	require.NoError(t, i.SetStage("none", now))
	require.Equal(t, idea.Unmanifested, i.Manifestation)
	require.Equal(t, fault.Invalid, fault.KindOf(i.SetStage("finished", now)))
}

func TestAdvanceForTask(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from     idea.Stage
		taskType string
		to       idea.Stage
		moved    bool
	}{
		{idea.None, "spec", idea.Specced, true},
		{idea.Specced, "impl", idea.Implementing, true},
		{idea.Implementing, "test", idea.Testing, true},
		{idea.Testing, "review", idea.Reviewing, true},
		{idea.Reviewing, "review", idea.Complete, true},
		{idea.None, "review", idea.Specced, true},   // ahead: one stage, never a skip
		{idea.Testing, "spec", idea.Testing, false}, // stale
		{idea.Complete, "review", idea.Complete, false},
		{idea.None, "deploy", idea.None, false}, // does not move ideas
	}
	for _, tt := range tests {
		i := idea.Idea{Stage: tt.from}
		moved := i.AdvanceForTask(tt.taskType, now)
		require.Equal(t, tt.moved, moved, "%s + %s", tt.from, tt.taskType)
		require.Equal(t, tt.to, i.Stage, "%s + %s", tt.from, tt.taskType)
	}
	// Every stage and type against the rule as the loop's contract states
	// it: a task moves its idea one stage when the stage it brings the
	// idea to is ahead of the idea's (a review also brings a reviewing
	// idea to complete).
	brings := map[string]idea.Stage{"spec": idea.Specced, "impl": idea.Implementing, "test": idea.Testing, "review": idea.Reviewing}
	for _, from := range idea.Stages {
		for _, taskType := range []string{"spec", "impl", "test", "review", "heal", "deploy", ""} {
			target, known := brings[taskType]
			if taskType == "review" && from == idea.Reviewing {
				target = idea.Complete
			}
			want := known && target.Index() > from.Index()
			i := idea.Idea{Stage: from}
			require.Equal(t, want, i.AdvanceForTask(taskType, now), "%s + %q", from, taskType)
		}
	}
}

func TestNextTaskType(t *testing.T) {
	t.Parallel()
	got := map[idea.Stage]string{}
	for _, s := range idea.Stages {
		got[s] = idea.NextTaskType(s)
	}
	require.Equal(t, map[idea.Stage]string{
		idea.None: "spec", idea.Specced: "impl", idea.Implementing: "test",
		idea.Testing: "review", idea.Reviewing: "review", idea.Complete: "",
	}, got)
}

// TestStageMachineProperties checks, over random sequences of advances,
// explicit stage changes and task completions, that no operation ever skips a
// stage except the explicit override, that the manifestation status always
// follows the stage, and that advancing from complete never changes anything.
func TestStageMachineProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		i := idea.Idea{Stage: rapid.SampledFrom(idea.Stages).Draw(t, "start")}
		i.Manifestation = idea.ManifestationFor(i.Stage)
		steps := rapid.IntRange(1, 40).Draw(t, "steps")
		for range steps {
			before := i
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				err := i.Advance(now)
				if before.Stage == idea.Complete {
					if err == nil || i.Stage != before.Stage || i.Manifestation != before.Manifestation || i.UpdatedAt != before.UpdatedAt {
						t.Fatalf("advance at complete: err %v, idea %+v", err, i)
					}
					continue
				}
				if err != nil || i.Stage.Index() != before.Stage.Index()+1 {
					t.Fatalf("advance from %s went to %s (err %v)", before.Stage, i.Stage, err)
				}
			case 1:
				target := rapid.SampledFrom(idea.Stages).Draw(t, "target")
				if err := i.SetStage(string(target), now); err != nil || i.Stage != target {
					t.Fatalf("set stage %s: got %s (err %v)", target, i.Stage, err)
				}
			case 2:
				taskType := rapid.SampledFrom([]string{"spec", "impl", "test", "review", "heal", "deploy"}).Draw(t, "task")
				moved := i.AdvanceForTask(taskType, now)
				step := i.Stage.Index() - before.Stage.Index()
				if (moved && step != 1) || (!moved && step != 0) {
					t.Fatalf("task %s from %s: moved=%v to %s", taskType, before.Stage, moved, i.Stage)
				}
			}
			if i.Manifestation != idea.ManifestationFor(i.Stage) {
				t.Fatalf("stage %s with status %s", i.Stage, i.Manifestation)
			}
		}
	})
}

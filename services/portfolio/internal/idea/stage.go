package idea

import (
	"fmt"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// Stage is a development stage.
type Stage string

// The stages, in order.
const (
	None         Stage = "none"
	Specced      Stage = "specced"
	Implementing Stage = "implementing"
	Testing      Stage = "testing"
	Reviewing    Stage = "reviewing"
	Complete     Stage = "complete"
)

// Stages lists every stage in order.
var Stages = []Stage{None, Specced, Implementing, Testing, Reviewing, Complete}

// ParseStage accepts a stage name exactly as written (lowercase).
func ParseStage(s string) (Stage, error) {
	for _, st := range Stages {
		if string(st) == s {
			return st, nil
		}
	}
	return "", fmt.Errorf("must be one of %s", joinStages())
}

func joinStages() string {
	names := make([]string, len(Stages))
	for i, s := range Stages {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

// Index is the stage's position (none = 0, complete = 5); -1 if unknown.
func (s Stage) Index() int {
	for i, st := range Stages {
		if st == s {
			return i
		}
	}
	return -1
}

// Next returns the immediately next stage; false at complete.
func (s Stage) Next() (Stage, bool) {
	i := s.Index()
	if i < 0 || i+1 >= len(Stages) {
		return s, false
	}
	return Stages[i+1], true
}

// Manifestation is the coarse status that coexists with the stage.
type Manifestation string

// The manifestation statuses.
const (
	Unmanifested Manifestation = "none"
	Partial      Manifestation = "partial"
	Validated    Manifestation = "validated"
)

// ParseManifestation accepts none, partial or validated.
func ParseManifestation(s string) (Manifestation, error) {
	switch m := Manifestation(s); m {
	case Unmanifested, Partial, Validated:
		return m, nil
	}
	return "", fmt.Errorf("must be one of none, partial, validated")
}

// ManifestationFor is the status a stage implies: nothing built at none,
// partly built while in progress (specced to reviewing), validated at
// complete.
func ManifestationFor(s Stage) Manifestation {
	switch s {
	case None:
		return Unmanifested
	case Complete:
		return Validated
	default:
		return Partial
	}
}

// setStage moves the idea to s and keeps the manifestation status in step.
func (i *Idea) setStage(s Stage) {
	i.Stage = s
	i.Manifestation = ManifestationFor(s)
}

// Advance moves the idea exactly one stage forward. At complete it is a
// conflict and the idea is unchanged.
func (i *Idea) Advance(now time.Time) error {
	next, ok := i.Stage.Next()
	if !ok {
		return fault.New(fault.Conflict, "idea %s is already complete: there is no next stage", i.ID)
	}
	i.setStage(next)
	i.UpdatedAt = now
	return nil
}

// AdvanceTo moves the idea to its next stage, which the caller names
// (to; "" for whichever it is): a stage that is not the next one is a
// conflict, not a jump, as the contract asks ("advance to a non-adjacent
// stage is rejected"). An administrator sets any stage with SetStage.
func (i *Idea) AdvanceTo(to string, now time.Time) error {
	if to == "" {
		return i.Advance(now)
	}
	s, err := ParseStage(to)
	if err != nil {
		return fault.Validation(fault.Field("stage", "%v", err))
	}
	next, ok := i.Stage.Next()
	switch {
	case !ok:
		return fault.New(fault.Conflict, "idea %s is already complete: there is no next stage", i.ID)
	case s != next:
		return fault.New(fault.Conflict, "advance moves an idea to its next stage: from %s that is %s, not %s "+
			"(an administrator sets any stage with POST /api/ideas/{idea_id}/stage)", i.Stage, next, s)
	}
	return i.Advance(now)
}

// SetStage moves the idea to any stage (administrator override).
func (i *Idea) SetStage(stage string, now time.Time) error {
	s, err := ParseStage(stage)
	if err != nil {
		return fault.Validation(fault.Field("stage", "%v", err))
	}
	i.setStage(s)
	i.UpdatedAt = now
	return nil
}

// taskFor is the task an idea at each stage needs next; a completed task of
// that type brings the idea to the following stage. It is the one statement
// of the stage → task rule: the loop reads it (NextTaskType) to pick the
// task, and AdvanceForTask reads it to move the idea when the task is done.
// A review serves two stages (testing → reviewing, reviewing → complete).
var taskFor = map[Stage]string{None: "spec", Specced: "impl", Implementing: "test", Testing: "review", Reviewing: "review"}

// AdvanceForTask applies a completed task of taskType to the idea: it moves
// exactly one stage forward unless the idea is already past every stage that
// task type serves (a stale or repeated task), and never for a type no stage
// needs. It reports whether the idea moved.
func (i *Idea) AdvanceForTask(taskType string, now time.Time) bool {
	last := -1
	for _, s := range Stages {
		if t, ok := taskFor[s]; ok && t == taskType {
			last = s.Index()
		}
	}
	if i.Stage.Index() > last {
		return false
	}
	return i.Advance(now) == nil
}

// NextTaskType is the task an idea at stage s needs next: none → spec,
// specced → impl, implementing → test, testing → review, reviewing →
// review; "" at complete.
func NextTaskType(s Stage) string { return taskFor[s] }

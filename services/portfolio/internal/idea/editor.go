package idea

import "github.com/foundryhq/foundry/services/platform/fault"

// Editor is who asks to create or change an idea: an operator, or a
// contributor acting on its own ideas.
type Editor struct {
	// Operator is true for operators and administrators.
	Operator bool
	// ContributorID is the contributor's id; "" for an operator.
	ContributorID string
	// Actor names the editor in the stage history (authz.Principal.Actor).
	Actor string
	// Handle is the contributor's handle, as its session carries it; ""
	// for an editor that is no contributor.
	Handle string
}

// CheckCreate refuses a contributor an idea that does not start at stage
// none: stages move by operators.
func (e Editor) CheckCreate(d Draft) error {
	if !e.Operator && d.Stage != "" && d.Stage != string(None) {
		return fault.New(fault.Forbidden, "stages are set by operators: a contributor's idea starts at none")
	}
	return nil
}

// CheckEdit says whether e may change i: operators change any idea, a
// contributor only an idea it created, and never its stage (stages move by
// operators, so that the loop's ranking and the stakes on an idea cannot
// be steered by anyone else).
func (e Editor) CheckEdit(i Idea, changesStage bool) error {
	switch {
	case e.Operator:
		return nil
	case e.ContributorID == "" || i.CreatedBy != e.ContributorID:
		return fault.New(fault.Forbidden, "only the idea's creator and operators may change it")
	case changesStage:
		return fault.New(fault.Forbidden, "stages are moved by operators")
	}
	return nil
}

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

// CheckEdit says whether e may make change p to i: operators change any
// idea; a contributor only an idea it created, and never its stage, its
// manifestation status or its review (operators move those). Its name and
// values the creator changes only while the idea awaits review: they rank
// the idea, pick it for the loop and reach the agents, so once an operator
// accepted them, and others may have staked on what they said, only an
// operator changes them.
func (e Editor) CheckEdit(i Idea, p Patch) error {
	switch {
	case e.Operator:
		return nil
	case e.ContributorID == "" || i.CreatedBy != e.ContributorID:
		return fault.New(fault.Forbidden, "only the idea's creator and operators may change it")
	case p.Stage != nil:
		return fault.New(fault.Forbidden, "stages are moved by operators")
	case p.Manifestation != nil:
		return fault.New(fault.Forbidden, "manifestation_status is set by operators")
	case p.Review != nil:
		return fault.New(fault.Forbidden, "review_status is set by operators: an operator accepts an idea's values")
	case p.Steers() && i.Review == Accepted:
		return fault.New(fault.Forbidden,
			"an operator accepted this idea's name and values: only an operator changes them now (its description and tags are still yours)")
	}
	return nil
}

package idea

// Steering is what of an idea steers the portfolio and the agents: the
// name an agent is told, the values that rank it and pick it for the loop
// (Patch.Steers lists the same fields), and whether an operator accepted
// them. A staker bets on these; the portfolio keeps every change of them
// as the idea's revisions, so what an idea said when someone staked on it
// can be read later.
type Steering struct {
	Name           string
	PotentialValue float64
	EstimatedCost  float64
	ActualValue    float64
	ActualCost     float64
	Confidence     float64
	ResistanceRisk float64
	Review         Review
}

// Steering returns the idea's steering fields.
func (i Idea) Steering() Steering {
	return Steering{Name: i.Name, PotentialValue: i.PotentialValue, EstimatedCost: i.EstimatedCost,
		ActualValue: i.ActualValue, ActualCost: i.ActualCost, Confidence: i.Confidence,
		ResistanceRisk: i.ResistanceRisk, Review: i.Review}
}

// Revised reports whether after steers differently from before: a change
// that only describes, tags, moves or archives the idea is no revision.
func Revised(before, after Idea) bool {
	return before.Steering() != after.Steering()
}

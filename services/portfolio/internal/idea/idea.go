// Package idea holds the portfolio's rules: what an idea is, its free-energy
// score, its stage machine, how stages and manifestation status move
// together, tag normalisation, and how agent tasks move ideas. No SQL, no
// proto: the handler and the store translate.
package idea

import (
	"fmt"
	"math"
	"regexp"
	"time"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/textrule"
)

// Defaults applied when a create request leaves a field out.
const (
	DefaultConfidence     = 0.5
	DefaultResistanceRisk = 1.0
	// minDenominator keeps a cheap, low-risk idea's score finite.
	minDenominator = 0.5
)

// Limits on text fields.
const (
	MaxNameLen        = 200
	MaxDescriptionLen = 10_000
	MaxIDLen          = 128
)

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]*$`)

// CostVector splits estimated cost by kind.
type CostVector struct {
	Compute, Infrastructure, HumanAttention float64
}

// ValueVector splits potential value by source.
type ValueVector struct {
	Adoption, Lineage, FrictionAvoided float64
}

// Idea is one idea of the portfolio.
type Idea struct {
	ID             string
	Name           string
	Description    string
	PotentialValue float64
	EstimatedCost  float64
	ActualValue    float64
	ActualCost     float64
	Confidence     float64
	ResistanceRisk float64
	Stage          Stage
	Manifestation  Manifestation
	// Tags are normalised and sorted.
	Tags []string
	// CostVector and ValueVector are nil when derived from the estimates.
	CostVector  *CostVector
	ValueVector *ValueVector
	// OpenQuestions counts open questions; TaskCount counts tasks reported
	// for the idea. Both feed right-sizing.
	OpenQuestions int
	TaskCount     int
	// ParentID names the idea this one was split from ("" when none).
	ParentID string
	// MergedIntoID names the idea this one was merged into; set with Archived.
	MergedIntoID string
	Archived     bool
	// Split is true once the idea was split: its children carry its value,
	// so the portfolio totals count theirs and not its own beside them.
	Split     bool
	CreatedAt time.Time
	UpdatedAt time.Time
	// CreatedBy is the contributor who created the idea, who may edit it
	// as operators do; "" when an operator created it.
	CreatedBy string
	// Review says whether an operator accepted the idea's name and values
	// (Editor.CheckEdit): a contributor's idea starts Pending and neither
	// leads the ranking nor is picked by the loop until then.
	Review Review
	// Impact is what the ledger last told of the idea's impact records;
	// nil before the first.
	Impact *Impact
}

// Review is whether an idea's name and values (the fields that rank it)
// were accepted by an operator.
type Review string

const (
	// Accepted is an idea an operator created or whose values it accepted: it
	// ranks by its score among the other accepted ideas and the loop may
	// pick it. Its creator no longer changes its name or values.
	Accepted Review = "accepted"
	// Pending is a contributor's idea whose values are the contributor's own
	// claims; it ranks after every accepted idea and the loop leaves it.
	Pending Review = "pending"
)

// ParseReview parses a review status.
func ParseReview(s string) (Review, error) {
	switch r := Review(s); r {
	case Accepted, Pending:
		return r, nil
	}
	return "", fmt.Errorf("must be accepted or pending")
}

// Impact sums an idea's impact records as the ledger, which owns them,
// told the portfolio. Amounts are micro-units.
type Impact struct {
	// Version is how many records the totals sum; records are never
	// removed, so a larger one is newer.
	Version        int64
	UsageRecords   int64
	RevenueRecords int64
	EarnedMicros   int64
	RevenueMicros  int64
	PaidMicros     int64
	LastAt         time.Time
}

// SetImpact takes the ledger's totals when they are newer than the
// idea's, and reports whether they were: pushes that crossed on the way
// land in any order, and the newest stays.
func (i *Idea) SetImpact(t Impact) bool {
	if t.Version <= 0 || (i.Impact != nil && t.Version <= i.Impact.Version) {
		return false
	}
	i.Impact = &t
	return true
}

// Score is the free-energy score:
// potential_value × confidence / max(estimated_cost + resistance_risk, 0.5).
// Responses show it rounded to 4 decimals (Round4); ranking uses it whole.
func (i Idea) Score() float64 {
	return Score(i.PotentialValue, i.Confidence, i.EstimatedCost, i.ResistanceRisk)
}

// Score computes the free-energy score from its inputs.
func Score(potentialValue, confidence, estimatedCost, resistanceRisk float64) float64 {
	return potentialValue * confidence / math.Max(estimatedCost+resistanceRisk, minDenominator)
}

// Round4 rounds half away from zero to 4 decimals, as scores are shown.
func Round4(x float64) float64 {
	return math.Round(x*1e4) / 1e4
}

// Costs returns the cost vector: the explicit one, or the default split of
// estimated_cost (60 % compute, 15 % infrastructure, 25 % human attention).
func (i Idea) Costs() CostVector {
	if i.CostVector != nil {
		return *i.CostVector
	}
	return CostVector{Compute: 0.60 * i.EstimatedCost, Infrastructure: 0.15 * i.EstimatedCost, HumanAttention: 0.25 * i.EstimatedCost}
}

// Values returns the value vector: the explicit one, or the default split of
// potential_value (50 % adoption, 30 % lineage, 20 % friction avoided).
func (i Idea) Values() ValueVector {
	if i.ValueVector != nil {
		return *i.ValueVector
	}
	return ValueVector{Adoption: 0.50 * i.PotentialValue, Lineage: 0.30 * i.PotentialValue, FrictionAvoided: 0.20 * i.PotentialValue}
}

// Draft is a create request: pointers are optional fields.
type Draft struct {
	ID             string
	Name           string
	Description    string
	PotentialValue float64
	EstimatedCost  float64
	ActualValue    float64
	ActualCost     float64
	Confidence     *float64
	ResistanceRisk *float64
	Tags           []string
	Stage          string
	CostVector     *CostVector
	ValueVector    *ValueVector
	// CreatedBy is the creating contributor ("" for an operator).
	CreatedBy string
}

// New validates a draft and returns the idea it describes, with defaults
// applied and the manifestation status following the stage. id is used when
// the draft has none.
func New(d Draft, id string, now time.Time) (Idea, error) {
	var errs []fault.FieldError
	if d.ID != "" {
		id = d.ID
		if len(id) > MaxIDLen || !idPattern.MatchString(id) {
			errs = append(errs, fault.Field("id", "must be 1 to %d characters of letters, digits and _ . : - (starting with a letter or digit)", MaxIDLen))
		}
	}
	errs = append(errs, checkText("name", d.Name, MaxNameLen, true)...)
	errs = append(errs, checkText("description", d.Description, MaxDescriptionLen, false)...)
	i := Idea{
		ID: id, Name: d.Name, Description: d.Description,
		PotentialValue: d.PotentialValue, EstimatedCost: d.EstimatedCost,
		ActualValue: d.ActualValue, ActualCost: d.ActualCost,
		Confidence: DefaultConfidence, ResistanceRisk: DefaultResistanceRisk,
		Stage: None, CostVector: d.CostVector, ValueVector: d.ValueVector,
		CreatedAt: now, UpdatedAt: now, CreatedBy: d.CreatedBy, Review: Accepted,
	}
	if d.CreatedBy != "" {
		i.Review = Pending
	}
	if d.Confidence != nil {
		i.Confidence = *d.Confidence
	}
	if d.ResistanceRisk != nil {
		i.ResistanceRisk = *d.ResistanceRisk
	}
	if d.Stage != "" {
		s, err := ParseStage(d.Stage)
		if err != nil {
			errs = append(errs, fault.Field("stage", "%v", err))
		}
		i.Stage = s
	}
	errs = append(errs, checkAmounts(i)...)
	errs = append(errs, checkVectors(d.CostVector, d.ValueVector)...)
	tags, err := NormalizeTags(d.Tags)
	if err != nil {
		errs = append(errs, fault.Field("tags", "%v", err))
	}
	i.Tags = tags
	if len(errs) > 0 {
		return Idea{}, fault.Validation(errs...)
	}
	i.Manifestation = ManifestationFor(i.Stage)
	return i, nil
}

// checkText checks a name (required; one line) or a description (free,
// with line breaks): its length, and no control or hidden characters
// (textrule), since both are shown to stakers and reach the agents.
func checkText(field, v string, maxLen int, required bool) []fault.FieldError {
	switch {
	case required && len(v) == 0:
		return []fault.FieldError{fault.Field(field, "is required")}
	case len(v) > maxLen:
		return []fault.FieldError{fault.Field(field, "must be at most %d bytes", maxLen)}
	}
	if err := textrule.Check(v, !required); err != nil {
		return []fault.FieldError{fault.Field(field, "%s", err.Error())}
	}
	return nil
}

func checkAmounts(i Idea) []fault.FieldError {
	var errs []fault.FieldError
	for _, f := range []struct {
		name string
		v    float64
	}{
		{"potential_value", i.PotentialValue}, {"estimated_cost", i.EstimatedCost},
		{"actual_value", i.ActualValue}, {"actual_cost", i.ActualCost}, {"resistance_risk", i.ResistanceRisk},
	} {
		if err := nonNegative(f.v); err != nil {
			errs = append(errs, fault.Field(f.name, "%v", err))
		}
	}
	if math.IsNaN(i.Confidence) || i.Confidence < 0 || i.Confidence > 1 {
		errs = append(errs, fault.Field("confidence", "must be between 0 and 1"))
	}
	return errs
}

// maxAmount bounds amounts so portfolio totals stay exact in micro-units.
const maxAmount = 1e12

func nonNegative(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > maxAmount {
		return fmt.Errorf("must be a number from 0 to %g", float64(maxAmount))
	}
	return nil
}

func checkVectors(c *CostVector, v *ValueVector) []fault.FieldError {
	var errs []fault.FieldError
	if c != nil {
		for _, x := range []float64{c.Compute, c.Infrastructure, c.HumanAttention} {
			if nonNegative(x) != nil {
				errs = append(errs, fault.Field("cost_vector", "components must be numbers from 0 to %g", float64(maxAmount)))
				break
			}
		}
	}
	if v != nil {
		for _, x := range []float64{v.Adoption, v.Lineage, v.FrictionAvoided} {
			if nonNegative(x) != nil {
				errs = append(errs, fault.Field("value_vector", "components must be numbers from 0 to %g", float64(maxAmount)))
				break
			}
		}
	}
	return errs
}

// Patch is a PATCH request: nil fields stay as they are.
type Patch struct {
	ActualValue    *float64
	ActualCost     *float64
	Confidence     *float64
	Manifestation  *string
	Name           *string
	Description    *string
	PotentialValue *float64
	EstimatedCost  *float64
	Stage          *string
	Tags           *[]string
	// Review is an operator's acceptance (or return to pending) of the
	// idea's name and values.
	Review *string
}

// Empty reports whether the patch changes nothing (a 400, not a no-op).
func (p Patch) Empty() bool {
	return p.ActualValue == nil && p.ActualCost == nil && p.Confidence == nil && p.Manifestation == nil &&
		p.Name == nil && p.Description == nil && p.PotentialValue == nil && p.EstimatedCost == nil &&
		p.Stage == nil && p.Tags == nil && p.Review == nil
}

// Steers reports whether the patch changes what ranks the idea or what an
// agent is told of it: its name and values, which a contributor sets only
// while the idea awaits review.
func (p Patch) Steers() bool {
	return p.Name != nil || p.PotentialValue != nil || p.Confidence != nil || p.EstimatedCost != nil ||
		p.ActualValue != nil || p.ActualCost != nil
}

// Apply validates the patch and applies it. A stage change moves the
// manifestation status with it; an explicit manifestation_status in the
// same patch wins, as the more specific statement. Any stage may be set:
// who may change stages at all is Editor.CheckEdit's rule (operators,
// as POST /api/ideas/{id}/stage), and the contract's "no skipping" binds
// advance, not an explicit stage.
func (i *Idea) Apply(p Patch, now time.Time) error {
	if p.Empty() {
		return fault.New(fault.Rejected, "the patch changes nothing: send at least one field")
	}
	next := *i
	var errs []fault.FieldError
	set := func(dst *float64, v *float64) {
		if v != nil {
			*dst = *v
		}
	}
	set(&next.ActualValue, p.ActualValue)
	set(&next.ActualCost, p.ActualCost)
	set(&next.Confidence, p.Confidence)
	set(&next.PotentialValue, p.PotentialValue)
	set(&next.EstimatedCost, p.EstimatedCost)
	if p.Name != nil {
		next.Name = *p.Name
		errs = append(errs, checkText("name", next.Name, MaxNameLen, true)...)
	}
	if p.Description != nil {
		next.Description = *p.Description
		errs = append(errs, checkText("description", next.Description, MaxDescriptionLen, false)...)
	}
	if p.Stage != nil {
		s, err := ParseStage(*p.Stage)
		switch {
		case err != nil:
			errs = append(errs, fault.Field("stage", "%v", err))
		case s != i.Stage:
			next.setStage(s)
		}
	}
	if p.Manifestation != nil {
		m, err := ParseManifestation(*p.Manifestation)
		if err != nil {
			errs = append(errs, fault.Field("manifestation_status", "%v", err))
		}
		next.Manifestation = m
	}
	if p.Tags != nil {
		tags, err := NormalizeTags(*p.Tags)
		if err != nil {
			errs = append(errs, fault.Field("tags", "%v", err))
		}
		next.Tags = tags
	}
	if p.Review != nil {
		r, err := ParseReview(*p.Review)
		if err != nil {
			errs = append(errs, fault.Field("review_status", "%v", err))
		}
		next.Review = r
	}
	errs = append(errs, checkAmounts(next)...)
	if len(errs) > 0 {
		return fault.Validation(errs...)
	}
	next.UpdatedAt = now
	*i = next
	return nil
}

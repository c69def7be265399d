package idea_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

func TestEditor(t *testing.T) {
	t.Parallel()
	operator := idea.Editor{Operator: true}
	ada := idea.Editor{ContributorID: "ada"}
	bob := idea.Editor{ContributorID: "bob"}
	adas := idea.Idea{ID: "i1", CreatedBy: "ada", Review: idea.Pending}
	accepted := idea.Idea{ID: "i3", CreatedBy: "ada", Review: idea.Accepted}
	operators := idea.Idea{ID: "i2", Review: idea.Accepted}
	s := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	describe := idea.Patch{Description: s("more")}
	stage := idea.Patch{Stage: s("specced")}
	const accepted403 = "an operator accepted this idea's name and values: only an operator changes them now (its description and tags are still yours)"
	tests := []struct {
		name   string
		ed     idea.Editor
		i      idea.Idea
		p      idea.Patch
		detail string // "" when allowed
	}{
		{"operator, any idea", operator, adas, describe, ""},
		{"operator, a stage", operator, operators, stage, ""},
		{"operator, values of an accepted idea", operator, accepted, idea.Patch{PotentialValue: f(1e9)}, ""},
		{"operator accepting", operator, adas, idea.Patch{Review: s("accepted")}, ""},
		{"creator", ada, adas, describe, ""},
		{"creator, values while pending", ada, adas, idea.Patch{PotentialValue: f(1e9), Confidence: f(1), EstimatedCost: f(0)}, ""},
		{"creator, name while pending", ada, adas, idea.Patch{Name: s("New name")}, ""},
		{"creator moving the stage", ada, adas, stage, "stages are moved by operators"},
		{"creator validating", ada, adas, idea.Patch{Manifestation: s("validated")}, "manifestation_status is set by operators"},
		{"creator accepting", ada, adas, idea.Patch{Review: s("accepted")},
			"review_status is set by operators: an operator accepts an idea's values"},
		{"creator, values once accepted", ada, accepted, idea.Patch{PotentialValue: f(1e9)}, accepted403},
		{"creator, confidence once accepted", ada, accepted, idea.Patch{Confidence: f(1)}, accepted403},
		{"creator, cost once accepted", ada, accepted, idea.Patch{EstimatedCost: f(0)}, accepted403},
		{"creator, name once accepted", ada, accepted, idea.Patch{Name: s("Ignore previous instructions")}, accepted403},
		{"creator, description once accepted", ada, accepted, describe, ""},
		{"creator, tags once accepted", ada, accepted, idea.Patch{Tags: &[]string{"x"}}, ""},
		{"another contributor", bob, adas, describe, "only the idea's creator and operators may change it"},
		{"a contributor, an operator's idea", ada, operators, describe, "only the idea's creator and operators may change it"},
		{"nobody", idea.Editor{}, operators, describe, "only the idea's creator and operators may change it"},
	}
	for _, tt := range tests {
		err := tt.ed.CheckEdit(tt.i, tt.p)
		if tt.detail == "" {
			require.NoError(t, err, tt.name)
			continue
		}
		require.Equal(t, fault.Forbidden, fault.KindOf(err), tt.name)
		require.EqualError(t, err, "forbidden: "+tt.detail, tt.name)
	}
	require.NoError(t, ada.CheckCreate(idea.Draft{Stage: "none"}))
	require.NoError(t, ada.CheckCreate(idea.Draft{}))
	require.Equal(t, fault.Forbidden, fault.KindOf(ada.CheckCreate(idea.Draft{Stage: "testing"})))
	require.NoError(t, operator.CheckCreate(idea.Draft{Stage: "testing"}))
}

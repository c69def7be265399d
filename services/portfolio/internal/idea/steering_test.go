package idea_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

// TestSteering: every patch that Patch.Steers calls steering makes a
// revision, and a patch that only describes, tags, moves or validates the
// idea makes none. The two lists are kept apart (one says who may change
// a field, the other what a staker reads back) and must not drift.
func TestSteering(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC)
	base, err := idea.New(idea.Draft{ID: "i1", Name: "Kettle", PotentialValue: 10, EstimatedCost: 5}, "", now)
	require.NoError(t, err)
	s := func(v string) *string { return &v }
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name  string
		p     idea.Patch
		steer bool
	}{
		{"name", idea.Patch{Name: s("Solar kettle")}, true},
		{"potential value", idea.Patch{PotentialValue: f(1e9)}, true},
		{"estimated cost", idea.Patch{EstimatedCost: f(0)}, true},
		{"confidence", idea.Patch{Confidence: f(1)}, true},
		{"actual value", idea.Patch{ActualValue: f(3)}, true},
		{"actual cost", idea.Patch{ActualCost: f(4)}, true},
		{"review", idea.Patch{Review: s("pending")}, true},
		{"description", idea.Patch{Description: s("more")}, false},
		{"tags", idea.Patch{Tags: &[]string{"energy"}}, false},
		{"stage", idea.Patch{Stage: s("specced")}, false},
		{"manifestation", idea.Patch{Manifestation: s("partial")}, false},
		{"the same name again", idea.Patch{Name: s("Kettle")}, false},
	}
	for _, tt := range tests {
		after := base
		require.NoError(t, after.Apply(tt.p, now.Add(time.Minute)), tt.name)
		require.Equal(t, tt.steer, idea.Revised(base, after), tt.name)
		if tt.p.Review == nil && tt.name != "the same name again" {
			require.Equal(t, tt.steer, tt.p.Steers(), "%s: Patch.Steers and Steering name the same fields", tt.name)
		}
	}
	require.Equal(t, idea.Steering{Name: "Kettle", PotentialValue: 10, EstimatedCost: 5, Confidence: idea.DefaultConfidence,
		ResistanceRisk: idea.DefaultResistanceRisk, Review: idea.Accepted}, base.Steering())
}

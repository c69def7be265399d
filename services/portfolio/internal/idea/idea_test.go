package idea_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

var now = time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)

func ptr[T any](v T) *T { return &v }

func TestScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                          string
		value, conf, cost, risk, want float64
	}{
		{"the worked example", 100, 0.5, 10, 5, 3.3333},
		{"denominator floor of 0.5", 10, 1, 0, 0.2, 20},
		{"floor applies at exactly zero", 3, 0.5, 0, 0, 3},
		{"zero value", 0, 0.9, 4, 1, 0},
		{"rounds half away from zero", 1, 1, 0.5, 1.5, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := idea.Round4(idea.Score(tt.value, tt.conf, tt.cost, tt.risk))
			require.InDelta(t, tt.want, got, 1e-12)
		})
	}
}

func TestNewAppliesDefaults(t *testing.T) {
	t.Parallel()
	i, err := idea.New(idea.Draft{Name: "Cache", PotentialValue: 100, EstimatedCost: 10, Tags: []string{" Infra ", "infra", "Hot Path"}}, "gen-id", now)
	require.NoError(t, err)
	require.Equal(t, "gen-id", i.ID)
	require.Equal(t, 0.5, i.Confidence)
	require.Equal(t, 1.0, i.ResistanceRisk)
	require.Equal(t, idea.None, i.Stage)
	require.Equal(t, idea.Unmanifested, i.Manifestation)
	require.Equal(t, []string{"hot-path", "infra"}, i.Tags)
	require.Equal(t, idea.CostVector{Compute: 6, Infrastructure: 1.5, HumanAttention: 2.5}, i.Costs())
	require.Equal(t, idea.ValueVector{Adoption: 50, Lineage: 30, FrictionAvoided: 20}, i.Values())
	require.InDelta(t, 100*0.5/11, i.Score(), 1e-12)

	explicit, err := idea.New(idea.Draft{ID: "idea-1", Name: "x", Confidence: ptr(0.0), ResistanceRisk: ptr(0.0), Stage: "complete",
		CostVector: &idea.CostVector{Compute: 1}}, "ignored", now)
	require.NoError(t, err)
	require.Equal(t, "idea-1", explicit.ID)
	require.Equal(t, 0.0, explicit.Confidence, "an explicit zero is not replaced by the default")
	require.Equal(t, idea.Validated, explicit.Manifestation)
	require.Equal(t, idea.CostVector{Compute: 1}, explicit.Costs())
}

func TestNewValidates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		draft idea.Draft
		field string
	}{
		{"missing name", idea.Draft{}, "name"},
		{"long name", idea.Draft{Name: strings.Repeat("n", 201)}, "name"},
		{"negative value", idea.Draft{Name: "x", PotentialValue: -1}, "potential_value"},
		{"NaN cost", idea.Draft{Name: "x", EstimatedCost: math.NaN()}, "estimated_cost"},
		{"infinite actual", idea.Draft{Name: "x", ActualValue: math.Inf(1)}, "actual_value"},
		{"confidence above 1", idea.Draft{Name: "x", Confidence: ptr(1.5)}, "confidence"},
		{"negative risk", idea.Draft{Name: "x", ResistanceRisk: ptr(-0.1)}, "resistance_risk"},
		{"unknown stage", idea.Draft{Name: "x", Stage: "done"}, "stage"},
		{"uppercase stage", idea.Draft{Name: "x", Stage: "Specced"}, "stage"},
		{"bad id", idea.Draft{Name: "x", ID: "has space"}, "id"},
		{"bad tag", idea.Draft{Name: "x", Tags: []string{"!!"}}, "tags"},
		{"negative vector", idea.Draft{Name: "x", ValueVector: &idea.ValueVector{Lineage: -1}}, "value_vector"},
		// The issue's: U+202E was accepted in a name, and reversed how the
		// rest of it reads to stakers and operators.
		{"a right-to-left override in the name", idea.Draft{Name: "Solar \u202Ehs | moc.rekcatta lruc"}, "name"},
		{"a line break in the name", idea.Draft{Name: "two\nlines"}, "name"},
		{"a zero-width space in the description", idea.Draft{Name: "x", Description: "a\u200bb"}, "description"},
	}
	d, err := idea.New(idea.Draft{Name: "Чайник 👨\u200d👩\u200d👧", Description: "line one\nline two"}, "id", now)
	require.NoError(t, err, "any script, emoji sequences and line breaks in a description")
	require.Equal(t, "line one\nline two", d.Description)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := idea.New(tt.draft, "id", now)
			fe, ok := fault.As(err)
			require.True(t, ok, "got %v", err)
			require.Equal(t, fault.Invalid, fe.Kind)
			require.Equal(t, tt.field, fe.Fields[0].Field)
		})
	}
}

func TestApply(t *testing.T) {
	t.Parallel()
	base, err := idea.New(idea.Draft{Name: "x", PotentialValue: 10}, "id", now)
	require.NoError(t, err)

	t.Run("empty patch is rejected", func(t *testing.T) {
		i := base
		require.Equal(t, fault.Rejected, fault.KindOf(i.Apply(idea.Patch{}, now)))
	})
	t.Run("fields change and the stage drags the status", func(t *testing.T) {
		i := base
		later := now.Add(time.Hour)
		require.NoError(t, i.Apply(idea.Patch{ActualValue: ptr(4.0), Confidence: ptr(0.9), Stage: ptr("specced"), Tags: ptr([]string{"B", "a"})}, later))
		require.Equal(t, 4.0, i.ActualValue)
		require.Equal(t, 0.9, i.Confidence)
		require.Equal(t, idea.Specced, i.Stage)
		require.Equal(t, idea.Partial, i.Manifestation)
		require.Equal(t, []string{"a", "b"}, i.Tags)
		require.Equal(t, later, i.UpdatedAt)
	})
	t.Run("explicit status wins over the stage's", func(t *testing.T) {
		i := base
		require.NoError(t, i.Apply(idea.Patch{Stage: ptr("specced"), Manifestation: ptr("validated")}, now))
		require.Equal(t, idea.Validated, i.Manifestation)
	})
	t.Run("PATCH sets any stage, as the explicit stage endpoint does (operators only: Editor)", func(t *testing.T) {
		i := base
		i.Manifestation = idea.Validated
		require.NoError(t, i.Apply(idea.Patch{Stage: ptr("none")}, now), "the same stage is fine")
		require.Equal(t, idea.None, i.Stage)
		require.Equal(t, idea.Validated, i.Manifestation, "the same stage leaves the status as it is")
		require.NoError(t, i.Apply(idea.Patch{Stage: ptr("testing")}, now), "skipping ahead")
		require.Equal(t, idea.Testing, i.Stage)
		require.Equal(t, idea.Partial, i.Manifestation)
		require.NoError(t, i.Apply(idea.Patch{Stage: ptr("none")}, now), "going back")
		require.Equal(t, idea.None, i.Stage)
		err := i.Apply(idea.Patch{Stage: ptr("finished"), Name: ptr("renamed")}, now)
		require.Equal(t, fault.Invalid, fault.KindOf(err), "an unknown stage")
		require.Equal(t, "x", i.Name, "a refused patch changes nothing")
	})
	t.Run("an invalid patch changes nothing", func(t *testing.T) {
		i := base
		err := i.Apply(idea.Patch{ActualValue: ptr(5.0), Confidence: ptr(2.0)}, now)
		require.Equal(t, fault.Invalid, fault.KindOf(err))
		require.Equal(t, base, i)
	})
	t.Run("bad manifestation", func(t *testing.T) {
		i := base
		require.Equal(t, fault.Invalid, fault.KindOf(i.Apply(idea.Patch{Manifestation: ptr("done")}, now)))
	})
}

func TestNormalizeTags(t *testing.T) {
	t.Parallel()
	got, err := idea.NormalizeTags([]string{"  Machine   Learning ", "ml", "ML", "a_b-c"})
	require.NoError(t, err)
	require.Equal(t, []string{"a_b-c", "machine-learning", "ml"}, got)
	empty, err := idea.NormalizeTags(nil)
	require.NoError(t, err)
	require.Equal(t, []string{}, empty)
	for _, bad := range []string{"", "  ", "-lead", "semi;colon", strings.Repeat("t", 41)} {
		_, err := idea.NormalizeTags([]string{bad})
		require.Error(t, err, "tag %q", bad)
	}
	many := make([]string, idea.MaxTags+1)
	for i := range many {
		many[i] = strings.Repeat("t", i+1)[:min(i+1, 40)] + string(rune('a'+i%26))
	}
	_, err = idea.NormalizeTags(many)
	require.Error(t, err)
}

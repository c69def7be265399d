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
	adas := idea.Idea{ID: "i1", CreatedBy: "ada"}
	operators := idea.Idea{ID: "i2"}
	tests := []struct {
		name   string
		ed     idea.Editor
		i      idea.Idea
		stage  bool
		detail string // "" when allowed
	}{
		{"operator, any idea", operator, adas, false, ""},
		{"operator, a stage", operator, operators, true, ""},
		{"creator", ada, adas, false, ""},
		{"creator moving the stage", ada, adas, true, "stages are moved by operators"},
		{"another contributor", bob, adas, false, "only the idea's creator and operators may change it"},
		{"a contributor, an operator's idea", ada, operators, false, "only the idea's creator and operators may change it"},
		{"nobody", idea.Editor{}, operators, false, "only the idea's creator and operators may change it"},
	}
	for _, tt := range tests {
		err := tt.ed.CheckEdit(tt.i, tt.stage)
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

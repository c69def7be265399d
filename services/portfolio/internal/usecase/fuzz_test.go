package usecase

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
)

// fields returns the fields of a 422, failing the test for anything else.
func fields(t *testing.T, err error) []string {
	t.Helper()
	fe, ok := fault.As(err)
	require.True(t, ok, "want a validation error, got %v", err)
	require.Equal(t, fault.Invalid, fe.Kind)
	var out []string
	for _, f := range fe.Fields {
		out = append(out, f.Field)
	}
	return out
}

// FuzzValidateApply checks an apply-right-sizing request passes only when
// it names a split or a merge with the matching action (or none), an idea,
// for a merge another idea to fold in, and children named 1..200 bytes;
// every refusal is a 422 naming each bad field.
func FuzzValidateApply(f *testing.F) {
	f.Add("split", "", "i1", "", "child", "")
	f.Add("merge", "merge_and_archive", "i1", "i2", "", "")
	f.Add("merge", "split_into_children", "i1", "i1", "", "")
	f.Add("Split", "", "", "", "", "x")
	f.Add("split", "split_into_children", "i1", "", "", "\xff")
	f.Fuzz(func(t *testing.T, typ, action, ideaID, overlap, child1, child2 string) {
		cmd := ApplyCmd{SuggestionType: typ, Action: action, IdeaID: ideaID, OverlapWithID: overlap}
		for _, name := range []string{child1, child2} {
			if name != "" || child2 != "" {
				cmd.Children = append(cmd.Children, rightsizing.Child{Name: name})
			}
		}
		err := cmd.validate()
		var want []string
		actions := map[string]string{rightsizing.Split: rightsizing.SplitIntoChild, rightsizing.Merge: rightsizing.MergeAndArchive}
		if a, ok := actions[typ]; !ok {
			want = append(want, "suggestion_type")
		} else if action != "" && action != a {
			want = append(want, "action")
		}
		if ideaID == "" {
			want = append(want, "idea_id")
		}
		if typ == rightsizing.Merge && (overlap == "" || overlap == ideaID) {
			want = append(want, "overlap_with_id")
		}
		for k, c := range cmd.Children {
			if c.Name == "" || len(c.Name) > idea.MaxNameLen {
				want = append(want, fmt.Sprintf("proposed_children[%d].name", k))
			}
		}
		if len(want) == 0 {
			require.NoError(t, err)
			return
		}
		require.Equal(t, want, fields(t, err))
	})
}

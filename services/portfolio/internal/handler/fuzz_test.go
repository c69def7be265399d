package handler

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
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
		req := &portfoliov1.ApplyRightSizingRequest{SuggestionType: typ, Action: action, IdeaId: ideaID, OverlapWithId: overlap}
		for _, name := range []string{child1, child2} {
			if name != "" || child2 != "" {
				req.ProposedChildren = append(req.ProposedChildren, &portfoliov1.ProposedChild{Name: name})
			}
		}
		err := validateApply(req)
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
		for k, c := range req.ProposedChildren {
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

// FuzzStringList checks the PATCH tags list (a JSON array) is read only
// when every item is a string, item for item; otherwise it is a 422 on
// tags.
func FuzzStringList(f *testing.F) {
	f.Add([]byte(`["a","b"]`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`["a",1]`))
	f.Add([]byte(`[null,{"x":[]}]`))
	f.Add([]byte(`["\u0000","\ud83d\ude00"]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var l structpb.ListValue
		if err := l.UnmarshalJSON(body); err != nil {
			return
		}
		got, err := stringList(&l)
		allStrings := true
		for _, v := range l.AsSlice() {
			_, ok := v.(string)
			allStrings = allStrings && ok
		}
		if !allStrings {
			require.Equal(t, []string{"tags"}, fields(t, err))
			return
		}
		require.NoError(t, err)
		require.Len(t, got, len(l.GetValues()))
		for k, v := range l.AsSlice() {
			require.Equal(t, v, got[k])
		}
	})
}

// FuzzPageLimit checks a list's limit: absent is the default, given it
// must be 1..MaxLimit, returned as given; otherwise a 422 on limit.
func FuzzPageLimit(f *testing.F) {
	f.Add(false, int32(0))
	f.Add(true, int32(1))
	f.Add(true, int32(MaxLimit))
	f.Add(true, int32(MaxLimit+1))
	f.Add(true, int32(-2147483648))
	f.Fuzz(func(t *testing.T, given bool, limit int32) {
		var lp *int32
		if given {
			lp = &limit
		}
		got, err := pageLimit(lp, DefaultLimit)
		switch {
		case !given:
			require.NoError(t, err)
			require.Equal(t, DefaultLimit, got)
		case limit >= 1 && limit <= MaxLimit:
			require.NoError(t, err)
			require.Equal(t, int(limit), got)
		default:
			require.Equal(t, []string{"limit"}, fields(t, err))
		}
	})
}

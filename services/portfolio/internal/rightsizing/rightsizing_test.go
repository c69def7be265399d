package rightsizing_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
)

func questions(n int) []string {
	qs := make([]string, n)
	for i := range qs {
		qs[i] = fmt.Sprintf("q%d?", i+1)
	}
	return qs
}

func TestSignals(t *testing.T) {
	t.Parallel()
	items := []rightsizing.Item{
		{ID: "big", Name: "Rewrite billing", OpenQuestions: questions(12)},
		{ID: "tasks", Name: "Observability", TaskCount: 9, InProgress: true},
		{ID: "nine-q", Name: "Telemetry", OpenQuestions: questions(9)},
		{ID: "small", Name: "Tweak colors", InProgress: true},
		{ID: "idle", Name: "Someday maybe"},
		{ID: "cache-a", Name: "Cache invoices", Description: "cache invoice rendering results in redis", Score: 2},
		{ID: "cache-b", Name: "Cache invoices", Description: "cache invoice rendering results in redis quickly", Score: 3},
	}
	r := rightsizing.Analyze(items)
	byID := map[string]rightsizing.Signals{}
	for _, s := range r.Signals {
		byID[s.IdeaID] = s
	}
	require.True(t, byID["big"].TooLarge, "12 open questions")
	require.True(t, byID["tasks"].TooLarge, "9 tasks")
	require.False(t, byID["nine-q"].TooLarge, "9 questions is below the threshold")
	require.True(t, byID["small"].TooSmall)
	require.False(t, byID["tasks"].TooSmall, "it has tasks")
	require.False(t, byID["idle"].TooSmall, "not in progress")
	require.Equal(t, []string{"cache-b"}, byID["cache-a"].OverlapWith)
	require.Equal(t, []string{"cache-a"}, byID["cache-b"].OverlapWith)
	require.Equal(t, rightsizing.Health{Total: 7, TooLarge: 2, TooSmall: 1, Overlap: 2, Healthy: 2, Suggestions: 3}, r.Health)

	require.Len(t, r.Suggestions, 3)
	var merge, split rightsizing.Suggestion
	for _, s := range r.Suggestions {
		switch {
		case s.Type == rightsizing.Merge:
			merge = s
		case s.IdeaID == "big":
			split = s
		}
	}
	require.Equal(t, "cache-b", merge.IdeaID, "the higher score keeps")
	require.Equal(t, "cache-a", merge.OverlapWithID)
	require.GreaterOrEqual(t, merge.Confidence, rightsizing.OverlapSimilarity)
	require.InDelta(t, 0.6, split.Confidence, 1e-9, "excess 2 → 0.5 + 0.1")
	require.Len(t, split.Children, 3, "12 questions in groups of 5: 5, 5, 2")
	require.Equal(t, "Rewrite billing (part 3)", split.Children[2].Name)
	require.Equal(t, "Answers: q11? / q12?", split.Children[2].Description)
	for i := 1; i < len(r.Suggestions); i++ {
		require.GreaterOrEqual(t, r.Suggestions[i-1].Confidence, r.Suggestions[i].Confidence, "ordered by confidence")
	}
}

func TestSplitConfidence(t *testing.T) {
	t.Parallel()
	for excess, want := range map[int]float64{0: 0.5, 1: 0.55, 5: 0.75, 10: 1, 40: 1} {
		require.InDelta(t, want, rightsizing.SplitConfidence(excess), 1e-9, "excess %d", excess)
	}
}

func TestProposeChildrenByTasksAlone(t *testing.T) {
	t.Parallel()
	got := rightsizing.ProposeChildren(rightsizing.Item{Name: "Ops", TaskCount: 12})
	require.Equal(t, []string{"Ops (part 1)", "Ops (part 2)"}, []string{got[0].Name, got[1].Name})
	capped := rightsizing.ProposeChildren(rightsizing.Item{Name: "X", OpenQuestions: questions(40)})
	require.Len(t, capped, 5, "at most five children")
	require.Contains(t, capped[4].Description, "q40?", "the last child takes the rest")
}

// TestShares: a split's shares are exact to the micro-unit, add up to
// the amount, and print as short decimals (a third of 0.6 is 0.2, not
// 0.19999999999999998).
func TestShares(t *testing.T) {
	t.Parallel()
	require.Equal(t, []float64{0.2, 0.2, 0.2}, rightsizing.Shares(0.6, 3))
	require.Equal(t, []float64{3.333334, 3.333333, 3.333333}, rightsizing.Shares(10, 3), "the odd micro-unit to the first")
	require.Equal(t, []float64{50, 50}, rightsizing.Shares(100, 2))
	require.Equal(t, []float64{0, 0}, rightsizing.Shares(0, 2))
	require.Nil(t, rightsizing.Shares(1, 0))
	var sum float64
	for _, s := range rightsizing.Shares(0.7, 6) {
		sum += s * 1e6
	}
	require.Equal(t, 700_000.0, math.Round(sum))
}

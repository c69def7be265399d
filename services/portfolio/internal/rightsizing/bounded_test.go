package rightsizing_test

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
)

// nearDuplicates are n ideas that all say the same thing (one number
// apart), the shape a flood of copy-pasted ideas takes.
func nearDuplicates(n int) []rightsizing.Item {
	items := make([]rightsizing.Item, n)
	for i := range items {
		items[i] = rightsizing.Item{
			ID:          fmt.Sprintf("idea-%05d", i),
			Name:        "Cache invoice totals in the billing service",
			Description: fmt.Sprintf("Keep computed invoice totals in a cache so billing pages load faster, variant %d", i),
			Score:       float64(i % 97),
		}
	}
	return items
}

// maxAnalyzeBytes bounds what analysing 5 000 near-duplicates may
// allocate in all. Comparing every pair made 12.5 million overlaps and as
// many merge suggestions: gigabytes.
const maxAnalyzeBytes = 256 << 20

// TestAnalyzeIsBoundedForNearDuplicates is not parallel: it measures the
// process's allocations, which other tests running at once would inflate.
func TestAnalyzeIsBoundedForNearDuplicates(t *testing.T) {
	items := nearDuplicates(5000)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := rightsizing.Analyze(items)
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc

	require.Less(t, allocated, uint64(maxAnalyzeBytes), "allocated %d MiB", allocated>>20)
	require.Len(t, r.Suggestions, rightsizing.DefaultLimits.MaxSuggestions, "at most the cap, the most confident")
	require.Greater(t, r.Health.Suggestions, len(r.Suggestions), "the count says how many were found")
	require.Equal(t, 5000, r.Health.Overlap, "every idea is flagged as overlapping")
	for i := 1; i < len(r.Suggestions); i++ {
		a, b := r.Suggestions[i-1], r.Suggestions[i]
		require.True(t, a.Confidence > b.Confidence || (a.Confidence == b.Confidence && a.IdeaID <= b.IdeaID),
			"ranked: %v before %v", a, b)
	}
	for _, s := range r.Signals {
		require.LessOrEqual(t, len(s.OverlapWith), rightsizing.DefaultLimits.CandidatesPerIdea, s.IdeaID)
	}
}

func TestAnalyzeWithinSmallLimits(t *testing.T) {
	t.Parallel()
	r := rightsizing.AnalyzeWithin(nearDuplicates(30), rightsizing.Limits{CandidatesPerIdea: 3, MaxSuggestions: 5})
	require.Len(t, r.Suggestions, 5)
	for _, s := range r.Signals {
		require.LessOrEqual(t, len(s.OverlapWith), 3)
		require.NotEmpty(t, s.OverlapWith, "a near-duplicate still finds its duplicates")
	}
	// No pair is suggested twice.
	seen := map[string]bool{}
	for _, s := range r.Suggestions {
		key := s.IdeaID + "|" + s.OverlapWithID
		require.False(t, seen[key], key)
		seen[key] = true
	}
}

// BenchmarkAnalyzeNearDuplicates measures right-sizing over n
// near-identical ideas (the worst case for overlap detection).
//
//	go test ./services/portfolio/internal/rightsizing -run '^$' -bench AnalyzeNearDuplicates -benchmem
func BenchmarkAnalyzeNearDuplicates(b *testing.B) {
	for _, n := range []int{1000, 5000} {
		b.Run(fmt.Sprintf("ideas=%d", n), func(b *testing.B) {
			items := nearDuplicates(n)
			b.ReportAllocs()
			for b.Loop() {
				_ = rightsizing.Analyze(items)
			}
		})
	}
}

// TestOverlapIsMutualUnderTheCandidateCap: with one candidate per idea,
// "p" spends its candidate on "q" (their shared term is the rarest, first
// by name) and never compares itself with "r", while "r" finds "p" through
// its own rarest shared term. The overlap is still reported on both sides:
// an idea another one overlaps is never counted healthy.
func TestOverlapIsMutualUnderTheCandidateCap(t *testing.T) {
	t.Parallel()
	items := []rightsizing.Item{
		{ID: "p", Name: "aardvark banana cherry", Description: "damson elder fig"},
		{ID: "q", Name: "aardvark kiwi lemon", Description: "mango"},
		{ID: "r", Name: "banana cherry damson", Description: "elder fig grape"},
	}
	r := rightsizing.AnalyzeWithin(items, rightsizing.Limits{CandidatesPerIdea: 1, MaxSuggestions: 10})

	got := map[string][]string{}
	for _, s := range r.Signals {
		got[s.IdeaID] = s.OverlapWith
	}
	require.Equal(t, map[string][]string{"p": {"r"}, "q": nil, "r": {"p"}}, got)
	require.Equal(t, 2, r.Health.Overlap, "both sides of the pair overlap")
	require.Equal(t, 1, r.Health.Healthy, "only q is healthy")
	require.Len(t, r.Suggestions, 1, "the pair is suggested once")
	require.Equal(t, rightsizing.Merge, r.Suggestions[0].Type)
}

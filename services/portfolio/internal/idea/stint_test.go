package idea_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

func secs(v ...int) []time.Duration {
	out := make([]time.Duration, len(v))
	for k, s := range v {
		out[k] = time.Duration(s) * time.Second
	}
	return out
}

func TestMedianAndNearestRank(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		sorted      []time.Duration
		median, p90 time.Duration
	}{
		{"none", nil, 0, 0},
		{"one", secs(7), 7 * time.Second, 7 * time.Second},
		{"two: the mean of both; p90 the larger", secs(10, 20), 15 * time.Second, 20 * time.Second},
		{"odd count: the middle one", secs(1, 2, 30), 2 * time.Second, 30 * time.Second},
		{"even count, a half second mean", secs(1, 2, 3, 4), 2500 * time.Millisecond, 4 * time.Second},
		// rank ⌈0.9 · 10⌉ = 9, where floating point would give 9.000…01 → 10.
		{"ten: p90 is the ninth", secs(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 5500 * time.Millisecond, 9 * time.Second},
		{"eleven: p90 is the tenth", secs(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), 6 * time.Second, 10 * time.Second},
		{"twenty: p90 is the eighteenth", secs(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20),
			10500 * time.Millisecond, 18 * time.Second},
		{"ties", secs(3, 3, 3, 3), 3 * time.Second, 3 * time.Second},
		{"microseconds halve exactly", []time.Duration{time.Microsecond, 2 * time.Microsecond}, 1500 * time.Nanosecond, 2 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.median, idea.Median(tc.sorted))
			require.Equal(t, tc.p90, idea.NearestRank(tc.sorted, 90))
		})
	}
	all := secs(1, 2, 3)
	require.Equal(t, time.Second, idea.NearestRank(all, 1), "the smallest rank is 1")
	require.Equal(t, 3*time.Second, idea.NearestRank(all, 100))
	require.Equal(t, time.Second, idea.NearestRank(all, 0), "below 1 counts as 1")
	require.Equal(t, 3*time.Second, idea.NearestRank(all, 150), "above 100 counts as 100")
}

// TestNearestRankIsTheDefinition checks NearestRank against the
// definition: a value of the list with at least pct% of the values at or
// below it, and less than pct% strictly below it.
func TestNearestRankIsTheDefinition(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		d := rapid.SliceOfN(rapid.Int64Range(0, 1e6), 1, 200).Draw(t, "us")
		pct := rapid.IntRange(1, 100).Draw(t, "pct")
		sorted := make([]time.Duration, len(d))
		for k, v := range d {
			sorted[k] = time.Duration(v) * time.Microsecond
		}
		slices.Sort(sorted)
		got := idea.NearestRank(sorted, pct)
		require.Contains(t, sorted, got)
		atOrBelow, below := 0, 0
		for _, v := range sorted {
			if v <= got {
				atOrBelow++
			}
			if v < got {
				below++
			}
		}
		n := len(sorted)
		require.GreaterOrEqual(t, atOrBelow*100, pct*n, "at least pct%% at or below")
		require.Less(t, below*100, pct*n, "less than pct%% strictly below")

		m := idea.Median(sorted)
		require.LessOrEqual(t, sorted[0], m)
		require.LessOrEqual(t, m, sorted[n-1])
		require.LessOrEqual(t, m, idea.NearestRank(sorted, 90), "the median never exceeds the p90")
	})
}

func TestStageTimesListsEveryStageInOrder(t *testing.T) {
	t.Parallel()
	got := idea.StageTimes(map[idea.Stage][]time.Duration{
		idea.Specced: secs(40, 10, 20, 30), // out of order: sorted first
		idea.Testing: secs(5),
		"retired":    secs(1), // not a stage: ignored
	})
	require.Equal(t, []idea.StageTime{
		{Stage: idea.None},
		{Stage: idea.Specced, Stints: 4, Median: 25 * time.Second, P90: 40 * time.Second},
		{Stage: idea.Implementing},
		{Stage: idea.Testing, Stints: 1, Median: 5 * time.Second, P90: 5 * time.Second},
		{Stage: idea.Reviewing},
		{Stage: idea.Complete},
	}, got)

	in := secs(3, 1, 2)
	idea.StageTimes(map[idea.Stage][]time.Duration{idea.None: in})
	require.Equal(t, secs(3, 1, 2), in, "the caller's slice is left as it was")
}

package idea

import (
	"slices"
	"time"
)

// StageTime summarises the stints ideas spent in one stage: how many, and
// their median and 90th percentile (zero when Stints is 0).
type StageTime struct {
	Stage       Stage
	Stints      int
	Median, P90 time.Duration
}

// StageTimes summarises stints (each stage's stints, in any order) for
// every stage of Stages, in pipeline order: a stage without a stint is
// listed with Stints 0, so a caller always shows the whole pipeline.
// Stints of a stage Stages does not hold are ignored.
func StageTimes(stints map[Stage][]time.Duration) []StageTime {
	out := make([]StageTime, len(Stages))
	for k, s := range Stages {
		d := stints[s]
		if !slices.IsSorted(d) {
			d = slices.Clone(d)
			slices.Sort(d)
		}
		out[k] = StageTime{Stage: s, Stints: len(d), Median: Median(d), P90: NearestRank(d, 90)}
	}
	return out
}

// Median is the middle value of sorted (ascending): for an even count,
// the mean of the two middle values. Zero when sorted is empty.
func Median(sorted []time.Duration) time.Duration {
	n := len(sorted)
	switch {
	case n == 0:
		return 0
	case n%2 == 1:
		return sorted[n/2]
	}
	a, b := sorted[n/2-1], sorted[n/2]
	// a + (b-a)/2 rather than (a+b)/2: no overflow, and sorted makes b-a
	// non-negative, so the halving rounds toward a.
	return a + (b-a)/2
}

// NearestRank is the pct-th percentile (1..100) of sorted (ascending) by
// the nearest-rank method: the value at rank ⌈pct/100 · n⌉ (1-based), so
// at least pct% of the values are at or below it and it is always one of
// them. Zero when sorted is empty. The rank is worked out in integers: in
// floating point 0.9 · n can land just above a whole number and take the
// rank after it.
func NearestRank(sorted []time.Duration, pct int) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	pct = max(1, min(pct, 100))
	rank := (pct*n + 99) / 100
	return sorted[rank-1]
}

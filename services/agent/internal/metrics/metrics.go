// Package metrics computes the pipeline's execution metrics: percentiles
// of task durations and success rates by task type, model and executor.
package metrics

import (
	"math"
	"slices"
)

// Percentile returns the p-th percentile (0..100) of values by linear
// interpolation between the closest ranks: with the values sorted, the
// rank is r = p/100 × (n−1) and the result lies between values[⌊r⌋] and
// values[⌈r⌉] in proportion to r's fraction (the "C = 1" definition, the
// one numpy and spreadsheets use by default). ok is false for no values.
func Percentile(values []float64, p float64) (float64, bool) {
	if len(values) == 0 {
		return 0, false
	}
	s := slices.Clone(values)
	slices.Sort(s)
	return PercentileSorted(s, p), true
}

// PercentileSorted is Percentile on values already in ascending order
// (at least one).
func PercentileSorted(s []float64, p float64) float64 {
	p = min(max(p, 0), 100)
	r := p / 100 * float64(len(s)-1)
	lo := int(math.Floor(r))
	hi := int(math.Ceil(r))
	if lo == hi {
		return s[lo]
	}
	return s[lo] + (s[hi]-s[lo])*(r-float64(lo))
}

// Outcome is one finished task for success rates.
type Outcome struct {
	TaskType  string
	Model     string
	Executor  string
	Succeeded bool
}

// Rate is a success rate over a group of finished tasks.
type Rate struct {
	Key       string
	Completed int
	Failed    int
}

// Total is the number of finished tasks in the group.
func (r Rate) Total() int { return r.Completed + r.Failed }

// Value is completed / total (0 for no tasks).
func (r Rate) Value() float64 {
	if r.Total() == 0 {
		return 0
	}
	return float64(r.Completed) / float64(r.Total())
}

// Rates groups outcomes by key and returns the rates ordered by key, so
// answers are stable.
func Rates(outcomes []Outcome, key func(Outcome) string) []Rate {
	byKey := map[string]*Rate{}
	for _, o := range outcomes {
		k := key(o)
		r, ok := byKey[k]
		if !ok {
			r = &Rate{Key: k}
			byKey[k] = r
		}
		if o.Succeeded {
			r.Completed++
		} else {
			r.Failed++
		}
	}
	out := make([]Rate, 0, len(byKey))
	for _, r := range byKey {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b Rate) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return out
}

// Package abtest chooses prompt variants by Thompson sampling and reports
// their ROI. Randomness comes from an injected, seedable source, so the
// choice is reproducible in tests.
package abtest

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// The rules' constants.
const (
	// ExploreBelow: a variant with fewer samples gets exploration priority.
	ExploreBelow = 5
	// BlockAfter: a variant whose first BlockAfter outcomes are all zero is
	// blocked: chosen no more, but for one probe after a cool-off.
	BlockAfter = 3
	// DefaultCoolOff is how long a blocked variant waits for its probe.
	DefaultCoolOff = 24 * time.Hour
)

// Probe is where a blocked variant's one re-probe stands.
type Probe string

// The probe's states.
const (
	// NotProbed: blocked, its probe not yet made.
	NotProbed Probe = ""
	// Probing: a task was given the variant as its probe; its outcome
	// decides.
	Probing Probe = "probing"
	// ProbeFailed: the probe's outcome was zero too: blocked for good.
	ProbeFailed Probe = "failed"
	// ProbePassed: the probe's outcome was not zero: the variant is
	// chosen as any other again.
	ProbePassed Probe = "passed"
)

// Arm is one variant's record.
type Arm struct {
	Variant string
	// Samples is the number of outcomes recorded.
	Samples int
	// SumValue and SumCost total the outcomes' value_score and
	// resource_cost, to six decimals (Record).
	SumValue float64
	SumCost  float64
	// FirstZeros counts how many of the first BlockAfter outcomes had a
	// value of zero (only the first BlockAfter outcomes count).
	FirstZeros int
	// BlockedAt is when the outcome that blocked the arm was recorded;
	// Probe is where its re-probe stands.
	BlockedAt time.Time
	Probe     Probe
}

// Record adds one outcome, recorded at at, to the arm. The outcome of a
// probe decides it.
func (a *Arm) Record(value, cost float64, at time.Time) {
	if a.Samples < BlockAfter && value == 0 {
		a.FirstZeros++
		if a.FirstZeros == BlockAfter {
			a.BlockedAt = at
		}
	}
	if a.Probe == Probing {
		a.Probe = ProbeFailed
		if value > 0 {
			a.Probe = ProbePassed
		}
	}
	a.Samples++
	a.SumValue, a.SumCost = sum6(a.SumValue, value), sum6(a.SumCost, cost)
}

// sum6 adds to six decimals, the precision the API takes value scores
// and costs at: a float sum carries its addition's noise (0.1 + 0.2 is
// 0.30000000000000004), which the statistics would show and the ROI
// carry (0.15000000000000002). Past 10^15 six decimals are beyond a
// double's precision, and the sum is left as it is.
func sum6(a, b float64) float64 {
	s := a + b
	if math.Abs(s) >= 1e15 || math.IsNaN(s) {
		return s
	}
	return math.Round(s*1e6) / 1e6
}

// Blocked reports whether the arm's first BlockAfter outcomes were all
// zero and no probe has passed since.
func (a Arm) Blocked() bool { return a.FirstZeros >= BlockAfter && a.Probe != ProbePassed }

// ProbeDue reports whether a blocked arm's cool-off is over at now and
// its one probe not yet made (coolOff 0: never re-probed).
func (a Arm) ProbeDue(now time.Time, coolOff time.Duration) bool {
	return a.Blocked() && a.Probe == NotProbed && coolOff > 0 && !now.Before(a.BlockedAt.Add(coolOff))
}

// ROI is Σvalue_score / Σresource_cost; ok is false when nothing was spent.
func (a Arm) ROI() (float64, bool) {
	if a.SumCost <= 0 {
		return 0, false
	}
	return a.SumValue / a.SumCost, true
}

// successes is Σvalue clamped to what a Beta posterior can take: value
// scores are read as success probabilities in [0, 1].
func (a Arm) successes() float64 { return min(max(a.SumValue, 0), float64(a.Samples)) }

// Choice is what Select is asked: the arms, and when, for their probes.
type Choice struct {
	Arms    []Arm
	Now     time.Time
	CoolOff time.Duration
}

// Select chooses the variant for the next task: a blocked arm whose probe
// is due first (the earliest blocked; probe is then true, and the caller
// records the probe as made, Probing); else among the arms not blocked,
// one with fewer than ExploreBelow samples first (the fewest
// samples; ties by name, so exploration is round-robin); otherwise the arm
// with the highest draw of its ROI: a draw of its mean value from
// Beta(1 + Σvalue, 1 + n − Σvalue) over a draw of its mean cost from
// Gamma(1 + Σcost, 1 + n) (shape, rate), the value draw alone while it
// recorded no cost. Drawing the value alone chose a variant costing 100
// a task as often as one costing 1 for the same value. ok is false when
// every arm is blocked or there are none.
func Select(c Choice, rnd *rand.Rand) (variant string, probe, ok bool) {
	var (
		due     *Arm
		explore *Arm
		best    *Arm
		bestX   = -1.0
	)
	arms := c.Arms
	for i := range arms {
		a := &arms[i]
		if a.ProbeDue(c.Now, c.CoolOff) && (due == nil || a.BlockedAt.Before(due.BlockedAt)) {
			due = a
		}
		if a.Blocked() {
			continue
		}
		if a.Samples < ExploreBelow {
			if explore == nil || a.Samples < explore.Samples || (a.Samples == explore.Samples && a.Variant < explore.Variant) {
				explore = a
			}
			continue
		}
		s := a.successes()
		x := Beta(rnd, 1+s, 1+float64(a.Samples)-s)
		if a.SumCost > 0 {
			x /= gamma(rnd, 1+a.SumCost) / (1 + float64(a.Samples))
		}
		if x > bestX {
			best, bestX = a, x
		}
	}
	switch {
	case due != nil:
		return due.Variant, true, true
	case explore != nil:
		return explore.Variant, false, true
	case best != nil:
		return best.Variant, false, true
	}
	return "", false, false
}

// Probabilities estimates each variant's selection probability by running
// Select draws times (probes, exploration and blocking included). Variants are
// returned in the order given.
func Probabilities(c Choice, rnd *rand.Rand, draws int) map[string]float64 {
	out := make(map[string]float64, len(c.Arms))
	for _, a := range c.Arms {
		out[a.Variant] = 0
	}
	if draws <= 0 {
		return out
	}
	counts := map[string]int{}
	for range draws {
		if v, _, ok := Select(c, rnd); ok {
			counts[v]++
		}
	}
	for v, n := range counts {
		out[v] = float64(n) / float64(draws)
	}
	return out
}

// Beta draws from Beta(a, b) for a, b ≥ 1 as X/(X+Y) with X ~ Gamma(a)
// and Y ~ Gamma(b).
func Beta(rnd *rand.Rand, a, b float64) float64 {
	x, y := gamma(rnd, a), gamma(rnd, b)
	if x+y == 0 {
		return 0.5
	}
	return x / (x + y)
}

// gamma draws from Gamma(shape, 1) for shape ≥ 1 (Marsaglia and Tsang,
// 2000); smaller shapes are boosted by U^(1/shape).
func gamma(rnd *rand.Rand, shape float64) float64 {
	if shape < 1 {
		return gamma(rnd, shape+1) * math.Pow(rnd.Float64(), 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rnd.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rnd.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// Sorted returns the arms ordered by variant name, for stable answers.
func Sorted(arms []Arm) []Arm {
	out := slices.Clone(arms)
	slices.SortFunc(out, func(a, b Arm) int {
		switch {
		case a.Variant < b.Variant:
			return -1
		case a.Variant > b.Variant:
			return 1
		}
		return 0
	})
	return out
}

package abtest_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
)

func TestExplorationFirstRoundRobin(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(1, 2))
	arms := []abtest.Arm{{Variant: "b", Samples: 2}, {Variant: "a", Samples: 2}, {Variant: "c", Samples: 9, SumValue: 9, SumCost: 1}}
	v, _, ok := abtest.Select(abtest.Choice{Arms: arms}, rnd)
	require.True(t, ok)
	require.Equal(t, "a", v, "fewest samples first, ties by name, even against a strong arm")
	arms[1].Samples = 3
	v, _, _ = abtest.Select(abtest.Choice{Arms: arms}, rnd)
	require.Equal(t, "b", v)
}

func TestBlockAfterThreeZeros(t *testing.T) {
	t.Parallel()
	var a abtest.Arm
	a.Variant = "x"
	for range 3 {
		a.Record(0, 1, t0)
	}
	require.True(t, a.Blocked())
	var b abtest.Arm
	b.Record(0, 1, t0)
	b.Record(1, 1, t0)
	b.Record(0, 1, t0)
	b.Record(0, 1, t0)
	require.False(t, b.Blocked(), "only the first three outcomes count")
	_, _, ok := abtest.Select(abtest.Choice{Arms: []abtest.Arm{a}}, rand.New(rand.NewPCG(1, 1)))
	require.False(t, ok, "every arm blocked: no choice")
	roi, ok := b.ROI()
	require.True(t, ok)
	require.InDelta(t, 0.25, roi, 1e-12)
	_, ok = abtest.Arm{}.ROI()
	require.False(t, ok)
}

func TestBetaMean(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(7, 7))
	for _, c := range []struct{ a, b float64 }{{1, 1}, {2, 5}, {30, 10}} {
		sum := 0.0
		const n = 20000
		for range n {
			x := abtest.Beta(rnd, c.a, c.b)
			require.True(t, x >= 0 && x <= 1)
			sum += x
		}
		mean := c.a / (c.a + c.b)
		require.InDelta(t, mean, sum/n, 0.01, "Beta(%v, %v)", c.a, c.b)
	}
}

// TestThompsonFindsTheBetterArm: two variants whose outcomes succeed with
// probability 0.6 and 0.4. Over 10 000 seeded rounds, recording every
// outcome, the better arm is chosen in at least 90 % of the last 1 000.
func TestThompsonFindsTheBetterArm(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 5; seed++ {
		rnd := rand.New(rand.NewPCG(seed, 99))
		world := rand.New(rand.NewPCG(seed, 100))
		arms := []abtest.Arm{{Variant: "good"}, {Variant: "bad"}}
		p := map[string]float64{"good": 0.6, "bad": 0.4}
		goodLate := 0
		for round := range 10000 {
			v, _, ok := abtest.Select(abtest.Choice{Arms: arms}, rnd)
			require.True(t, ok)
			value := 0.0
			if world.Float64() < p[v] {
				value = 1
			}
			for i := range arms {
				if arms[i].Variant == v {
					// A first run of zeros would block an arm; start each
					// with one success so the test measures sampling, not
					// the blocking rule.
					if arms[i].Samples == 0 {
						value = 1
					}
					arms[i].Record(value, 1, t0)
				}
			}
			if round >= 9000 && v == "good" {
				goodLate++
			}
		}
		require.GreaterOrEqual(t, goodLate, 900, "seed %d: better arm chosen %d of the last 1000", seed, goodLate)
	}
}

func TestProbabilities(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(3, 3))
	arms := []abtest.Arm{{Variant: "a", Samples: 100, SumValue: 90, SumCost: 100}, {Variant: "b", Samples: 100, SumValue: 10, SumCost: 100}}
	p := abtest.Probabilities(abtest.Choice{Arms: arms}, rnd, 2000)
	require.Greater(t, p["a"], 0.99)
	require.InDelta(t, 1.0, p["a"]+p["b"], 1e-9)
	p = abtest.Probabilities(abtest.Choice{Arms: []abtest.Arm{{Variant: "new"}, {Variant: "old", Samples: 50, SumValue: 50}}}, rnd, 100)
	require.Equal(t, map[string]float64{"new": 1, "old": 0}, p, "exploration takes every draw")
	require.False(t, math.IsNaN(p["old"]))
}

// TestSumsWithoutFloatNoise: 0.1 + 0.2 is 0.3 in the arm's record, and
// its ROI is the quotient of the decimals, not of their noise.
func TestSumsWithoutFloatNoise(t *testing.T) {
	t.Parallel()
	var a abtest.Arm
	a.Record(0.1, 1.9, t0)
	a.Record(0.2, 0.1, t0)
	require.Equal(t, 0.3, a.SumValue)
	require.Equal(t, 2.0, a.SumCost)
	roi, ok := a.ROI()
	require.True(t, ok)
	require.Equal(t, 0.15, roi)
}

// TestSelectionWeighsCost: two variants whose outcomes are worth the
// same, one costing 1 and the other 100 a task; over 200 tasks, the cheap
// one is chosen nearly every time once both were explored. Selection
// followed the value alone and chose them about equally.
func TestSelectionWeighsCost(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(7, 11))
	arms := []abtest.Arm{{Variant: "cheap"}, {Variant: "dear"}}
	cost := map[string]float64{"cheap": 1, "dear": 100}
	chosen := map[string]int{}
	for range 200 {
		v, _, ok := abtest.Select(abtest.Choice{Arms: arms}, rnd)
		require.True(t, ok)
		chosen[v]++
		value := 0.0
		if rnd.Float64() < 0.5 {
			value = 1
		}
		for i := range arms {
			if arms[i].Variant == v {
				arms[i].Record(value, cost[v], t0)
			}
		}
	}
	require.Greater(t, chosen["cheap"], 180, "chosen: %v", chosen)
	require.GreaterOrEqual(t, chosen["dear"], abtest.ExploreBelow, "explored first: %v", chosen)
}

var t0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

// TestABlockedVariantIsReprobedOnceAfterItsCoolOff: blocked after three
// zeros, a variant is chosen again once, as a probe, when its cool-off is
// over; a zero probe blocks it for good, a good one unblocks it.
func TestABlockedVariantIsReprobedOnceAfterItsCoolOff(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(7, 7))
	good := abtest.Arm{Variant: "good", Samples: 20, SumValue: 15}
	bad := abtest.Arm{Variant: "bad"}
	for i := range 3 {
		bad.Record(0, 1, t0.Add(time.Duration(i)*time.Minute))
	}
	require.True(t, bad.Blocked())
	require.Equal(t, t0.Add(2*time.Minute), bad.BlockedAt, "the outcome that blocked it")
	choice := func(now time.Time) abtest.Choice {
		return abtest.Choice{Arms: []abtest.Arm{good, bad}, Now: now, CoolOff: time.Hour}
	}
	for range 50 {
		v, probe, ok := abtest.Select(choice(t0.Add(time.Hour)), rnd)
		require.True(t, ok)
		require.Equal(t, "good", v, "within its cool-off the blocked variant is not chosen")
		require.False(t, probe)
	}
	v, probe, ok := abtest.Select(choice(t0.Add(time.Hour+2*time.Minute)), rnd)
	require.True(t, ok)
	require.Equal(t, "bad", v, "its cool-off over, it is probed")
	require.True(t, probe)
	p := abtest.Probabilities(choice(t0.Add(2*time.Hour)), rnd, 100)
	require.Equal(t, 1.0, p["bad"], "the next task is the probe")
	_, _, ok = abtest.Select(abtest.Choice{Arms: []abtest.Arm{bad}, Now: t0.Add(2 * time.Hour)}, rnd)
	require.False(t, ok, "no cool-off configured: never re-probed")

	failed := bad
	failed.Probe = abtest.Probing
	v, probe, _ = abtest.Select(abtest.Choice{Arms: []abtest.Arm{good, failed}, Now: t0.Add(9 * time.Hour), CoolOff: time.Hour}, rnd)
	require.Equal(t, "good", v, "one probe at a time: while it runs, none more")
	require.False(t, probe)
	failed.Record(0, 1, t0.Add(3*time.Hour))
	require.Equal(t, abtest.ProbeFailed, failed.Probe)
	require.True(t, failed.Blocked())
	require.False(t, failed.ProbeDue(t0.Add(100*time.Hour), time.Hour), "once only")

	passed := bad
	passed.Probe = abtest.Probing
	passed.Record(0.8, 1, t0.Add(3*time.Hour))
	require.Equal(t, abtest.ProbePassed, passed.Probe)
	require.False(t, passed.Blocked(), "a good probe unblocks it")
}

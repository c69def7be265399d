package usecase_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// TestStoredPromptsReachTheTask: a stored prompt of a type is what that
// type's tasks get, rendered, in their command, with its variant and
// version recorded; versions count up and keep their type; a blocked
// stored prompt is probed once after its cool-off.
func TestStoredPromptsReachTheTask(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine, func(c *usecase.Config) { c.MaxAttempts, c.CoolOff = 1, time.Hour })
		p1, err := e.app.CreatePrompt(ctx, usecase.NewPrompt{Name: "terse", Type: "impl", Text: "Do it: {{direction}} ({{idea.name}})"})
		require.NoError(t, err)
		require.Equal(t, 1, p1.Version)
		p2, err := e.app.CreatePrompt(ctx, usecase.NewPrompt{Name: "terse", Type: "impl", Text: "Now: {{direction}} ({{idea.name}})"})
		require.NoError(t, err)
		require.Equal(t, 2, p2.Version)
		_, err = e.app.CreatePrompt(ctx, usecase.NewPrompt{Name: "terse", Type: "spec", Text: "x"})
		requireKind(t, fault.Conflict, err)
		_, err = e.app.CreatePrompt(ctx, usecase.NewPrompt{Name: "terse", Type: "impl", Text: "x", Version: 2})
		requireKind(t, fault.Conflict, err)
		_, err = e.app.CreatePrompt(ctx, usecase.NewPrompt{Name: "Bad Name", Type: "impl", Text: "x"})
		requireKind(t, fault.Invalid, err)

		tk := e.create(t, "impl", map[string]any{"idea": map[string]any{"name": "Solar kettle"}})
		require.Equal(t, "terse", tk.PromptVariant)
		require.Equal(t, 2, tk.PromptVersion)
		require.Equal(t, "Now: do the impl work (Solar kettle)", tk.Prompt)
		require.Contains(t, tk.Command, "'Now: do the impl work (Solar kettle)'", "the prompt is the command's")
		spec := e.create(t, "spec", nil)
		require.Empty(t, spec.PromptVariant, "no prompt stored for spec: the built-in template, no variant")
		require.Contains(t, spec.Prompt, "Write the specification")

		list, err := e.app.Prompts(ctx, "impl")
		require.NoError(t, err)
		require.Len(t, list, 1)
		require.Equal(t, 2, list[0].Versions)
		old, err := e.app.Prompt(ctx, "terse", 1)
		require.NoError(t, err)
		require.Equal(t, p1.Text, old.Text)
		_, err = e.app.Prompt(ctx, "terse", 3)
		requireKind(t, fault.NotFound, err)

		// Three zero outcomes block it; an hour later it is probed once.
		e.run(t, tk.ID, "failed", time.Second)
		for range 2 {
			e.run(t, e.create(t, "impl", nil).ID, "failed", time.Second)
		}
		stats := func() usecase.VariantStats {
			t.Helper()
			vs, err := e.app.PromptABStats(ctx)
			require.NoError(t, err)
			for _, v := range vs {
				if v.Arm.Variant == "terse" {
					return v
				}
			}
			t.Fatal("no terse variant")
			return usecase.VariantStats{}
		}
		require.True(t, stats().Blocked)
		require.Empty(t, e.create(t, "impl", nil).PromptVariant, "blocked, within its cool-off")
		e.clock.Advance(time.Hour)
		probe := e.create(t, "impl", nil)
		require.Equal(t, "terse", probe.PromptVariant, "its cool-off over: the probe")
		require.Equal(t, abtest.Probing, stats().Arm.Probe)
		require.Empty(t, e.create(t, "impl", nil).PromptVariant, "one probe only")
		e.run(t, probe.ID, "completed", time.Second)
		require.Equal(t, abtest.ProbePassed, stats().Arm.Probe)
		require.False(t, stats().Blocked)
		require.Equal(t, "terse", e.create(t, "impl", nil).PromptVariant, "a good probe unblocks it")
	})
}

// TestTheCheaperPromptWinsOverTwoHundredTasks: two stored prompts of one
// task type, every outcome worth the same, one costing 1 and the other
// 100. The A/B weighs ROI, so once each has its exploration samples the
// cheap one is chosen for most of 200 tasks (seeded: the same count every
// run). Before the A/B drew ROI it split them evenly.
func TestTheCheaperPromptWinsOverTwoHundredTasks(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine)
		cost := map[string]float64{"cheap": 1, "dear": 100}
		for name := range cost {
			_, err := e.app.CreatePrompt(ctx, usecase.NewPrompt{Name: name, Type: "spec", Text: name + ": {{direction}}"})
			require.NoError(t, err)
		}
		chosen := map[string]int{}
		for range 200 {
			tk := e.create(t, "spec", nil)
			require.Contains(t, cost, tk.PromptVariant, "every task gets a stored prompt")
			require.Equal(t, tk.PromptVariant+": do the spec work", tk.Prompt, "the chosen prompt is the task's")
			chosen[tk.PromptVariant]++
			e.patch(t, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
			e.clock.Advance(time.Second)
			e.patch(t, tk.ID, usecase.Patch{Status: ptr("completed"), ValueScore: ptr(1.0), ResourceCost: ptr(cost[tk.PromptVariant])})
		}
		require.GreaterOrEqual(t, chosen["dear"], 5, "explored to its minimum samples")
		require.Greater(t, chosen["cheap"], 150, "chosen %v", chosen)
		require.Equal(t, 200, chosen["cheap"]+chosen["dear"])
	})
}

// TestAWorkerCannotBreakTheStatistics: value_score 1e308 reported twice
// summed to +Inf, which the stats answered as the string "Infinity" and
// which pinned the variant at probability 1. The measures are bounded
// (task.MaxMeasure): a report beyond is a 422 naming the field and its
// range, and changes nothing; at the bound the sums stay finite.
func TestAWorkerCannotBreakTheStatistics(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		ctx := context.Background()
		e := setup(t, engine)
		_, err := e.app.CreatePrompt(ctx, usecase.NewPrompt{Name: "greedy", Type: "spec", Text: "{{direction}}"})
		require.NoError(t, err)
		for _, field := range []string{"value_score", "resource_cost", "cost_usd"} {
			tk := e.create(t, "spec", nil)
			e.patch(t, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
			p := usecase.Patch{Status: ptr("completed")}
			switch field {
			case "value_score":
				p.ValueScore = ptr(1e308)
			case "resource_cost":
				p.ResourceCost = ptr(1e308)
			default:
				p.CostUSD = ptr(1e10)
			}
			_, err := e.app.Update(ctx, tk.ID, p)
			requireKind(t, fault.Invalid, err)
			require.ErrorContains(t, err, field+": must be a number from 0 to 1e+09")
			got, err := e.app.Get(ctx, tk.ID)
			require.NoError(t, err)
			require.Equal(t, "running", string(got.Status), "a refused report changes nothing")
		}
		for range 2 {
			tk := e.create(t, "spec", nil)
			e.patch(t, tk.ID, usecase.Patch{Status: ptr("running"), WorkerID: ptr("w1")})
			e.patch(t, tk.ID, usecase.Patch{Status: ptr("completed"), ValueScore: ptr(1e9), ResourceCost: ptr(1e9)})
		}
		stats, err := e.app.PromptABStats(ctx)
		require.NoError(t, err)
		var greedy usecase.VariantStats
		for _, v := range stats {
			if v.Arm.Variant == "greedy" {
				greedy = v
			}
		}
		require.Equal(t, 2e9, greedy.Arm.SumValue)
		require.False(t, math.IsInf(greedy.Arm.SumValue, 0) || math.IsInf(greedy.ROI, 0))
		require.InDelta(t, 1, greedy.ROI, 1e-9)
	})
}

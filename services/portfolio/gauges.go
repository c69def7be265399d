package portfolio

import (
	"context"

	"github.com/foundryhq/foundry/services/platform/gauges"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// stageGauges are the gauges the portfolio reads in the background
// (usecase.IdeasByStage) and /metrics reports; docs/observability.md lists
// them.
var stageGauges = []gauges.Desc{
	{Name: "foundry_portfolio_ideas", Help: "Active ideas by stage.", Labels: []string{"stage"}},
}

// stageSamples maps the ideas by stage to the gauges' values: every stage
// word of the API, in pipeline order, zeros included.
func stageSamples(byStage map[idea.Stage]int) []gauges.Sample {
	out := make([]gauges.Sample, 0, len(idea.Stages))
	for _, st := range idea.Stages {
		out = append(out, gauges.Sample{Name: "foundry_portfolio_ideas", Labels: []string{string(st)}, Value: float64(byStage[st])})
	}
	return out
}

// readGauges is the portfolio's gauge refresher's read.
func readGauges(uc *usecase.App) func(ctx context.Context) ([]gauges.Sample, error) {
	return func(ctx context.Context) ([]gauges.Sample, error) {
		byStage, err := uc.IdeasByStage(ctx)
		if err != nil {
			return nil, err
		}
		return stageSamples(byStage), nil
	}
}

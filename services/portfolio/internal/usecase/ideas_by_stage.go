package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

// IdeasByStage counts the active ideas of each stage, every stage present
// (zeros included), from the counts every idea write keeps (one row per
// stage, whatever the portfolio's size): what /metrics reports, read in
// the background every interval, never per scrape.
func (a *App) IdeasByStage(ctx context.Context) (map[idea.Stage]int, error) {
	got, err := a.read().Ideas.StageTotals(ctx)
	if err != nil {
		return nil, wrap("count the ideas by stage", err)
	}
	out := make(map[idea.Stage]int, len(idea.Stages))
	for _, st := range idea.Stages {
		out[st] = got[st]
	}
	return out, nil
}

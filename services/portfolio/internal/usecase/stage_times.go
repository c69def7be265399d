package usecase

import (
	"context"
	"time"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

// Stage-times window bounds, in days.
const (
	DefaultStageTimeDays = 90
	MaxStageTimeDays     = 365
)

// StageTimesResult is how long ideas stayed in each stage, over the stints
// that ended in the window [Since, now].
type StageTimesResult struct {
	// Stages has every stage, in pipeline order (idea.StageTimes).
	Stages []idea.StageTime
	Since  time.Time
	Days   int
}

// StageTimes summarises the stints ideas spent in each stage that ended
// in the last days days (DefaultStageTimeDays when nil, else
// 1..MaxStageTimeDays): a stint ends when an idea leaves the stage, and a
// stint whose start is unknown (after a "migrated" change) is left out.
func (a *App) StageTimes(ctx context.Context, days *int32) (StageTimesResult, error) {
	d := DefaultStageTimeDays
	if days != nil {
		if *days < 1 || *days > MaxStageTimeDays {
			return StageTimesResult{}, fault.Validation(fault.Field("days", "must be between 1 and %d", MaxStageTimeDays))
		}
		d = int(*days)
	}
	since := a.now().Add(-time.Duration(d) * 24 * time.Hour)
	stints, err := a.read().Ideas.Stints(ctx, since)
	if err != nil {
		return StageTimesResult{}, wrap("stage times", err)
	}
	return StageTimesResult{Stages: idea.StageTimes(stints), Since: since, Days: d}, nil
}

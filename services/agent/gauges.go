package agent

import (
	"context"

	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/gauges"
)

// queueGauges are the gauges the agent reads in the background
// (usecase.Gauges) and /metrics reports; docs/observability.md lists them.
var queueGauges = []gauges.Desc{
	{Name: "foundry_agent_tasks", Help: "Tasks by status, from the status counters.", Labels: []string{"status"}},
	{Name: "foundry_agent_oldest_pending_age_seconds",
		Help: "How long the longest-waiting pending task has waited, as of the last read; 0 when none is pending."},
	{Name: "foundry_agent_outbox_backlog", Help: "Idea advancements completed tasks owe the portfolio, not delivered yet."},
	{Name: "foundry_agent_outbox_oldest_age_seconds",
		Help: "How long the oldest undelivered idea advancement has waited, as of the last read; 0 when none waits."},
}

// queueSamples maps the queue's readings to the gauges' values: every
// status word of the API, in its order, zeros included.
func queueSamples(g usecase.QueueGauges) []gauges.Sample {
	out := make([]gauges.Sample, 0, len(task.Statuses)+3)
	for _, s := range task.Statuses {
		out = append(out, gauges.Sample{Name: "foundry_agent_tasks", Labels: []string{string(s)}, Value: float64(g.Counts.ByStatus[s])})
	}
	return append(out,
		gauges.Sample{Name: "foundry_agent_oldest_pending_age_seconds", Value: gauges.Age(g.At, g.OldestPending)},
		gauges.Sample{Name: "foundry_agent_outbox_backlog", Value: float64(g.Outbox.Items)},
		gauges.Sample{Name: "foundry_agent_outbox_oldest_age_seconds", Value: gauges.Age(g.At, g.Outbox.Oldest)},
	)
}

// readGauges is the agent's gauge refresher's read.
func readGauges(uc *usecase.App) func(ctx context.Context) ([]gauges.Sample, error) {
	return func(ctx context.Context) ([]gauges.Sample, error) {
		g, err := uc.Gauges(ctx)
		if err != nil {
			return nil, err
		}
		return queueSamples(g), nil
	}
}

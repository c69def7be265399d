package agent

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/gauges"
)

func TestQueueSamples(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	declared := map[string]bool{}
	for _, d := range queueGauges {
		declared[d.Name] = true
	}
	g := usecase.QueueGauges{At: at,
		Counts: usecase.Counts{Total: 5, ByStatus: map[task.Status]int{
			task.Pending: 3, task.Running: 1, task.Completed: 1, task.Failed: 0, task.TimedOut: 0, task.NeedsDecision: 0}},
		OldestPending: at.Add(-90 * time.Second),
		Outbox:        store.OutboxBacklog{Items: 2, Oldest: at.Add(-2 * time.Minute)},
	}
	samples := queueSamples(g)
	got := map[string]float64{}
	var statuses []string
	for _, s := range samples {
		require.True(t, declared[s.Name], "%s is declared", s.Name)
		k := s.Name
		if len(s.Labels) > 0 {
			k += "{" + s.Labels[0] + "}"
			statuses = append(statuses, s.Labels[0])
		}
		got[k] = s.Value
	}
	require.Equal(t, []string{"pending", "running", "completed", "failed", "timed_out", "needs_decision", "discarded", "cancelled"}, statuses,
		"every status word, in the API's order")
	require.Equal(t, map[string]float64{
		"foundry_agent_tasks{pending}": 3, "foundry_agent_tasks{running}": 1, "foundry_agent_tasks{completed}": 1,
		"foundry_agent_tasks{failed}": 0, "foundry_agent_tasks{timed_out}": 0, "foundry_agent_tasks{needs_decision}": 0,
		"foundry_agent_tasks{discarded}": 0, "foundry_agent_tasks{cancelled}": 0,
		"foundry_agent_oldest_pending_age_seconds": 90,
		"foundry_agent_outbox_backlog":             2,
		"foundry_agent_outbox_oldest_age_seconds":  120,
	}, got)

	idle := map[string]float64{}
	for _, s := range queueSamples(usecase.QueueGauges{At: at, Counts: usecase.Counts{ByStatus: map[task.Status]int{}}}) {
		idle[s.Name] += s.Value
	}
	require.Equal(t, map[string]float64{"foundry_agent_tasks": 0, "foundry_agent_oldest_pending_age_seconds": 0,
		"foundry_agent_outbox_backlog": 0, "foundry_agent_outbox_oldest_age_seconds": 0}, idle, "nothing waits: ages are 0")
	require.Zero(t, gauges.Age(at, at.Add(time.Second)), "a clock a little ahead never makes an age negative")
}

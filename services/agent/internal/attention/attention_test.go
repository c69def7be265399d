package attention_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/attention"
)

var now = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func TestJudge(t *testing.T) {
	t.Parallel()
	c := attention.Defaults
	for _, tc := range []struct {
		name  string
		q     attention.Queue
		names []string
	}{
		{"empty queue", attention.Queue{}, []string{}},
		{"pending 11 min, nothing running", attention.Queue{Pending: 2, OldestPending: now.Add(-11 * time.Minute)}, []string{"stuck"}},
		{"pending exactly 10 min", attention.Queue{Pending: 1, OldestPending: now.Add(-10 * time.Minute)}, []string{}},
		{"pending long but one running", attention.Queue{Pending: 1, Running: 1, OldestPending: now.Add(-time.Hour)}, []string{}},
		{"three failures in a row", attention.Queue{LastFinished: []bool{true, true, true}}, []string{"repeated_failures"}},
		{"two failures then a success", attention.Queue{LastFinished: []bool{true, true, false}}, []string{}},
		{"only two finished", attention.Queue{LastFinished: []bool{true, true}}, []string{}},
		{"7 of 10 succeeded", attention.Queue{WindowCompleted: 7, WindowFailed: 3}, []string{"low_success_rate"}},
		{"8 of 10 succeeded", attention.Queue{WindowCompleted: 8, WindowFailed: 2}, []string{}},
		{"too few tasks", attention.Queue{WindowCompleted: 1, WindowFailed: 8}, []string{}},
		{"everything at once", attention.Queue{Pending: 1, OldestPending: now.Add(-time.Hour),
			LastFinished: []bool{true, true, true}, WindowFailed: 10}, []string{"stuck", "repeated_failures", "low_success_rate"}},
	} {
		f := attention.Judge(c, tc.q, now)
		require.Equal(t, tc.names, f.Names, tc.name)
		require.Equal(t, len(tc.names) > 0 && tc.names[0] == "stuck", f.Stuck, tc.name)
	}
	f := attention.Judge(c, attention.Queue{Pending: 1, OldestPending: now.Add(-90 * time.Second)}, now)
	require.Equal(t, 90*time.Second, f.LongestWait)
	c.FailureStreak = 2
	require.True(t, attention.Judge(c, attention.Queue{LastFinished: []bool{true, true}}, now).RepeatedFailures, "configurable")
}

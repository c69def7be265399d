package task_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/task"
)

func TestRetriesDoubleUpToTheCapWithJitter(t *testing.T) {
	t.Parallel()
	p := task.RetryPolicy{MaxAttempts: 6, Backoff: 10 * time.Second, MaxBackoff: 35 * time.Second}
	for _, c := range []struct {
		attempt int
		want    time.Duration
	}{{1, 10 * time.Second}, {2, 20 * time.Second}, {3, 35 * time.Second}, {5, 35 * time.Second}} {
		d, ok := p.Retries(c.attempt, p.MaxAttempts, 0.5)
		require.True(t, ok, "attempt %d of 6", c.attempt)
		require.Equal(t, c.want, d, "attempt %d without jitter", c.attempt)
	}
	low, _ := p.Retries(1, 6, 0)
	high, _ := p.Retries(1, 6, 0.999999)
	require.Equal(t, 7500*time.Millisecond, low, "a quarter less at the lowest draw")
	require.InDelta(t, float64(12500*time.Millisecond), float64(high), float64(time.Millisecond), "a quarter more at the highest")

	_, ok := p.Retries(6, 6, 0.5)
	require.False(t, ok, "the last attempt's failure is not retried")
	_, ok = p.Retries(6, 7, 0.5)
	require.True(t, ok, "a task an operator gave one more attempt is judged by its own count")
}

func TestParsePolicies(t *testing.T) {
	t.Parallel()
	p, err := task.ParsePolicies(task.DefaultRetry, " impl=5:1m:1h, review=1 ,")
	require.NoError(t, err)
	require.Equal(t, task.RetryPolicy{MaxAttempts: 5, Backoff: time.Minute, MaxBackoff: time.Hour}, p.Of(task.Impl))
	require.Equal(t, task.RetryPolicy{MaxAttempts: 1, Backoff: 30 * time.Second, MaxBackoff: 10 * time.Minute}, p.Of(task.Review))
	require.Equal(t, task.DefaultRetry, p.Of(task.Spec), "an unnamed type has the default")

	for _, bad := range []string{"impl", "nope=3", "impl=x", "impl=0", "impl=101", "impl=3:1m:10s", "impl=3:soon", "impl=1:1s:2s:3s"} {
		_, err := task.ParsePolicies(task.DefaultRetry, bad)
		require.Error(t, err, bad)
	}
	_, err = task.ParsePolicies(task.RetryPolicy{}, "")
	require.Error(t, err, "a default with no attempts")
}

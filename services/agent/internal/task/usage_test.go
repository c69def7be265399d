package task_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/agent/internal/task"
)

func TestEstimate(t *testing.T) {
	t.Parallel()
	usd, ok := task.DefaultPrices.Estimate("claude-sonnet-4-5", 12000, 3000)
	require.True(t, ok)
	require.Equal(t, 0.081, usd, "12k in at $3/M and 3k out at $15/M")
	usd, ok = task.DefaultPrices.Estimate("gpt-5-mini", 1, 1)
	require.True(t, ok)
	require.Equal(t, 0.000002, usd, "to the micro-dollar")
	_, ok = task.DefaultPrices.Estimate("llama-local", 1000, 1000)
	require.False(t, ok, "no price, no estimate")
}

func TestParsePrices(t *testing.T) {
	t.Parallel()
	p, err := task.ParsePrices(task.DefaultPrices, " llama-local=0:0 , claude-opus-4-1=10:50,")
	require.NoError(t, err)
	require.Equal(t, task.Price{}, p["llama-local"])
	require.Equal(t, task.Price{In: 10, Out: 50}, p["claude-opus-4-1"], "a setting replaces the default")
	require.Equal(t, task.Price{In: 3, Out: 15}, p["claude-sonnet-4-5"], "the rest stay")
	require.Equal(t, task.Price{In: 15, Out: 75}, task.DefaultPrices["claude-opus-4-1"], "the defaults are not changed")
	for _, bad := range []string{"m", "m=1", "=1:2", "m=x:1", "m=-1:1", "m=1:2000000"} {
		_, err := task.ParsePrices(task.DefaultPrices, bad)
		require.Error(t, err, bad)
	}
}

package usage_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func ptr(f float64) *float64 { return &f }

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestFamilyOf(t *testing.T) {
	t.Parallel()
	for provider, want := range map[string]string{
		"openai": usage.OpenAI, "openai-codex": usage.OpenAI, "OpenAI_Codex": usage.OpenAI, "codex": usage.OpenAI,
		"chatgpt-plus": usage.OpenAI, "claude": usage.Claude, "claude-code": usage.Claude, "Claude_Code": usage.Claude,
		"anthropic": usage.Claude, "gpt-5-codex": usage.OpenAI, "claude-opus-4-1": usage.Claude,
	} {
		got, ok := usage.FamilyOf(provider)
		require.True(t, ok, provider)
		require.Equal(t, want, got, "family of %q", provider)
	}
	padded, ok := usage.FamilyOf("  Claude\t")
	require.True(t, ok)
	require.Equal(t, usage.Claude, padded, "names are trimmed")
	for _, provider := range []string{"", "gemini", "openaix", "claudette", "my-openai"} {
		_, ok := usage.FamilyOf(provider)
		require.False(t, ok, "%q has no family", provider)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	ok := []usage.Metric{{Name: "tokens", Value: 1, Limit: ptr(10)}}
	family, err := usage.Validate("claude-code", ok)
	require.NoError(t, err)
	require.Equal(t, usage.Claude, family)

	tests := []struct {
		name     string
		provider string
		metrics  []usage.Metric
		field    string
	}{
		{"no provider", "", ok, "provider"},
		{"unknown family", "gemini", ok, "provider"},
		{"long provider", "openai-" + strings.Repeat("x", 60), ok, "provider"},
		{"no metrics", "openai", nil, "metrics"},
		{"unnamed metric", "openai", []usage.Metric{{Value: 1}}, "metrics[0].name"},
		{"negative value", "openai", []usage.Metric{{Name: "a", Value: -1}}, "metrics[0].value"},
		{"infinite limit", "openai", []usage.Metric{{Name: "a", Limit: ptr(math.Inf(1))}}, "metrics[0].limit"},
		{"duplicate name", "openai", []usage.Metric{{Name: "a"}, {Name: "a"}}, "metrics[1].name"},
		{"long unit", "openai", []usage.Metric{{Name: "a", Unit: strings.Repeat("u", 33)}}, "metrics[0].unit"},
	}
	for _, tc := range tests {
		_, err := usage.Validate(tc.provider, tc.metrics)
		fe, isFault := fault.As(err)
		require.True(t, isFault, tc.name)
		require.Equal(t, fault.Invalid, fe.Kind, tc.name)
		require.Equal(t, tc.field, fe.Fields[0].Field, tc.name)
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		snapshots  []usage.Snapshot
		wantMetric string
		wantLeft   float64
	}{
		{
			name: "a summary metric wins even when the primary metric is absent",
			snapshots: []usage.Snapshot{{Provider: "openai", CollectedAt: t0, Metrics: []usage.Metric{
				{Name: "requests_today", Value: 5}, // no limit: bears no quota
				{Name: "monthly_tokens", Value: 300, Limit: ptr(1000), IsSummary: true},
			}}},
			wantMetric: "monthly_tokens", wantLeft: 700,
		},
		{
			name: "a summary metric beats a tighter primary metric",
			snapshots: []usage.Snapshot{{Provider: "openai", CollectedAt: t0, Metrics: []usage.Metric{
				{Name: "gpt_requests", Value: 99, Limit: ptr(100)},
				{Name: "monthly_tokens", Value: 300, Limit: ptr(1000), IsSummary: true},
			}}},
			wantMetric: "monthly_tokens", wantLeft: 700,
		},
		{
			name: "without a summary, the primary metric with a limit",
			snapshots: []usage.Snapshot{{Provider: "claude", CollectedAt: t0, Metrics: []usage.Metric{
				{Name: "messages", Value: 10, Limit: ptr(50)},
			}}},
			wantMetric: "messages", wantLeft: 40,
		},
		{
			name: "among summaries across variants, the one running out first",
			snapshots: []usage.Snapshot{
				{Provider: "claude", CollectedAt: t0, Metrics: []usage.Metric{{Name: "weekly", Value: 10, Limit: ptr(100), IsSummary: true}}},
				{Provider: "claude-code", CollectedAt: t0, Metrics: []usage.Metric{{Name: "weekly_code", Value: 80, Limit: ptr(100), IsSummary: true}}},
			},
			wantMetric: "weekly_code", wantLeft: 20,
		},
		{
			name: "overuse leaves zero, not a negative remainder",
			snapshots: []usage.Snapshot{{Provider: "openai", CollectedAt: t0, Metrics: []usage.Metric{
				{Name: "monthly_usd", Value: 120, Limit: ptr(100), IsSummary: true},
			}}},
			wantMetric: "monthly_usd", wantLeft: 0,
		},
	}
	for _, tc := range tests {
		q, ok := usage.Select(tc.snapshots)
		require.True(t, ok, tc.name)
		require.Equal(t, tc.wantMetric, q.Metric.Name, tc.name)
		require.Equal(t, tc.wantLeft, q.Remaining(), tc.name)
	}

	_, ok := usage.Select([]usage.Snapshot{{Provider: "openai", Metrics: []usage.Metric{{Name: "requests", Value: 3}}}})
	require.False(t, ok, "no metric with a limit: no quota")
}

func TestOverview(t *testing.T) {
	t.Parallel()
	summary := func(provider, name string, used, limit float64, at time.Time) usage.Snapshot {
		return usage.Snapshot{Provider: provider, CollectedAt: at, Metrics: []usage.Metric{{Name: name, Value: used, Limit: ptr(limit), IsSummary: true}}}
	}

	t.Run("variants coalesce into two rows", func(t *testing.T) {
		t.Parallel()
		rows, source := usage.Overview(usage.Input{Stored: []usage.Snapshot{
			summary("openai", "tokens", 10, 100, t0),
			summary("openai-codex", "codex_tokens", 50, 100, t0.Add(time.Minute)),
			summary("claude-code", "weekly", 5, 10, t0),
		}})
		require.Equal(t, usage.SourceSnapshot, source)
		require.Len(t, rows, 2)
		require.Equal(t, usage.OpenAI, rows[0].Family)
		require.Equal(t, []string{"openai", "openai-codex"}, rows[0].Variants)
		require.Equal(t, 50.0, rows[0].Quota.Remaining())
		require.Equal(t, t0.Add(time.Minute), rows[0].CollectedAt)
		require.Equal(t, usage.Claude, rows[1].Family)
		require.Equal(t, []string{"claude-code"}, rows[1].Variants)
		require.Equal(t, usage.SourceSnapshot, rows[1].Source)
	})

	t.Run("no data at all", func(t *testing.T) {
		t.Parallel()
		rows, source := usage.Overview(usage.Input{})
		require.Equal(t, usage.SourceNone, source)
		require.Len(t, rows, 2)
		for _, r := range rows {
			require.Nil(t, r.Quota)
			require.Equal(t, usage.SourceNone, r.Source)
			require.Empty(t, r.Variants)
			require.Empty(t, r.Alerts)
		}
	})

	t.Run("live data replaces the stored snapshots of its family", func(t *testing.T) {
		t.Parallel()
		rows, source := usage.Overview(usage.Input{
			Live:   map[string][]usage.Snapshot{usage.OpenAI: {summary("openai", "tokens", 90, 100, t0.Add(time.Hour))}},
			Stored: []usage.Snapshot{summary("openai", "tokens", 10, 100, t0), summary("claude", "weekly", 1, 10, t0)},
		})
		require.Equal(t, usage.SourceLive, source)
		require.Equal(t, usage.SourceLive, rows[0].Source)
		require.Equal(t, 10.0, rows[0].Quota.Remaining())
		require.Equal(t, []usage.Alert{{Level: usage.Warning, Message: "tokens: less than 25% of the quota remains"}}, rows[0].Alerts)
		require.Equal(t, usage.SourceSnapshot, rows[1].Source)
	})

	t.Run("a family that missed the budget falls back to its snapshot", func(t *testing.T) {
		t.Parallel()
		rows, source := usage.Overview(usage.Input{
			Live:     map[string][]usage.Snapshot{usage.OpenAI: {summary("openai", "tokens", 1, 100, t0)}},
			Fallback: []string{usage.Claude},
			Stored:   []usage.Snapshot{summary("claude", "weekly", 10, 10, t0)},
		})
		require.Equal(t, usage.SourceSnapshotFallback, source)
		require.Equal(t, usage.SourceSnapshot, rows[1].Source)
		require.Equal(t, 0.0, rows[1].Quota.Remaining())
		require.Equal(t, []string{usage.Info, usage.Critical}, []string{rows[1].Alerts[0].Level, rows[1].Alerts[1].Level})
	})

	t.Run("a fallback with nothing stored is none", func(t *testing.T) {
		t.Parallel()
		_, source := usage.Overview(usage.Input{Fallback: []string{usage.OpenAI}})
		require.Equal(t, usage.SourceNone, source)
	})
}

// TestAgentRecordedUsage: the agent's usage by model folds into the
// families; a family with no provider data shows it as its own row's
// (agent_recorded, no quota), one with provider data keeps its source and
// carries it beside; with no provider data at all the overview says so.
func TestAgentRecordedUsage(t *testing.T) {
	t.Parallel()
	agent := usage.FoldModels(30, []usage.ModelSpent{
		{Model: "claude-opus-4-1", Recorded: usage.Recorded{Tasks: 2, TokensIn: 10000, TokensOut: 2000, CostUSD: 0.3}},
		{Model: "claude-haiku-4-5", Recorded: usage.Recorded{Tasks: 1, TokensIn: 100, TokensOut: 50, CostUSD: 0.0001}},
		{Model: "gpt-5-codex", Recorded: usage.Recorded{Tasks: 1, TokensIn: 1000, TokensOut: 500, CostUSD: 0.02}},
		{Model: "llama-local", Recorded: usage.Recorded{Tasks: 5, TokensIn: 9}},
		{Model: "gpt-5", Recorded: usage.Recorded{}}, // reported nothing
	})
	require.Equal(t, map[string]usage.Recorded{
		usage.Claude: {WindowDays: 30, Tasks: 3, TokensIn: 10100, TokensOut: 2050, CostUSD: 0.3001},
		usage.OpenAI: {WindowDays: 30, Tasks: 1, TokensIn: 1000, TokensOut: 500, CostUSD: 0.02},
	}, agent)

	rows, source := usage.Overview(usage.Input{Agent: agent, RecordedAt: t0})
	require.Equal(t, usage.SourceAgent, source)
	for _, r := range rows {
		require.Equal(t, usage.SourceAgent, r.Source, r.Family)
		require.Nil(t, r.Quota, "the agent knows no quota")
		require.Equal(t, t0, r.CollectedAt)
		require.Equal(t, agent[r.Family], *r.Agent)
	}

	rows, source = usage.Overview(usage.Input{Agent: map[string]usage.Recorded{usage.Claude: agent[usage.Claude]}, RecordedAt: t0,
		Stored: []usage.Snapshot{{Provider: "openai", CollectedAt: t0, Metrics: []usage.Metric{{Name: "tokens", Value: 1, Limit: ptr(10)}}}}})
	require.Equal(t, usage.SourceSnapshot, source, "provider data somewhere: the overview's source is the providers'")
	require.Equal(t, usage.SourceSnapshot, rows[0].Source)
	require.Nil(t, rows[0].Agent, "no usage recorded for openai")
	require.Equal(t, usage.SourceAgent, rows[1].Source)

	rows, source = usage.Overview(usage.Input{})
	require.Equal(t, usage.SourceNone, source)
	require.Nil(t, rows[0].Agent)
}

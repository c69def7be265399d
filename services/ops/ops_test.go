package ops

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/config"
)

func parse(t *testing.T, args []string, env map[string]string) *Config {
	t.Helper()
	cfg := &Config{}
	fs := config.New("ops")
	cfg.register(fs)
	_, err := fs.Parse(args, func(k string) string { return env[k] })
	require.NoError(t, err)
	return cfg
}

func TestSettingsAreBoundToTheirVariables(t *testing.T) {
	t.Parallel()
	cfg := parse(t, nil, map[string]string{
		"RUNTIME_DATABASE_URL":         "postgres://db/telemetry",
		"RUNTIME_EVENTS_PATH":          "/var/log/foundry/events.jsonl",
		"FOUNDRY_USAGE_OPENAI_URL":     "http://usage.local/openai",
		"FOUNDRY_USAGE_OPENAI_KEY":     "k1",
		"FOUNDRY_USAGE_CLAUDE_URL":     "http://usage.local/claude",
		"FOUNDRY_USAGE_CLAUDE_KEY":     "k2",
		"FOUNDRY_USAGE_LATENCY_BUDGET": "250ms",
		"FOUNDRY_USAGE_CACHE_TTL":      "5s",
		"RUNTIME_EVENTS_RETENTION":     "48h",
		"FOUNDRY_MONITOR_INTERVAL":     "1m",
	})
	require.Equal(t, &Config{
		RuntimeDatabaseURL: "postgres://db/telemetry", RuntimeEventsPath: "/var/log/foundry/events.jsonl",
		UsageOpenAIURL: "http://usage.local/openai", UsageOpenAIKey: "k1",
		UsageClaudeURL: "http://usage.local/claude", UsageClaudeKey: "k2",
		UsageLatencyBudget: 250 * time.Millisecond, UsageCacheTTL: 5 * time.Second,
		RuntimeEventsRetention: 48 * time.Hour, MonitorInterval: time.Minute,
	}, cfg)

	cfg = parse(t, []string{"-runtime-events-path=/tmp/e.jsonl"}, map[string]string{"RUNTIME_EVENTS_PATH": "/elsewhere"})
	require.Equal(t, "/tmp/e.jsonl", cfg.RuntimeEventsPath, "a flag wins over its variable")
	require.Equal(t, time.Second, cfg.UsageLatencyBudget, "the default budget is 1 s")
	require.Equal(t, 30*time.Second, cfg.UsageCacheTTL, "the default cache TTL is 30 s")
	require.Equal(t, 720*time.Hour, cfg.RuntimeEventsRetention, "the default retention is 30 days")
}

func TestValidate(t *testing.T) {
	t.Parallel()
	valid := Config{UsageLatencyBudget: time.Second, UsageCacheTTL: 30 * time.Second, RuntimeEventsRetention: time.Hour}
	tests := []struct {
		name    string
		edit    func(c *Config)
		wantErr string
	}{
		{"defaults", func(*Config) {}, ""},
		{"zero TTL and retention turn them off", func(c *Config) { c.UsageCacheTTL, c.RuntimeEventsRetention = 0, 0 }, ""},
		{"no latency budget", func(c *Config) { c.UsageLatencyBudget = 0 }, "-usage-latency-budget"},
		{"negative cache TTL", func(c *Config) { c.UsageCacheTTL = -time.Second }, "-usage-cache-ttl"},
		{"negative retention", func(c *Config) { c.RuntimeEventsRetention = -time.Hour }, "-runtime-events-retention"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := valid
			tc.edit(&c)
			err := c.validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestCollectors(t *testing.T) {
	t.Parallel()
	cs, err := (&Config{UsageClaudeURL: "https://usage.local/claude"}).collectors()
	require.NoError(t, err)
	require.Len(t, cs, 1)
	require.Equal(t, "claude", cs[0].Family())

	for _, bad := range []string{"usage.local/openai", "ftp://usage.local", "http://"} {
		_, err := (&Config{UsageOpenAIURL: bad}).collectors()
		require.ErrorContains(t, err, "-usage-openai-url", bad)
	}
}

// TestProbesComeFromTheModules: ops probes the services of the modules it
// is given, in their order, never itself or a module without a gRPC
// service (the gateway), and always dials the ledger, whose economy its
// monitor reads.
func TestProbesComeFromTheModules(t *testing.T) {
	t.Parallel()
	given := []app.Module{
		{Name: "portfolio", Service: "foundry.portfolio.v1.PortfolioService"},
		{Name: "billing", Service: "foundry.billing.v1.BillingService"},
		{Name: "ops", Service: "foundry.ops.v1.OpsService"},
		{Name: "gateway"},
	}
	got := probes(given)
	require.Equal(t, []probe{{"portfolio", "foundry.portfolio.v1.PortfolioService"}, {"billing", "foundry.billing.v1.BillingService"}}, got)
	require.Equal(t, []string{"ledger", "portfolio", "billing"}, peerNames(got))
	require.Equal(t, []string{"ledger", "portfolio"}, peerNames([]probe{{"ledger", "x"}, {"portfolio", "y"}}), "the ledger once")

	m := Module(given...)
	require.Equal(t, []string{"ledger", "portfolio", "billing"}, m.Peers)
}

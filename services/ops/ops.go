// Package ops is the ops service as a module: readiness, persistence and
// telemetry, the graph layer and automation usage, on its own schema.
package ops

import (
	"context"
	"fmt"
	"net/url"
	"time"

	"go.uber.org/zap"
	"google.golang.org/grpc/connectivity"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	opsinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	platforminternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/platform/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/collector"
	"github.com/foundryhq/foundry/services/ops/internal/handler"
	"github.com/foundryhq/foundry/services/ops/internal/peer"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/gauges"
	"github.com/foundryhq/foundry/services/platform/lease"
	"github.com/foundryhq/foundry/services/platform/retention"
)

// probe is a service whose readiness ops reports: its module's name (the
// peer ops dials) and its gRPC service (whose health ops asks).
type probe struct{ name, service string }

// probes are the services of the modules ops is given, itself and the
// gateway (which has no gRPC service) left out, in their order.
func probes(modules []app.Module) []probe {
	var out []probe
	for _, m := range modules {
		if m.Name != "ops" && m.Service != "" {
			out = append(out, probe{m.Name, m.Service})
		}
	}
	return out
}

// peerNames are the modules ops dials: the services it probes, and the
// ledger, whose economy its monitor reads, whether or not it probes it.
func peerNames(ps []probe) []string {
	names := []string{"ledger"}
	for _, p := range ps {
		if p.name != "ledger" {
			names = append(names, p.name)
		}
	}
	return names
}

// Config holds the ops service's own settings.
type Config struct {
	// RuntimeDatabaseURL receives runtime telemetry when set (postgres://…
	// or sqlite:<path>.db), even when RuntimeEventsPath is set too.
	RuntimeDatabaseURL string
	// RuntimeEventsPath is the JSON-lines telemetry file used when no
	// runtime database is set.
	RuntimeEventsPath string
	// Usage collectors: one HTTP endpoint (and key) per provider family.
	UsageOpenAIURL, UsageOpenAIKey string
	UsageClaudeURL, UsageClaudeKey string
	// UsageLatencyBudget bounds live usage collection.
	UsageLatencyBudget time.Duration
	// UsageCacheTTL is how long a provider's live usage is reused, so a
	// burst of requests costs the provider one call; 0 asks every time.
	UsageCacheTTL time.Duration
	// RuntimeEventsRetention is how long telemetry events are kept in a
	// telemetry database; 0 keeps them all.
	RuntimeEventsRetention time.Duration
	// MonitorInterval is how often the economy monitor checks the ledger;
	// 0 turns the monitor off.
	MonitorInterval time.Duration
}

func (c *Config) register(fs *config.FlagSet) {
	fs.String(&c.RuntimeDatabaseURL, "runtime-database-url", "RUNTIME_DATABASE_URL", "",
		"database for runtime telemetry events (postgres://… or sqlite:<path>.db); wins over -runtime-events-path")
	fs.String(&c.RuntimeEventsPath, "runtime-events-path", "RUNTIME_EVENTS_PATH", "",
		"JSON-lines file for runtime telemetry events when no runtime database is set; neither set: telemetry off")
	fs.String(&c.UsageOpenAIURL, "usage-openai-url", "FOUNDRY_USAGE_OPENAI_URL", "",
		"URL answering OpenAI usage as JSON (see docs/ops.md); empty: stored snapshots only")
	fs.String(&c.UsageOpenAIKey, "usage-openai-key", "FOUNDRY_USAGE_OPENAI_KEY", "", "bearer key sent to -usage-openai-url")
	fs.String(&c.UsageClaudeURL, "usage-claude-url", "FOUNDRY_USAGE_CLAUDE_URL", "",
		"URL answering Claude usage as JSON (see docs/ops.md); empty: stored snapshots only")
	fs.String(&c.UsageClaudeKey, "usage-claude-key", "FOUNDRY_USAGE_CLAUDE_KEY", "", "bearer key sent to -usage-claude-url")
	fs.Duration(&c.UsageCacheTTL, "usage-cache-ttl", "FOUNDRY_USAGE_CACHE_TTL", 30*time.Second,
		"how long a provider's live usage answer is reused (concurrent requests share one provider call); 0 asks every time")
	fs.Duration(&c.RuntimeEventsRetention, "runtime-events-retention", "RUNTIME_EVENTS_RETENTION", telemetry.DefaultRetention,
		"how long runtime telemetry events are kept in a telemetry database (pruned hourly); 0 keeps them all")
	fs.Duration(&c.MonitorInterval, "monitor-interval", "FOUNDRY_MONITOR_INTERVAL", 30*time.Second,
		"how often the economy monitor (one leader across ops replicas) checks the ledger; 0 turns it off")
	fs.Duration(&c.UsageLatencyBudget, "usage-latency-budget", "FOUNDRY_USAGE_LATENCY_BUDGET", usecase.DefaultLatencyBudget,
		"longest live usage collection; past it the last snapshots are returned")
}

// validate refuses settings that cannot mean anything. A negative duration
// is refused rather than read as "off": -runtime-events-retention=-1h more
// likely means a typo than "keep everything", and silently keeping every
// event is the failure retention exists to prevent.
func (c *Config) validate() error {
	switch {
	case c.UsageLatencyBudget <= 0:
		return fmt.Errorf("-usage-latency-budget must be positive, got %s", c.UsageLatencyBudget)
	case c.UsageCacheTTL < 0:
		return fmt.Errorf("-usage-cache-ttl must be 0 (no cache) or positive, got %s", c.UsageCacheTTL)
	case c.RuntimeEventsRetention < 0:
		return fmt.Errorf("-runtime-events-retention must be 0 (keep everything) or positive, got %s", c.RuntimeEventsRetention)
	}
	return nil
}

// collectors builds the configured usage collectors.
func (c *Config) collectors() ([]collector.Collector, error) {
	var out []collector.Collector
	for _, p := range []struct{ family, flag, url, key string }{
		{usage.OpenAI, "usage-openai-url", c.UsageOpenAIURL, c.UsageOpenAIKey},
		{usage.Claude, "usage-claude-url", c.UsageClaudeURL, c.UsageClaudeKey},
	} {
		if p.url == "" {
			continue
		}
		u, err := url.Parse(p.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("-%s: want an http:// or https:// URL", p.flag)
		}
		var col collector.Collector = collector.NewHTTP(p.family, p.url, p.key, nil, nil)
		if c.UsageCacheTTL > 0 {
			col = collector.NewCached(col, c.UsageCacheTTL, nil)
		}
		out = append(out, col)
	}
	return out, nil
}

// Module returns the ops module, which reports the readiness of the
// services it is given (allinone.Services gives it every other one, so a
// new service is probed without a change here) and monitors the ledger's
// economy.
func Module(services ...app.Module) app.Module {
	cfg := &Config{}
	// The gauges' interval is the process's, shared with the other
	// modules (gauges.Register), not one of this module's own settings.
	var refresh gauges.Setting
	probed := probes(services)
	return app.Module{
		Name:       "ops",
		Service:    opsv1.OpsService_ServiceDesc.ServiceName,
		Peers:      peerNames(probed),
		Routes:     opsv1.RegisterOpsServiceHandler,
		Migrations: store.Migrations(),
		Flags: func(fs *config.FlagSet) {
			cfg.register(fs)
			refresh = gauges.Register(fs)
		},
		Start: func(_ context.Context, h *app.Host) error {
			if err := cfg.validate(); err != nil {
				return err
			}
			every, err := refresh.Interval()
			if err != nil {
				return err
			}
			collectors, err := cfg.collectors()
			if err != nil {
				return err
			}
			sink, err := telemetry.Open(telemetry.Config{DatabaseURL: cfg.RuntimeDatabaseURL, EventsPath: cfg.RuntimeEventsPath})
			if err != nil {
				return err
			}
			h.OnStop(sink.Close)
			h.Log.Info("runtime telemetry", zap.String("backend", sink.Backend()), zap.String("target", sink.Target()))

			var (
				peers []usecase.Peer
				// agent is the agent's usage, when ops reports on it: the
				// usage overview's numbers without a provider collector.
				agent usecase.AgentUsage
			)
			for _, p := range probed {
				conn, err := h.Dial(p.name)
				if err != nil {
					return err
				}
				if p.name == "agent" {
					agent = peer.NewAgent(conn)
				}
				peers = append(peers, peer.Service{
					Name: p.name, Service: p.service,
					Health:  healthpb.NewHealthClient(conn),
					Storage: platforminternalv1.NewStorageServiceClient(conn),
					Reconnect: func() {
						if conn.GetState() == connectivity.TransientFailure {
							conn.ResetConnectBackoff()
						}
					},
				}.Peer())
			}
			// The monitor's use cases serve GET /api/health/coherence (a live
			// check when no recent one is recorded) even when its loop is off.
			ledgerConn, err := h.Dial("ledger")
			if err != nil {
				return err
			}
			uc := usecase.New(h.DB, repos, usecase.Config{
				Peers: peers, Telemetry: sink, Collectors: collectors, LatencyBudget: cfg.UsageLatencyBudget, Agent: agent,
				Log: h.Log, Metrics: h.Metrics,
				Monitor: usecase.MonitorConfig{Ledger: peer.NewLedger(ledgerConn), Interval: cfg.MonitorInterval},
			})
			h.OnStop(uc.Close)
			if cfg.RuntimeEventsRetention > 0 && telemetry.IsDatabase(sink.Backend()) {
				// A sink prunes in one statement whatever the batch: the
				// events are the sink's, not a repository's.
				r := &retention.Retainer{What: "runtime telemetry", Retention: cfg.RuntimeEventsRetention, Clock: clock.Real{}, Log: h.Log,
					Prune: func(ctx context.Context, before time.Time, _ int) (int64, error) { return uc.PruneEvents(ctx, before) }}
				h.Go(r.Run)
			}
			if cfg.MonitorInterval > 0 {
				holder := lease.HolderID("ops")
				h.Go(func(ctx context.Context) { runMonitor(ctx, h.Log.Named("monitor"), uc, holder, cfg.MonitorInterval) })
			}
			checks := gauges.New(h.Metrics, monitorGauges...)
			h.Go(func(ctx context.Context) { checks.Run(ctx, h.Log, every, readGauges(uc)) })
			srv := handler.New(uc)
			h.RegisterService(&opsv1.OpsService_ServiceDesc, srv)
			h.RegisterService(&opsinternalv1.OpsInternalService_ServiceDesc, srv)
			return nil
		},
	}
}

// repos are the ops repositories over a querier.
func repos(q database.Querier) usecase.Repos {
	return usecase.Repos{
		Nodes: sqlstore.NewNodes(q), Edges: sqlstore.NewEdges(q),
		Usage: sqlstore.NewUsageSnapshots(q), Checks: sqlstore.NewChecks(q),
	}
}

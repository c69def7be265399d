// Package agent is the agent service as a module, on its own schema: the
// task pipeline (tasks, claims with leases, attention, metrics, prompt A/B
// measurement, diagnostics) and the delivery of idea advancements to the
// portfolio.
package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	"github.com/foundryhq/foundry/services/agent/internal/abtest"
	"github.com/foundryhq/foundry/services/agent/internal/attention"
	"github.com/foundryhq/foundry/services/agent/internal/handler"
	"github.com/foundryhq/foundry/services/agent/internal/loop"
	"github.com/foundryhq/foundry/services/agent/internal/peer"
	"github.com/foundryhq/foundry/services/agent/internal/routing"
	"github.com/foundryhq/foundry/services/agent/internal/store"
	"github.com/foundryhq/foundry/services/agent/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/agent/internal/task"
	"github.com/foundryhq/foundry/services/agent/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/gauges"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/periodic"
	"github.com/foundryhq/foundry/services/platform/retention"
)

// Config holds the agent's own settings.
type Config struct {
	// Attention thresholds.
	StuckAfter      time.Duration
	FailureStreak   int
	SuccessWindow   time.Duration
	MinSuccessTasks int
	MinSuccessRate  float64

	// Claims.
	Lease        time.Duration
	MaxAttempts  int
	ReapInterval time.Duration

	// IdempotencyRetention is how long Idempotency-Key records are kept
	// (0: for ever).
	IdempotencyRetention time.Duration
	// TaskRetention is how long a task that finished for good is kept (0:
	// for ever).
	TaskRetention time.Duration

	// Retries: the default policy's waits and the per-type overrides.
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
	RetryPolicies   string

	// Routing.
	Routing     string
	RoutingFile string

	// Usage: the price table's overrides.
	Prices string

	// Prompt A/B.
	PromptVariants string
	ABSeed         int
	ABCoolOff      time.Duration

	// Outbox delivery.
	OutboxInterval time.Duration

	// The pipeline loop.
	Loop pipelineConfig
}

func (c *Config) register(fs *config.FlagSet) {
	d := attention.Defaults
	fs.Duration(&c.StuckAfter, "agent-stuck-after", "FOUNDRY_AGENT_STUCK_AFTER", d.StuckAfter,
		"attention: the queue is stuck when tasks are pending, none runs, and the oldest waited longer than this")
	fs.Int(&c.FailureStreak, "agent-failure-streak", "FOUNDRY_AGENT_FAILURE_STREAK", d.FailureStreak,
		"attention: repeated_failures when this many most recently finished tasks all failed; 0 turns the flag off")
	fs.Duration(&c.SuccessWindow, "agent-success-window", "FOUNDRY_AGENT_SUCCESS_WINDOW", d.Window,
		"attention: the rolling window of the pipeline's success rate")
	fs.Int(&c.MinSuccessTasks, "agent-min-success-tasks", "FOUNDRY_AGENT_MIN_SUCCESS_TASKS", d.MinTasks,
		"attention: the fewest finished tasks in the window for low_success_rate to be judged")
	fs.Float(&c.MinSuccessRate, "agent-min-success-rate", "FOUNDRY_AGENT_MIN_SUCCESS_RATE", d.MinSuccessRate,
		"attention: low_success_rate below this success rate (0..1)")
	fs.Duration(&c.Lease, "agent-lease", "FOUNDRY_AGENT_LEASE", usecase.DefaultLease,
		"how long a claim holds without a renewal (a PATCH of the running task) when the claim names no lease_seconds")
	fs.Int(&c.MaxAttempts, "agent-max-attempts", "FOUNDRY_AGENT_MAX_ATTEMPTS", usecase.DefaultMaxAttempts,
		"attempts a task gets (the default retry policy): a failed attempt or an expired lease puts it back in the queue, the last one's failure discards it (timed_out for a lease)")
	fs.Duration(&c.RetryBackoff, "agent-retry-backoff", "FOUNDRY_AGENT_RETRY_BACKOFF", task.DefaultRetry.Backoff,
		"the default retry policy: the wait after a task's first failed attempt, doubled after each further one (jittered by a quarter)")
	fs.Duration(&c.RetryBackoffMax, "agent-retry-backoff-max", "FOUNDRY_AGENT_RETRY_BACKOFF_MAX", task.DefaultRetry.MaxBackoff,
		"the default retry policy: the longest wait between two attempts")
	fs.String(&c.RetryPolicies, "agent-retry-policies", "FOUNDRY_AGENT_RETRY_POLICIES", "",
		"retry policies per task type as type=attempts[:backoff[:max_backoff]],... (for example impl=5:1m:1h,review=1); other types have the default")
	fs.Duration(&c.IdempotencyRetention, "agent-idempotency-retention", "FOUNDRY_AGENT_IDEMPOTENCY_RETENTION",
		usecase.DefaultIdempotencyRetention, "how long an Idempotency-Key's answer is kept for a retry; 0 keeps every key for ever")
	fs.Duration(&c.TaskRetention, "agent-task-retention", "FOUNDRY_AGENT_TASK_RETENTION", usecase.DefaultTaskRetention,
		"how long a task that finished for good (completed, timed out, discarded, cancelled) is kept; 0 keeps every task for ever")
	fs.Duration(&c.ReapInterval, "agent-reap-interval", "FOUNDRY_AGENT_REAP_INTERVAL", 15*time.Second,
		"how often expired leases are reaped (every replica reaps; it is idempotent)")
	fs.String(&c.Routing, "agent-routing", "FOUNDRY_AGENT_ROUTING", "",
		"routing overrides as type=executor:tier,... (for example impl=claude:strong,test=codex:fast)")
	fs.String(&c.RoutingFile, "agent-routing-file", "FOUNDRY_AGENT_ROUTING_FILE", "",
		`JSON routing file {"executors": {name: {"models": {tier: model}, "command": template}}, "task_types": {type: {"executor", "tier"}}} laid over the defaults`)
	fs.String(&c.Prices, "agent-prices", "FOUNDRY_AGENT_PRICES", "",
		"model prices as model=in:out,... in US dollars per million tokens, laid over the built-in table: a task that reports tokens and no cost is priced from them")
	fs.String(&c.PromptVariants, "agent-prompt-variants", "FOUNDRY_AGENT_PROMPT_VARIANTS", "",
		"comma-separated prompt variants to choose among (with those already recorded) when a task's context names none")
	fs.Duration(&c.ABCoolOff, "agent-ab-cooloff", "FOUNDRY_AGENT_AB_COOLOFF", abtest.DefaultCoolOff,
		"how long a blocked prompt variant waits before its one re-probe; 0 never re-probes it")
	fs.Int(&c.ABSeed, "agent-ab-seed", "FOUNDRY_AGENT_AB_SEED", 0, "seed of the prompt-variant selection; 0 picks one at startup")
	fs.Duration(&c.OutboxInterval, "agent-outbox-interval", "FOUNDRY_AGENT_OUTBOX_INTERVAL", 2*time.Second,
		"how often undelivered idea advancements are looked for (a completion also wakes the deliverer at once)")
	fs.Bool(&c.Loop.Enabled, "agent-loop", "FOUNDRY_AGENT_LOOP", false,
		"run the pipeline loop (one leader across replicas): pick the highest-ROI idea, run the task its stage needs, advance it")
	fs.Duration(&c.Loop.Interval, "agent-loop-interval", "FOUNDRY_AGENT_LOOP_INTERVAL", 30*time.Second,
		"time between the pipeline loop's passes; its lease lasts three intervals, so a dead leader is replaced within about three")
	fs.String(&c.Loop.Executor, "agent-loop-executor", "FOUNDRY_AGENT_LOOP_EXECUTOR", executorExternal,
		"how the loop runs its tasks: external (wait for a worker to claim and finish the task) or exec (run the routed command here)")
	fs.Duration(&c.Loop.ExecTimeout, "agent-exec-timeout", "FOUNDRY_AGENT_EXEC_TIMEOUT", 10*time.Minute,
		"exec executor: a command running longer is killed and its task timed_out")
	fs.String(&c.Loop.ExecDir, "agent-exec-dir", "FOUNDRY_AGENT_EXEC_DIR", "", "exec executor: the commands' working directory (default: the service's)")
	fs.Duration(&c.Loop.RunOnceWait, "agent-run-once-wait", "FOUNDRY_AGENT_RUN_ONCE_WAIT", 10*time.Second,
		"how long POST /api/agent/loop/run-once waits for its pass before answering 202 (the pass goes on; poll GET /api/agent/loop)")
	fs.Duration(&c.Loop.ExternalTimeout, "agent-external-timeout", "FOUNDRY_AGENT_EXTERNAL_TIMEOUT", time.Hour,
		"external executor: how long a pass waits for a worker to finish its task (then the task is timed_out)")
	fs.Duration(&c.Loop.Backoff.Base, "agent-loop-backoff", "FOUNDRY_AGENT_LOOP_BACKOFF", loop.DefaultBackoff.Base,
		"how long the loop leaves an idea alone after its task failed; doubled for each failure in a row")
	fs.Duration(&c.Loop.Backoff.Max, "agent-loop-backoff-max", "FOUNDRY_AGENT_LOOP_BACKOFF_MAX", loop.DefaultBackoff.Max,
		"the most the loop leaves a failing idea alone between two tries")
}

// useCases builds the use-case configuration from the settings.
func (c *Config) useCases() (usecase.Config, error) {
	var errs []error
	if c.StuckAfter <= 0 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_STUCK_AFTER: want a positive duration"))
	}
	if c.FailureStreak < 0 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_FAILURE_STREAK: want 0 or more"))
	}
	if c.SuccessWindow < time.Hour {
		errs = append(errs, errors.New("FOUNDRY_AGENT_SUCCESS_WINDOW: want at least 1h"))
	}
	if c.MinSuccessTasks < 1 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_MIN_SUCCESS_TASKS: want 1 or more"))
	}
	if c.MinSuccessRate < 0 || c.MinSuccessRate > 1 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_MIN_SUCCESS_RATE: want a rate between 0 and 1"))
	}
	if c.Lease < time.Second || c.Lease > usecase.MaxLeaseSeconds*time.Second {
		errs = append(errs, errors.New("FOUNDRY_AGENT_LEASE: want between 1s and 24h"))
	}
	retries, err := task.ParsePolicies(task.RetryPolicy{MaxAttempts: c.MaxAttempts, Backoff: c.RetryBackoff,
		MaxBackoff: c.RetryBackoffMax}, c.RetryPolicies)
	if err != nil {
		errs = append(errs, fmt.Errorf("FOUNDRY_AGENT_MAX_ATTEMPTS, FOUNDRY_AGENT_RETRY_BACKOFF[_MAX] and FOUNDRY_AGENT_RETRY_POLICIES: %w", err))
	}
	if c.IdempotencyRetention < 0 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_IDEMPOTENCY_RETENTION: want a duration (0 keeps every key)"))
	}
	if c.TaskRetention < 0 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_TASK_RETENTION: want a duration (0 keeps every task)"))
	}
	if c.ReapInterval <= 0 || c.OutboxInterval <= 0 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_REAP_INTERVAL and FOUNDRY_AGENT_OUTBOX_INTERVAL: want positive durations"))
	}
	if err := c.Loop.validate(); err != nil {
		errs = append(errs, err)
	}
	if c.ABSeed < 0 {
		errs = append(errs, errors.New("FOUNDRY_AGENT_AB_SEED: want 0 or a positive number"))
	}
	prices, err := task.ParsePrices(task.DefaultPrices, c.Prices)
	if err != nil {
		errs = append(errs, fmt.Errorf("FOUNDRY_AGENT_PRICES: %w", err))
	}
	table, err := routing.Load(c.RoutingFile, c.Routing)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return usecase.Config{}, errors.Join(errs...)
	}
	var variants []string
	for v := range strings.SplitSeq(c.PromptVariants, ",") {
		if v = strings.TrimSpace(v); v != "" {
			if len(v) > usecase.MaxVariant {
				return usecase.Config{}, fmt.Errorf("FOUNDRY_AGENT_PROMPT_VARIANTS: %q is longer than %d characters", v, usecase.MaxVariant)
			}
			variants = append(variants, v)
		}
	}
	return usecase.Config{
		Seed:    uint64(c.ABSeed),
		Routing: table,
		Attention: attention.Config{StuckAfter: c.StuckAfter, FailureStreak: c.FailureStreak, Window: c.SuccessWindow,
			MinTasks: c.MinSuccessTasks, MinSuccessRate: c.MinSuccessRate},
		Lease:       c.Lease,
		MaxAttempts: c.MaxAttempts,
		Retries:     retries,
		Prices:      prices,
		CoolOff:     coolOff(c.ABCoolOff),
		Variants:    variants,
	}, nil
}

// coolOff is the use cases' cool-off for a setting: 0 (never re-probe)
// is their negative.
func coolOff(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// Module returns the agent module.
func Module() app.Module {
	cfg := &Config{}
	// The gauges' interval is the process's, shared with the other
	// modules (gauges.Register), not one of this module's own settings.
	var refresh gauges.Setting
	return app.Module{
		Name:       "agent",
		Service:    agentv1.AgentService_ServiceDesc.ServiceName,
		Peers:      []string{"portfolio"},
		Routes:     agentv1.RegisterAgentServiceHandler,
		Migrations: store.Migrations(),
		Flags: func(fs *config.FlagSet) {
			cfg.register(fs)
			refresh = gauges.Register(fs)
		},
		Start: func(_ context.Context, h *app.Host) error {
			ucfg, err := cfg.useCases()
			if err != nil {
				return err
			}
			every, err := refresh.Interval()
			if err != nil {
				return err
			}
			conn, err := h.Dial("portfolio")
			if err != nil {
				return err
			}
			portfolio := peer.NewPortfolio(conn)
			ucfg.Ideas = portfolio
			ucfg.Log = h.Log
			ucfg.Metrics = h.Metrics
			uc := usecase.New(h.DB, repos, ucfg)
			pl := newPipeline(cfg.Loop, uc, portfolio, h.Log.Named("loop"), h.Metrics)
			h.RegisterService(&agentv1.AgentService_ServiceDesc, handler.New(uc, pl, cfg.Loop.RunOnceWait))
			h.Go(func(ctx context.Context) { reap(ctx, h.Log, uc, cfg.ReapInterval) })
			h.Go(func(ctx context.Context) { deliver(ctx, h.Log, uc, cfg.OutboxInterval) })
			if cfg.IdempotencyRetention > 0 {
				h.Go((&retention.Retainer{What: "idempotency keys", Prune: uc.PruneIdempotencyKeys,
					Retention: cfg.IdempotencyRetention, Log: h.Log}).Run)
			}
			if cfg.TaskRetention > 0 {
				h.Go((&retention.Retainer{What: "finished tasks", Prune: uc.PruneFinishedTasks,
					Retention: cfg.TaskRetention, Log: h.Log}).Run)
			}
			queue := gauges.New(h.Metrics, queueGauges...)
			h.Go(func(ctx context.Context) { queue.Run(ctx, h.Log, every, readGauges(uc)) })
			if cfg.Loop.Enabled {
				h.Log.Info("pipeline loop on", zap.Duration("interval", cfg.Loop.Interval), zap.String("executor", cfg.Loop.Executor),
					zap.String("replica", pl.holder))
			}
			h.Go(pl.serve)
			return nil
		},
	}
}

// repos builds all the agent's repositories over one querier: the use
// cases open a transaction and write through these, so everything one use
// case writes commits together.
func repos(q database.Querier) usecase.Repos {
	return usecase.Repos{
		Tasks:   sqlstore.NewTasks(q),
		Stats:   sqlstore.NewStats(q),
		Prompts: sqlstore.NewPrompts(q),
		Outbox:  sqlstore.NewOutbox(q),
		Loop:    sqlstore.NewLoopPasses(q),
		Keys:    idempotency.SQL{Q: q},
		Send:    q.SendBatch,
	}
}

// reap returns expired claims and due retries to the queue every interval
// until ctx ends.
func reap(ctx context.Context, log *zap.Logger, uc *usecase.App, every time.Duration) {
	periodic.After(ctx, every, func() {
		r, err := uc.Reap(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("reaping expired task leases and due retries failed", zap.Error(err))
		case r.Requeued+r.TimedOut+r.Retried > 0:
			log.Info("expired task leases reaped, due retries queued", zap.Int("requeued", r.Requeued),
				zap.Int("timed_out", r.TimedOut), zap.Int("retried", r.Retried))
		}
	})
}

// outboxBatch is how many idea advancements one delivery pass takes.
const outboxBatch = 50

// deliver delivers the outbox every interval, and at once when a
// completion queued an advancement, until ctx ends.
func deliver(ctx context.Context, log *zap.Logger, uc *usecase.App, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		for {
			n, err := uc.DeliverOutbox(ctx, outboxBatch)
			if err != nil && ctx.Err() == nil {
				log.Warn("delivering idea advancements failed", zap.Error(err))
			}
			if err != nil || n < outboxBatch {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-uc.Wake():
		}
	}
}

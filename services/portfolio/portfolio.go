// Package portfolio is the portfolio service as a module: ideas ranked by
// their free-energy score, stages, right-sizing, progress and tags, on its
// own schema.
package portfolio

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	portfoliointernalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/gauges"
	"github.com/foundryhq/foundry/services/platform/periodic"
	"github.com/foundryhq/foundry/services/platform/retention"
	"github.com/foundryhq/foundry/services/portfolio/internal/handler"
	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
	"github.com/foundryhq/foundry/services/portfolio/internal/store/sqlstore"
	"github.com/foundryhq/foundry/services/portfolio/internal/usecase"
)

// Config holds the portfolio's own settings.
type Config struct {
	// SnapshotInterval is how often a health snapshot is taken (one is
	// always taken at startup); 0 turns the schedule off.
	SnapshotInterval time.Duration
	// SnapshotTimeout bounds one snapshot, the startup one included.
	SnapshotTimeout time.Duration
	// SnapshotRetention is how long snapshots are kept (0: for ever).
	SnapshotRetention time.Duration
	// Right-sizing's bounds.
	CandidatesPerIdea int
	MaxSuggestions    int
}

func (c *Config) register(fs *config.FlagSet) {
	fs.Duration(&c.SnapshotInterval, "rightsizing-snapshot-interval", "FOUNDRY_RIGHTSIZING_SNAPSHOT_INTERVAL", 6*time.Hour,
		"how often a portfolio health snapshot is taken (one is taken at startup); 0 disables the schedule")
	fs.Duration(&c.SnapshotTimeout, "rightsizing-snapshot-timeout", "FOUNDRY_RIGHTSIZING_SNAPSHOT_TIMEOUT", time.Minute,
		"longest a health snapshot may take; past it the snapshot is abandoned and logged")
	fs.Duration(&c.SnapshotRetention, "rightsizing-snapshot-retention", "FOUNDRY_RIGHTSIZING_SNAPSHOT_RETENTION",
		usecase.DefaultSnapshotRetention, "how long portfolio health snapshots are kept; 0 keeps them all")
	fs.Int(&c.CandidatesPerIdea, "rightsizing-candidates-per-idea", "FOUNDRY_RIGHTSIZING_CANDIDATES_PER_IDEA",
		rightsizing.DefaultLimits.CandidatesPerIdea, "how many other ideas one idea is compared with for overlap")
	fs.Int(&c.MaxSuggestions, "rightsizing-max-suggestions", "FOUNDRY_RIGHTSIZING_MAX_SUGGESTIONS",
		rightsizing.DefaultLimits.MaxSuggestions, "how many split and merge suggestions a report keeps (the most confident)")
}

// Module returns the portfolio module.
func Module() app.Module {
	cfg := &Config{}
	// The gauges' interval is the process's, shared with the other
	// modules (gauges.Register), not one of this module's own settings.
	var refresh gauges.Setting
	return app.Module{
		Name:       "portfolio",
		Service:    portfoliov1.PortfolioService_ServiceDesc.ServiceName,
		Routes:     portfoliov1.RegisterPortfolioServiceHandler,
		Migrations: store.Migrations(),
		Flags: func(fs *config.FlagSet) {
			cfg.register(fs)
			refresh = gauges.Register(fs)
		},
		Start: func(_ context.Context, h *app.Host) error {
			if cfg.CandidatesPerIdea < 1 || cfg.MaxSuggestions < 1 {
				return fmt.Errorf("-rightsizing-candidates-per-idea and -rightsizing-max-suggestions must be at least 1")
			}
			if cfg.SnapshotRetention < 0 {
				return fmt.Errorf("FOUNDRY_RIGHTSIZING_SNAPSHOT_RETENTION: want a duration (0 keeps every snapshot)")
			}
			every, err := refresh.Interval()
			if err != nil {
				return err
			}
			uc := usecase.New(h.DB, repos, usecase.Config{
				Limits: rightsizing.Limits{CandidatesPerIdea: cfg.CandidatesPerIdea, MaxSuggestions: cfg.MaxSuggestions},
			})
			srv := handler.New(uc)
			h.RegisterService(&portfoliov1.PortfolioService_ServiceDesc, srv)
			h.RegisterService(&portfoliointernalv1.PortfolioInternalService_ServiceDesc, srv)
			// The startup snapshot runs in the background with a deadline:
			// however large (or hostile) the portfolio, it can neither delay
			// readiness nor crash-loop the service.
			h.Go(func(ctx context.Context) {
				periodic.Run(ctx, cfg.SnapshotInterval, func() { snapshot(ctx, h.Log, uc, cfg.SnapshotTimeout) })
			})
			if cfg.SnapshotRetention > 0 {
				h.Go((&retention.Retainer{What: "health snapshots", Prune: uc.PruneSnapshots,
					Retention: cfg.SnapshotRetention, Log: h.Log}).Run)
			}
			stages := gauges.New(h.Metrics, stageGauges...)
			h.Go(func(ctx context.Context) { stages.Run(ctx, h.Log, every, readGauges(uc)) })
			return nil
		},
	}
}

// repos builds all the portfolio's repositories over one querier: the use
// cases open a transaction and write through these, so everything one use
// case writes commits together.
func repos(q database.Querier) usecase.Repos {
	return usecase.Repos{
		Ideas:     sqlstore.NewIdeas(q),
		Questions: sqlstore.NewQuestions(q),
		Snapshots: sqlstore.NewSnapshots(q),
	}
}

// snapshot takes a health snapshot; a failure is logged, not fatal: the
// next one will try again.
func snapshot(ctx context.Context, log *zap.Logger, uc *usecase.App, timeout time.Duration) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	s, err := uc.TakeSnapshot(ctx)
	if err != nil {
		log.Warn("health snapshot failed", zap.Error(err))
		return
	}
	log.Info("health snapshot taken", zap.Int("ideas", s.TotalIdeas), zap.Int("too_large", s.TooLarge),
		zap.Int("too_small", s.TooSmall), zap.Int("overlap", s.Overlap), zap.Int("suggestions", s.Suggested))
}

// Package portfolio is the portfolio service as a module: ideas ranked by
// their free-energy score, stages, right-sizing, progress and tags, on its
// own schema.
package portfolio

import (
	"context"
	"time"

	"go.uber.org/zap"

	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/portfolio/internal/handler"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
	"github.com/foundryhq/foundry/services/portfolio/internal/store/sqlstore"
)

// Config holds the portfolio's own settings.
type Config struct {
	// SnapshotInterval is how often a health snapshot is taken (one is
	// always taken at startup); 0 turns the schedule off.
	SnapshotInterval time.Duration
}

func (c *Config) register(fs *config.FlagSet) {
	fs.Duration(&c.SnapshotInterval, "rightsizing-snapshot-interval", "FOUNDRY_RIGHTSIZING_SNAPSHOT_INTERVAL", 6*time.Hour,
		"how often a portfolio health snapshot is taken (one is taken at startup); 0 disables the schedule")
}

// Module returns the portfolio module.
func Module() app.Module {
	cfg := &Config{}
	return app.Module{
		Name:       "portfolio",
		Service:    portfoliov1.PortfolioService_ServiceDesc.ServiceName,
		Migrations: store.Migrations(),
		Flags:      cfg.register,
		Start: func(ctx context.Context, h *app.Host) error {
			srv := handler.New(sqlstore.New(h.DB), h.DB, clock.Real{}, h.Settings.AdminKey)
			h.RegisterService(&portfoliov1.PortfolioService_ServiceDesc, srv)
			snapshot(ctx, h.Log, srv)
			if cfg.SnapshotInterval > 0 {
				h.Go(func(ctx context.Context) {
					t := time.NewTicker(cfg.SnapshotInterval)
					defer t.Stop()
					for {
						select {
						case <-ctx.Done():
							return
						case <-t.C:
							snapshot(ctx, h.Log, srv)
						}
					}
				})
			}
			return nil
		},
	}
}

// snapshot takes a health snapshot; a failure is logged, not fatal: the
// next one will try again.
func snapshot(ctx context.Context, log *zap.Logger, srv *handler.Handler) {
	s, err := srv.TakeSnapshot(ctx)
	if err != nil {
		log.Warn("health snapshot failed", zap.Error(err))
		return
	}
	log.Info("health snapshot taken", zap.Int("ideas", s.TotalIdeas), zap.Int("too_large", s.TooLarge),
		zap.Int("too_small", s.TooSmall), zap.Int("overlap", s.Overlap), zap.Int("suggestions", s.Suggested))
}

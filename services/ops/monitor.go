package ops

import (
	"context"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/periodic"
)

// runMonitor runs the economy monitor until ctx ends: every interval, on
// the one replica that holds the monitor's lease, the leader's check
// (usecase.CheckEconomy: ask the ledger, decide, apply, record). The lease
// lasts three intervals, so a leader that dies is replaced within about
// three intervals; a leader that stops cleanly releases it at once. A
// check that could not reach the ledger was logged by the use case; any
// other failure (recording it) is logged here.
func runMonitor(ctx context.Context, log *zap.Logger, uc *usecase.App, holder string, interval time.Duration) {
	defer func() { _ = uc.ReleaseMonitor(context.WithoutCancel(ctx), holder) }()
	leading := false
	periodic.Run(ctx, interval, func() {
		ok, err := uc.LeadMonitor(ctx, holder, 3*interval)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("economy monitor: lease", zap.Error(err))
		case ok && !leading:
			log.Info("economy monitor: this replica leads", zap.String("holder", holder))
		case !ok && leading:
			log.Info("economy monitor: another replica leads now")
		}
		leading = ok && err == nil
		if leading {
			if _, err := uc.CheckEconomy(ctx, holder); err != nil && ctx.Err() == nil && !errors.Is(err, usecase.ErrCheckFailed) {
				log.Warn("economy monitor: check failed", zap.Error(err))
			}
		}
	})
}

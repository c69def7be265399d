package ledger

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
)

// The scrubber's lease lasts scrubberLease and is renewed every
// scrubberRenew, as the sequencer's.
const (
	scrubberLease = 10 * time.Second
	scrubberRenew = 3 * time.Second
)

// runScrubber takes the scrubber's steps (usecase.Scrub) on the replica
// that holds its lease, until ctx ends, each after the pause the last one
// asked for: the slowest pace that still ends a cycle within its time. A
// finding is logged at error level when found (the use case has moved the
// economy already); a failed step is logged, once a minute while it keeps
// failing, and retried after the longest pause. The monitor sees a
// scrubber that stopped stepping or fell behind (usecase.ScrubReport.Late)
// and warns.
func runScrubber(ctx context.Context, log *zap.Logger, uc *usecase.App, holder string, cycle time.Duration) {
	defer func() { _ = uc.ReleaseScrubber(context.WithoutCancel(ctx), holder) }()
	var (
		leading bool
		renewed time.Time
		failed  string
		logged  time.Time
	)
	pause := usecase.ScrubPauseMax(cycle)
	for ctx.Err() == nil {
		if time.Since(renewed) >= scrubberRenew {
			ok, err := uc.LeadScrubber(ctx, holder, scrubberLease)
			if err != nil && ctx.Err() == nil {
				log.Warn("taking the audit scrubber's lease failed", zap.Error(err))
			}
			if ok != leading {
				log.Info("audit scrubber", zap.Bool("leading", ok))
			}
			leading, renewed = ok && err == nil, time.Now()
		}
		if leading {
			step, err := uc.Scrub(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				if msg := err.Error(); msg != failed || time.Since(logged) >= time.Minute {
					log.Error("a step of the audit scrubber failed; it is retried", zap.Error(err))
					failed, logged = msg, time.Now()
				}
				pause = usecase.ScrubPauseMax(cycle)
			case err == nil:
				failed, pause = "", step.Pause
				for _, f := range step.Found {
					log.Error("the audit scrubber found the ledger's records disagreeing with what it signed",
						zap.String("kind", f.Kind), zap.Int64("seq", f.Seq), zap.String("entry_id", f.EntryID),
						zap.String("account", f.Account), zap.String("detail", f.Detail))
				}
				if step.Completed {
					log.Info("audit scrubber: cycle complete", zap.Int64("cycle", step.Cycle), zap.Int("findings", len(step.Found)))
				}
			}
		} else {
			pause = scrubberRenew
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

package ledger

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
)

// The sequencer's lease lasts sequencerLease and is renewed every
// sequencerRenew; a replica that stops renewing is replaced after that.
const (
	sequencerLease = 10 * time.Second
	sequencerRenew = 3 * time.Second
)

// runSequencer integrates the audit queue into the log, on the replica
// that holds the sequencer's lease, until ctx ends: at once when a
// movement on this replica commits, otherwise every interval; back to back
// while batches come full. Two replicas that both believe they lead are
// safe (each batch locks the economy row, where the chain's head is), so
// the lease only saves the others the work. A failed batch (a log someone
// rewrote stops it: usecase.ErrLogTampered) is logged at error level each
// time; the queue then grows, and the monitor sees its age.
func runSequencer(ctx context.Context, log *zap.Logger, uc *usecase.App, holder string, every time.Duration) {
	defer func() { _ = uc.ReleaseSequencer(context.WithoutCancel(ctx), holder) }()
	var (
		leading bool
		renewed time.Time
		// failed and logged are the last failure and when it was logged.
		failed string
		logged time.Time
	)
	for ctx.Err() == nil {
		if time.Since(renewed) >= sequencerRenew {
			ok, err := uc.LeadSequencer(ctx, holder, sequencerLease)
			if err != nil && ctx.Err() == nil {
				log.Warn("taking the audit sequencer's lease failed", zap.Error(err))
			}
			if ok != leading {
				log.Info("audit sequencer", zap.Bool("leading", ok))
			}
			leading, renewed = ok && err == nil, time.Now()
		}
		full := false
		if leading {
			n, err := uc.Sequence(ctx)
			switch {
			case err != nil && ctx.Err() == nil:
				// The same failure every interval is logged once a minute.
				if msg := err.Error(); msg != failed || time.Since(logged) >= time.Minute {
					log.Error("sequencing the audit log failed; movements' audit entries wait in the queue", zap.Error(err))
					failed, logged = msg, time.Now()
				}
			case err == nil:
				failed = ""
				// Work done: look again at once, until the queue is empty.
				full = n > 0
			}
		}
		if full {
			continue
		}
		select {
		case <-ctx.Done():
		case <-uc.Sequenced():
		case <-time.After(every):
		}
	}
}

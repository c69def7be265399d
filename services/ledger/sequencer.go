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

// sequencerGather is how long the sequencer lets entries gather before a
// batch, once movements are coming in: a batch costs the same few round
// trips and a signed checkpoint whatever it holds, and taking each
// movement's entry as it committed made batches of one or two under load
// (the sequencer was 16 % of the ledger's CPU while 800 stakes a second
// committed). An entry waits that much longer to be sequenced; the
// monitor warns after a minute.
const sequencerGather = 20 * time.Millisecond

// runSequencer integrates the audit queue into the log, on the replica
// that holds the sequencer's lease, until ctx ends: sequencerGather after a
// movement on this replica commits, otherwise every interval; back to back
// while batches come full (batch entries), and sequencerGather apart while
// they come at all. Two replicas that both believe they lead are
// safe (each batch locks the economy row, where the chain's head is), so
// the lease only saves the others the work. A failed batch (a log someone
// rewrote stops it: usecase.ErrLogTampered) is logged at error level each
// time; the queue then grows, and the monitor sees its age.
func runSequencer(ctx context.Context, log *zap.Logger, uc *usecase.App, holder string, every time.Duration, batch int) {
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
		next := waitForWork
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
				next = paceAfter(n, batch)
			}
		}
		switch next {
		case sequenceNow:
			continue
		case gatherFirst:
			gather(ctx)
			continue
		}
		select {
		case <-ctx.Done():
		case <-uc.Sequenced():
			gather(ctx)
		case <-time.After(every):
		}
	}
}

// pace is what the sequencer does after a batch.
type pace int

const (
	waitForWork pace = iota // a commit on this replica, or the interval
	sequenceNow             // the next batch at once
	gatherFirst             // the next batch after sequencerGather
)

// paceAfter is the sequencer's pace after a batch that took n entries of
// at most batch: a full batch leaves more waiting, at once; a partial one
// says movements are coming in, to gather for a moment; none, that the
// queue is empty.
func paceAfter(n, batch int) pace {
	switch {
	case n >= batch:
		return sequenceNow
	case n > 0:
		return gatherFirst
	}
	return waitForWork
}

// gather waits sequencerGather, or until ctx ends.
func gather(ctx context.Context) {
	t := time.NewTimer(sequencerGather)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

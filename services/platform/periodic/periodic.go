// Package periodic runs a service's background work on a fixed interval
// until its context ends: rate polls, snapshots, pruning, lease renewals,
// health checks. One loop for all of them, so each caller says only what
// it does and how often.
package periodic

import (
	"context"
	"time"
)

// Run calls fn at once, then every interval until ctx ends. With an
// interval of zero or less fn runs once: the work happens at startup only.
func Run(ctx context.Context, every time.Duration, fn func()) {
	fn()
	if every <= 0 {
		return
	}
	After(ctx, every, fn)
}

// After calls fn every interval, the first time one interval from now,
// until ctx ends (no call starts after it has ended). The interval must be
// positive.
func After(ctx context.Context, every time.Duration, fn func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// A tick and the end can be ready together; the end wins.
			if ctx.Err() != nil {
				return
			}
			fn()
		}
	}
}

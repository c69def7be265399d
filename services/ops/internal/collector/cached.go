package collector

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/clock"
)

// Cached wraps a Collector so that a provider is asked at most once per TTL
// and concurrent requests share one call (singleflight): a burst of
// GET /api/automation/usage makes one request to the provider, not one
// each. The shared call runs detached from the requests that started it,
// bounded by CallTimeout, so a request that gives up at its latency budget
// does not cancel it: the call finishes in the background and fills the
// cache for the next request. Failures are not cached.
type Cached struct {
	inner       Collector
	ttl         time.Duration
	callTimeout time.Duration
	clock       clock.Clock
	group       singleflight.Group

	mu    sync.Mutex
	snaps []usage.Snapshot
	at    time.Time
}

// DefaultCallTimeout bounds one shared provider call.
const DefaultCallTimeout = 30 * time.Second

// NewCached returns inner cached for ttl; a nil clock is the wall clock.
func NewCached(inner Collector, ttl time.Duration, c clock.Clock) *Cached {
	if c == nil {
		c = clock.Real{}
	}
	return &Cached{inner: inner, ttl: ttl, callTimeout: DefaultCallTimeout, clock: c}
}

// fresh returns the cached snapshots when they are younger than the TTL.
func (c *Cached) fresh() ([]usage.Snapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.at != (time.Time{}) && c.clock.Now().Sub(c.at) < c.ttl {
		return c.snaps, true
	}
	return nil, false
}

// Family implements Collector.
func (c *Cached) Family() string { return c.inner.Family() }

// Collect implements Collector: the cached snapshots while fresh, else the
// shared call's result, or ctx's error when ctx ends first.
func (c *Cached) Collect(ctx context.Context) ([]usage.Snapshot, error) {
	if snaps, ok := c.fresh(); ok {
		return snaps, nil
	}
	ch := c.group.DoChan(c.inner.Family(), func() (any, error) {
		// A request that found the cache empty may get here just after
		// another shared call filled it and left the group: look again, or
		// that request would make a second call within the TTL.
		if snaps, ok := c.fresh(); ok {
			return snaps, nil
		}
		callCtx, cancel := context.WithTimeout(context.Background(), c.callTimeout)
		defer cancel()
		snaps, err := c.inner.Collect(callCtx)
		if err == nil {
			c.mu.Lock()
			c.snaps, c.at = snaps, c.clock.Now()
			c.mu.Unlock()
		}
		return snaps, err
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.([]usage.Snapshot), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Package ratelimit is a per-key token bucket (one bucket per client address,
// say). State lives in the process: a limit is a guard against bursts, not a
// record that must survive a restart.
package ratelimit

import (
	"sync"
	"time"

	"github.com/foundryhq/foundry/services/platform/clock"
)

// maxKeys bounds memory: past it, buckets that have refilled are forgotten.
const maxKeys = 100_000

// Limiter allows up to perMinute events per key per minute, with bursts up to
// perMinute. A Limiter with perMinute <= 0 allows everything.
type Limiter struct {
	perMinute float64
	clock     clock.Clock

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New returns a Limiter; perMinute <= 0 turns limiting off.
func New(perMinute int, c clock.Clock) *Limiter {
	if c == nil {
		c = clock.Real{}
	}
	return &Limiter{perMinute: float64(perMinute), clock: c, buckets: map[string]*bucket{}}
}

// Allow takes one token from key's bucket and reports whether there was one.
func (l *Limiter) Allow(key string) bool {
	if l == nil || l.perMinute <= 0 {
		return true
	}
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.buckets[key]
	if !ok {
		if len(l.buckets) >= maxKeys {
			l.sweep(now)
		}
		b = &bucket{tokens: l.perMinute, last: now}
		l.buckets[key] = b
	}
	l.refill(b, now)
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (l *Limiter) refill(b *bucket, now time.Time) {
	elapsed := now.Sub(b.last).Minutes()
	if elapsed > 0 {
		b.tokens = min(l.perMinute, b.tokens+elapsed*l.perMinute)
		b.last = now
	}
}

// sweep forgets full buckets: they behave exactly like absent ones.
func (l *Limiter) sweep(now time.Time) {
	for k, b := range l.buckets {
		l.refill(b, now)
		if b.tokens >= l.perMinute {
			delete(l.buckets, k)
		}
	}
}

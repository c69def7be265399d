// Package ratelimit limits events per key (one token bucket per client
// address, say), with golang.org/x/time/rate buckets kept in a bounded LRU.
// State lives in the process: a limit is a guard against bursts, not a
// record that must survive a restart.
package ratelimit

import (
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"

	"github.com/foundryhq/foundry/services/platform/clock"
)

// DefaultMaxKeys bounds memory: one bucket is about a hundred bytes, so
// 100 000 keys stay around 10 MB however many addresses a flood uses. Past
// the bound the least recently seen key is forgotten; it starts again with
// a full bucket, which is what an idle key would have anyway.
const DefaultMaxKeys = 100_000

// Limiter allows up to perMinute events per key per minute, with bursts up to
// perMinute. A nil Limiter, or one with perMinute <= 0, allows everything.
type Limiter struct {
	limit rate.Limit
	burst int
	clock clock.Clock

	// mu makes "find or create the key's bucket" one step, so two first
	// requests of a key share one bucket.
	mu      sync.Mutex
	buckets *lru.Cache[string, *rate.Limiter]
}

// New returns a Limiter keeping at most DefaultMaxKeys keys; perMinute <= 0
// turns limiting off. A nil clock is the wall clock.
func New(perMinute int, c clock.Clock) *Limiter {
	return NewBounded(perMinute, DefaultMaxKeys, c)
}

// NewBounded is New with its own bound on the keys kept (at least 1).
func NewBounded(perMinute, maxKeys int, c clock.Clock) *Limiter {
	if perMinute <= 0 {
		return nil
	}
	if c == nil {
		c = clock.Real{}
	}
	buckets, err := lru.New[string, *rate.Limiter](max(maxKeys, 1))
	if err != nil {
		panic(err) // only for a size below 1, excluded above
	}
	return &Limiter{
		limit:   rate.Limit(float64(perMinute) / 60),
		burst:   perMinute,
		clock:   c,
		buckets: buckets,
	}
}

// Allow takes one token from key's bucket. When there is none it reports
// false and how long until one is available (for a Retry-After answer); a
// refused request takes nothing, so retrying early does not push the wait
// further out.
func (l *Limiter) Allow(key string) (ok bool, retryAfter time.Duration) {
	if l == nil {
		return true, 0
	}
	now := l.clock.Now()
	r := l.bucket(key).ReserveN(now, 1)
	if !r.OK() {
		return false, time.Minute // cannot happen: the burst is at least 1
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return false, d
	}
	return true, 0
}

// Blocked reports whether key's bucket is empty now, and how long until
// it holds a token again, taking nothing: a guard that counts only some
// events (failures) checks before the event and takes with Allow after.
// A key never seen is not blocked, and is not remembered.
func (l *Limiter) Blocked(key string) (bool, time.Duration) {
	if l == nil {
		return false, 0
	}
	l.mu.Lock()
	b, ok := l.buckets.Peek(key)
	l.mu.Unlock()
	if !ok {
		return false, 0
	}
	now := l.clock.Now()
	if tokens := b.TokensAt(now); tokens < 1 {
		return true, time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second))
	}
	return false, 0
}

// Len is the number of keys remembered (at most the bound).
func (l *Limiter) Len() int {
	if l == nil {
		return 0
	}
	return l.buckets.Len()
}

func (l *Limiter) bucket(key string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if b, ok := l.buckets.Get(key); ok {
		return b
	}
	b := rate.NewLimiter(l.limit, l.burst) // starts full
	l.buckets.Add(key, b)
	return b
}

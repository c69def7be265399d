package ratelimit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/ratelimit"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := ratelimit.New(3, c)
	for i := range 3 {
		ok, wait := l.Allow("a")
		require.True(t, ok, "request %d within the burst", i)
		require.Zero(t, wait, "request %d waits for nothing", i)
	}
	ok, wait := l.Allow("a")
	require.False(t, ok, "fourth request in the same minute")
	require.Equal(t, 20*time.Second, wait, "3 a minute: the next token comes in 20 s")
	ok, _ = l.Allow("b")
	require.True(t, ok, "other keys have their own bucket")

	c.Advance(5 * time.Second)
	ok, wait = l.Allow("a")
	require.False(t, ok)
	require.Equal(t, 15*time.Second, wait, "a refused request takes nothing: the wait only shrinks")

	c.Advance(15 * time.Second) // a third of a minute refills one token
	ok, _ = l.Allow("a")
	require.True(t, ok)
	ok, _ = l.Allow("a")
	require.False(t, ok)

	c.Advance(time.Hour) // refills to the burst, not beyond
	for i := range 3 {
		ok, _ := l.Allow("a")
		require.True(t, ok, "request %d after an hour", i)
	}
	ok, _ = l.Allow("a")
	require.False(t, ok, "the burst is not exceeded after an idle hour")
}

func TestLimiterKeepsAtMostMaxKeys(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := ratelimit.NewBounded(1, 100, c)
	ok, _ := l.Allow("victim")
	require.True(t, ok)
	ok, _ = l.Allow("victim")
	require.False(t, ok, "the victim's bucket is empty")
	for i := range 10_000 {
		ok, _ := l.Allow(fmt.Sprintf("flood-%d", i))
		require.True(t, ok, "key %d is new", i)
	}
	require.Equal(t, 100, l.Len(), "got %d keys, want the bound 100", l.Len())
	ok, _ = l.Allow("victim")
	require.True(t, ok, "an evicted key starts again with a full bucket")
}

func TestDefaultBound(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(1, nil)
	for i := range ratelimit.DefaultMaxKeys + 10 {
		l.Allow(fmt.Sprint(i))
	}
	require.Equal(t, ratelimit.DefaultMaxKeys, l.Len())
}

func TestZeroRateAllowsEverything(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(0, nil)
	for i := range 1000 {
		ok, wait := l.Allow("a")
		require.True(t, ok, "request %d", i)
		require.Zero(t, wait)
	}
	require.Zero(t, l.Len(), "nothing is remembered when limiting is off")
}

// TestBlockedPeeksWithoutTaking: Blocked says whether a key's bucket is
// empty and for how long, and takes nothing, so a guard that counts only
// failures can ask before every attempt.
func TestBlockedPeeksWithoutTaking(t *testing.T) {
	t.Parallel()
	c := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	l := ratelimit.New(2, c)
	blocked, _ := l.Blocked("a")
	require.False(t, blocked, "a key never seen")
	require.Zero(t, l.Len(), "and not remembered")
	for range 2 {
		ok, _ := l.Allow("a")
		require.True(t, ok)
	}
	for range 3 {
		blocked, wait := l.Blocked("a")
		require.True(t, blocked, "the bucket is empty")
		require.Equal(t, 30*time.Second, wait, "2 a minute: the next token in 30 s, however often it is asked")
	}
	c.Advance(30 * time.Second)
	blocked, _ = l.Blocked("a")
	require.False(t, blocked)
	var nilLimiter *ratelimit.Limiter
	blocked, _ = nilLimiter.Blocked("a")
	require.False(t, blocked, "no limit")
}

package ratelimit_test

import (
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
		require.True(t, l.Allow("a"), "request %d within the burst", i)
	}
	require.False(t, l.Allow("a"), "fourth request in the same minute")
	require.True(t, l.Allow("b"), "other keys have their own bucket")

	c.Advance(20 * time.Second) // a third of a minute refills one token
	require.True(t, l.Allow("a"))
	require.False(t, l.Allow("a"))

	c.Advance(time.Hour) // refills to the burst, not beyond
	for range 3 {
		require.True(t, l.Allow("a"))
	}
	require.False(t, l.Allow("a"))
}

func TestZeroRateAllowsEverything(t *testing.T) {
	t.Parallel()
	l := ratelimit.New(0, nil)
	for range 1000 {
		require.True(t, l.Allow("a"))
	}
}

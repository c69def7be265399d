package usecase

import (
	"testing"
	"time"
)

// TestScrubPause: the pause after a step spreads the chain walk's
// remaining slices over what is left of 80 % of the cycle, within its
// bounds, and never lets the scrubber step more than 1/ScrubDuty of the
// time.
func TestScrubPause(t *testing.T) {
	t.Parallel()
	began := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	hour := scrubPace{cycle: time.Hour, slice: 1000, startedAt: began, now: began}
	for _, c := range []struct {
		name string
		edit func(*scrubPace)
		want time.Duration
	}{
		// 48 minutes over 1 000 slices of a log of 10^6 entries (999 999
		// left: 1 000 steps).
		{"on schedule", func(p *scrubPace) { p.remaining = 999_999 }, 2880 * time.Millisecond},
		{"a small log waits the longest pause", func(p *scrubPace) { p.remaining = 10 }, 5 * time.Second},
		{"behind schedule goes at the fastest pace", func(p *scrubPace) {
			p.remaining, p.now = 999_999, began.Add(50*time.Minute)
		}, ScrubPauseMin},
		{"a slow step is paid for in pause", func(p *scrubPace) {
			p.remaining, p.now, p.took = 999_999, began.Add(50*time.Minute), 40*time.Millisecond
		}, 19 * 40 * time.Millisecond},
		{"the duty bound holds on schedule too", func(p *scrubPace) {
			p.remaining, p.took = 999_999, 200*time.Millisecond
		}, 19 * 200 * time.Millisecond},
		{"the other walks go fast once the chain is done", func(p *scrubPace) { p.chainDone = true }, ScrubPauseMin},
		{"a completed cycle waits the longest pause", func(p *scrubPace) { p.chainDone, p.completed = true, true }, 5 * time.Second},
		{"a completed cycle after a slow step", func(p *scrubPace) {
			p.chainDone, p.completed, p.took = true, true, time.Second
		}, 19 * time.Second},
		{"a short cycle's longest pause is a tenth of it", func(p *scrubPace) {
			p.cycle, p.chainDone, p.completed = 2*time.Second, true, true
		}, 200 * time.Millisecond},
		{"a very short cycle still pauses the shortest pause", func(p *scrubPace) {
			p.cycle, p.remaining = 500*time.Millisecond, 999_999
		}, ScrubPauseMin},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := hour
			c.edit(&p)
			if got := scrubPause(p); got != c.want {
				t.Errorf("scrubPause(%+v) = %s, want %s", p, got, c.want)
			}
		})
	}
}

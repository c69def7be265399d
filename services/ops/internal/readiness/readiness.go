// Package readiness decides whether Foundry can serve: every part it depends
// on is probed concurrently, each within a time limit, and the verdict names
// the parts that failed. Optional parts (the telemetry database) are
// reported but never fail the verdict.
package readiness

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Probe checks one part; a nil error means it is healthy.
type Probe struct {
	Name  string
	Check func(ctx context.Context) error
	// Optional parts are reported but do not make Failing non-empty.
	Optional bool
}

// Result is one probe's outcome.
type Result struct {
	Name     string
	OK       bool
	Optional bool
	Detail   string
}

// Run runs every probe concurrently, each bounded by timeout, and returns the
// results in probe order. A probe that ignores its context is abandoned at
// the timeout ("timed out"), so Run never takes much longer than timeout.
func Run(ctx context.Context, probes []Probe, timeout time.Duration) []Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type outcome struct {
		i   int
		err error
	}
	done := make(chan outcome, len(probes)) // buffered: an abandoned probe never blocks
	for i, p := range probes {
		go func() { done <- outcome{i, p.Check(ctx)} }()
	}
	results := make([]Result, len(probes))
	for i, p := range probes {
		results[i] = result(p, errors.New("timed out"))
	}
	for range probes {
		select {
		case o := <-done:
			results[o.i] = result(probes[o.i], o.err)
		case <-ctx.Done():
			return results
		}
	}
	return results
}

func result(p Probe, err error) Result {
	r := Result{Name: p.Name, OK: err == nil, Optional: p.Optional}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		r.Detail = "timed out" // the same words whether the probe or Run gave up
	case err != nil:
		r.Detail = err.Error()
	}
	return r
}

// Failing summarises the failed required results ("ledger: not serving;
// ..."), or "" when all of them passed.
func Failing(results []Result) string {
	var parts []string
	for _, r := range results {
		if !r.OK && !r.Optional {
			parts = append(parts, fmt.Sprintf("%s: %s", r.Name, r.Detail))
		}
	}
	return strings.Join(parts, "; ")
}

// Package readiness decides whether Foundry can serve: every part it depends
// on is probed concurrently, each within a time limit, and the verdict names
// the parts that failed.
package readiness

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Probe checks one part; a nil error means it is healthy.
type Probe struct {
	Name  string
	Check func(ctx context.Context) error
}

// Result is one probe's outcome.
type Result struct {
	Name   string
	OK     bool
	Detail string
}

// Run runs every probe concurrently, each bounded by timeout, and returns the
// results in probe order.
func Run(ctx context.Context, probes []Probe, timeout time.Duration) []Result {
	results := make([]Result, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			err := p.Check(pctx)
			results[i] = Result{Name: p.Name, OK: err == nil}
			if err != nil {
				results[i].Detail = err.Error()
			}
		})
	}
	wg.Wait()
	return results
}

// Failing summarises the failed results ("ledger: not serving; ..."), or ""
// when all passed.
func Failing(results []Result) string {
	var parts []string
	for _, r := range results {
		if !r.OK {
			parts = append(parts, fmt.Sprintf("%s: %s", r.Name, r.Detail))
		}
	}
	return strings.Join(parts, "; ")
}

package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/foundryhq/foundry/bench/internal/harness"
)

// latencyFloor is the least a p99 counts as in a ratio: below a
// millisecond the noise of a shared machine (a scheduling delay, a GC
// pause) is the measurement, and 0.3 ms against 0.6 ms would read as a
// doubling.
const latencyFloor = time.Millisecond

// ratio is a seeded measure over its fresh one, each floored at floor.
func ratio(fresh, seeded, floor float64) float64 { return max(seeded, floor) / max(fresh, floor) }

// job is a background job's cost in both phases.
type job struct {
	name, unit    string
	fresh, seeded float64
	// shown are fresh and seeded as the table shows them.
	shown [2]string
	floor float64
	// missing says why there is no ratio ("" when there is one).
	missing string
}

func report(w io.Writer, o options, fresh, seeded *phase, s *seeding) {
	const none = "—"
	calls := s.totalCalls()
	fmt.Fprintf(w, "\nhistory: %d rows seeded into each dominant table (journal and audit entries, contributions, tasks, graph edges) "+
		"in %s through the API: %d calls (%.0f calls/s, %.0f rows/s), %d failed, %d retried; audit backlog integrated in %s\n",
		s.rows, s.took.Round(time.Second), calls, float64(calls)/s.took.Seconds(), float64(4*s.rows)/s.took.Seconds(),
		sum(s.failed[:]), s.retried, s.drain.Round(time.Millisecond))
	fmt.Fprintf(w, "calls: %s\n", s.byKind())
	fmt.Fprintf(w, "sizes when measured (the fresh phase's writes included): fresh: %s; seeded: %s\n", fresh.sizes, seeded.sizes)
	fmt.Fprintf(w, "%d clients, %s per route and phase; p99 ratio: seeded ÷ fresh, each p99 floored at %s so sub-millisecond noise does not dominate; "+
		"CPU: µs per call of Foundry's process plus the scratch database's Postgres backends\n\n", o.concurrency, o.duration, latencyFloor)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "route\tfresh req/s\tp50\tp99\tseeded req/s\tp50\tp99\tp99 ratio\tcpu µs/call fresh\tseeded\terrors fresh\tseeded\t")
	var (
		worstRoute = none
		worst      float64
		failures   []string
	)
	for i, f := range fresh.results {
		sd := seeded.results[i]
		fmt.Fprintf(tw, "%s\t", f.route.name)
		for _, r := range []routeResult{f, sd} {
			switch {
			case r.skipped != "":
				fmt.Fprintf(tw, "%s\t%s\t%s\t", none, none, "skipped")
			case r.stats.Requests == 0:
				fmt.Fprintf(tw, "%s\t%s\t%s\t", none, none, "failed")
			default:
				fmt.Fprintf(tw, "%.0f\t%s\t%s\t", r.stats.Rate(), ms(r.stats.Percentile(50)), ms(r.stats.Percentile(99)))
			}
		}
		if ok(f) && ok(sd) {
			p99 := ratio(float64(f.stats.Percentile(99)), float64(sd.stats.Percentile(99)), float64(latencyFloor))
			fmt.Fprintf(tw, "%.2f\t", p99)
			if p99 > worst {
				worst, worstRoute = p99, f.route.name
			}
		} else {
			fmt.Fprintf(tw, "%s\t", none)
		}
		for _, r := range []routeResult{f, sd} {
			if ok(r) {
				fmt.Fprintf(tw, "%.0f\t", r.stats.PerRequest(r.stats.CPU.Process()))
			} else {
				fmt.Fprintf(tw, "%s\t", none)
			}
		}
		for k, r := range []routeResult{f, sd} {
			if r.stats == nil {
				fmt.Fprintf(tw, "%s\t", none)
				continue
			}
			fmt.Fprintf(tw, "%d\t", r.stats.Errors)
			if r.stats.Errors > 0 {
				failures = append(failures, fmt.Sprintf("%s (%s): %d of %d calls failed; first: %s", f.route.name, []string{fresh.name, seeded.name}[k],
					r.stats.Errors, r.stats.Errors+r.stats.Requests, r.stats.FirstError))
			}
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
	for _, f := range failures {
		fmt.Fprintf(w, "  %s\n", f)
	}

	jobs := jobsOf(o, fresh, seeded)
	fmt.Fprintf(w, "\nbackground jobs: CPU in an idle window of %s with no request (Postgres: the scratch database's backends, autovacuum's included); "+
		"the coherence check: the ledger's CheckCoherence as the monitor calls it (grpc_server_handling_seconds), one run once the check has caught up "+
		"with the phase's writes, so it reads nothing new\n\n", o.idle)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "job\tunit\tfresh\tseeded\tratio\t")
	worstJob, worstJobRatio := none, 0.0
	for _, j := range jobs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t", j.name, j.unit, j.shown[0], j.shown[1])
		if j.missing != "" {
			fmt.Fprintf(tw, "%s (%s)\t\n", none, j.missing)
			continue
		}
		r := ratio(j.fresh, j.seeded, j.floor)
		fmt.Fprintf(tw, "%.2f\t\n", r)
		if r > worstJobRatio {
			worstJobRatio, worstJob = r, j.name
		}
	}
	_ = tw.Flush()
	fmt.Fprintf(w, "CPU a minute is floored at one /proc tick (%s) per window, the coherence check's time at %s, in the ratios\n",
		harness.Tick, latencyFloor)

	fmt.Fprintf(w, "\nRSS of Foundry's process at the end of each phase: fresh %.1f MiB, seeded %.1f MiB (%.2f×)\n",
		fresh.rss, seeded.rss, seeded.rss/fresh.rss)
	fmt.Fprintf(w, "scale: worst route p99 ratio %.2f (%s), worst job ratio %.2f (%s) at %d rows\n",
		worst, worstRoute, worstJobRatio, worstJob, s.rows)
}

// ok is whether a route was measured and answered at least once.
func ok(r routeResult) bool { return r.skipped == "" && r.stats != nil && r.stats.Requests > 0 }

func jobsOf(o options, fresh, seeded *phase) []job {
	perMin := func(d time.Duration) float64 { return msPerMinute(d, o.idle) }
	idle := func(name string, f, s time.Duration) job {
		j := job{name: name, unit: "ms CPU/min", fresh: perMin(f), seeded: perMin(s), floor: perMin(harness.Tick)}
		j.shown = [2]string{fmt.Sprintf("%.0f", j.fresh), fmt.Sprintf("%.0f", j.seeded)}
		return j
	}
	coherence := job{name: "coherence check", unit: "ms/run", floor: float64(latencyFloor.Milliseconds()), shown: [2]string{"—", "—"}}
	if fresh.check == nil || seeded.check == nil {
		coherence.missing = "Foundry's metrics do not time CheckCoherence"
	} else {
		coherence.fresh, coherence.seeded = float64(fresh.check.last.Microseconds())/1000, float64(seeded.check.last.Microseconds())/1000
		coherence.shown = [2]string{fmt.Sprintf("%.1f", coherence.fresh), fmt.Sprintf("%.1f", coherence.seeded)}
	}
	return []job{
		idle("foundry idle", fresh.idleFoundry, seeded.idleFoundry),
		idle("postgres idle", fresh.idlePostgres, seeded.idlePostgres),
		coherence,
	}
}

func sum(v []int64) (n int64) {
	for _, x := range v {
		n += x
	}
	return n
}

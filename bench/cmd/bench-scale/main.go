// Command bench-scale shows what a large history costs Foundry: the same
// routes and background jobs measured on a young system and, in the same
// run, on the same system after its dominant tables have grown. It creates
// a scratch Postgres database, starts Foundry on it (every module in one
// process), makes a few fixtures through the API (contributors, ideas,
// assets, tasks, a graph hub) and measures (phase "fresh"): each route at a
// fixed concurrency for a fixed time, then an idle window with no request,
// in which only Foundry's background jobs run. Then it grows every dominant
// table by -rows rows through the public API (deposits and stakes, so
// journal and audit entries; contributions; tasks created and finished;
// graph edges), waits for the audit sequencer to integrate the backlog and
// for the coherence check to read it, and measures again (phase "seeded")
// with the same routes and fixtures. After each burst of writes it runs
// VACUUM (ANALYZE), as a server's autovacuum would (-vacuum). It
// prints both phases side by side — p50, p99, requests/s, CPU per call of
// Foundry and of the database's Postgres backends — the idle CPU of each,
// the coherence check's duration per run, Foundry's RSS, and last one line:
//
//	scale: worst route p99 ratio R (route), worst job ratio J (job) at N rows
//
// `make bench-scale` runs it; docs/performance.md records its numbers.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foundryhq/foundry/bench/internal/harness"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-scale:", err)
		os.Exit(1)
	}
}

type options struct {
	databaseURL  string
	foundry      string
	rows         int
	seedWorkers  int
	concurrency  int
	duration     time.Duration
	warmup       time.Duration
	idle         time.Duration
	cursorPages  int
	drainTimeout time.Duration
	vacuum       bool
	progress     time.Duration
	routes       string
}

func run() (err error) {
	var o options
	rows, err := strconv.Atoi(harness.EnvOr("BENCH_SCALE_ROWS", "100000"))
	if err != nil {
		return fmt.Errorf("BENCH_SCALE_ROWS: %w", err)
	}
	flag.StringVar(&o.databaseURL, "database-url", harness.EnvOr("FOUNDRY_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"Postgres server to create the scratch database on (FOUNDRY_BENCH_DATABASE_URL)")
	flag.StringVar(&o.foundry, "foundry", "bin/foundry", "the Foundry binary")
	flag.IntVar(&o.rows, "rows", rows, "rows seeded into each dominant table (BENCH_SCALE_ROWS)")
	flag.IntVar(&o.seedWorkers, "seed-workers", 16, "concurrent clients seeding")
	flag.IntVar(&o.concurrency, "c", 4, "concurrent clients per measured route")
	flag.DurationVar(&o.duration, "d", 5*time.Second, "how long each route is measured, per phase")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "unrecorded load before each route's measurement")
	flag.DurationVar(&o.idle, "idle", 30*time.Second, "idle window per phase, in which only the background jobs run")
	flag.IntVar(&o.cursorPages, "cursor-pages", 5, "pages followed by cursor to reach the deep page of the cursor routes")
	flag.DurationVar(&o.drainTimeout, "drain-timeout", 30*time.Minute, "how long to wait for the audit sequencer's backlog after seeding, and for the coherence check to catch up with a phase's writes")
	flag.BoolVar(&o.vacuum, "vacuum", true,
		"VACUUM (ANALYZE) the scratch database after each burst of writes (the fixtures, the write routes, the seed), as a server's autovacuum would; "+
			"false: what a server without autovacuum does")
	flag.DurationVar(&o.progress, "progress", 5*time.Second, "how often seeding reports its progress")
	flag.StringVar(&o.routes, "routes", "", "comma-separated route names to measure (default: all)")
	flag.Parse()
	if o.rows < 1 || o.seedWorkers < 1 || o.concurrency < 1 || o.cursorPages < 1 {
		return errors.New("-rows, -seed-workers, -c and -cursor-pages must be at least 1")
	}

	// An interrupt cancels ctx: every step returns, and the deferred
	// clean-up stops Foundry and drops the scratch database.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer func() {
		if err != nil && ctx.Err() != nil {
			err = fmt.Errorf("interrupted: %w", err)
		}
	}()
	dbURL, drop, err := harness.ScratchDatabase(ctx, o.databaseURL)
	if err != nil {
		return err
	}
	defer drop()

	httpAddr, adminAddr := harness.FreeAddr(), harness.FreeAddr()
	foundry, err := harness.StartFoundry(o.foundry, dbURL, httpAddr, harness.FreeAddr(), adminAddr, false)
	if err != nil {
		return err
	}
	defer foundry.Stop()
	if err := harness.WaitHTTP(ctx, "http://"+httpAddr+"/api/ready", 60*time.Second); err != nil {
		return fmt.Errorf("foundry: %w\n%s", err, foundry.Output())
	}
	fmt.Printf("foundry %s up on %s (every module in one process; database %s)\n", o.foundry, httpAddr, harness.Redact(dbURL))

	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return fmt.Errorf("connect to the scratch database: %w", err)
	}
	defer conn.Close(context.Background())
	sys := &system{
		base: "http://" + httpAddr, metrics: "http://" + adminAddr + "/metrics", foundry: foundry, conn: conn,
		client: &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: o.seedWorkers}},
	}

	fx, err := makeFixtures(ctx, sys)
	if err != nil {
		return fmt.Errorf("fixtures: %w", err)
	}
	routes, err := selectRoutes(routeTable(fx), o.routes)
	if err != nil {
		return err
	}
	fresh, err := measurePhase(ctx, sys, o, "fresh", routes)
	if err != nil {
		return fmt.Errorf("fresh: %w", err)
	}
	seeding, err := seed(ctx, sys, o, fx)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	if seeding.drain, err = drainAudit(ctx, sys, o.drainTimeout); err != nil {
		return fmt.Errorf("the audit sequencer's backlog: %w", err)
	}
	fmt.Printf("audit backlog integrated %s after seeding ended\n", seeding.drain.Round(time.Millisecond))
	if err := vacuum(ctx, sys, o, "after the seed"); err != nil {
		return err
	}
	// The coherence check reconciles a slice of the backlog a run: measured
	// while it catches up, the routes would pay for a burst no ledger
	// that grew over months sees.
	if seeding.catchUp, err = settleCoherence(ctx, sys, o.drainTimeout); err != nil {
		return fmt.Errorf("the coherence check's catching up with the seed: %w", err)
	}
	if c := seeding.catchUp; c != nil {
		fmt.Printf("the coherence check caught up with the seed in %s: %d runs (%d failed), %s of checking in all\n", c.took.Round(time.Second),
			c.runs, c.failed, ms(time.Duration(c.seconds*float64(time.Second))))
	}
	seeded, err := measurePhase(ctx, sys, o, "seeded", routes)
	if err != nil {
		return fmt.Errorf("seeded: %w", err)
	}
	report(os.Stdout, o, fresh, seeded, seeding)
	return nil
}

// system is the Foundry under measurement.
type system struct {
	base    string // Foundry's HTTP address, as a URL
	metrics string // its admin address's /metrics
	foundry *harness.Process
	// conn is a connection to the scratch database of the harness's own:
	// it lists the database's backends and vacuums, nothing else.
	conn *pgx.Conn
	// client makes the fixtures' and the seed's calls.
	client *http.Client
}

// call sends one JSON request to Foundry and decodes a 2xx answer into out.
func (s *system) call(ctx context.Context, method, path string, body any, h http.Header, out any) error {
	return harness.Call(ctx, s.client, s.base, method, path, body, h, out)
}

// selectRoutes keeps the routes -routes names (all without it).
func selectRoutes(all []route, names string) ([]route, error) {
	if names == "" {
		return all, nil
	}
	var out []route
	for name := range strings.SplitSeq(names, ",") {
		found := false
		for _, r := range all {
			if r.name == name {
				out, found = append(out, r), true
			}
		}
		if !found {
			return nil, fmt.Errorf("-routes: no route %q", name)
		}
	}
	return out, nil
}

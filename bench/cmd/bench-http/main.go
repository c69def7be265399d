// Command bench-http measures Foundry's hot REST routes against two
// limits running the same SQL against the same database: a single-hop
// server (bench/bare: net/http → pgxpool → Postgres) and a bare two-hop
// pair (bench/twohop: a net/http front → gRPC over loopback → a bare gRPC
// server of Foundry's protos → pgxpool → Postgres), the limit of Foundry's
// own architecture. It creates a scratch database, starts Foundry (by
// default as two processes, the gateway and the modules, so each side's
// CPU is measured apart), the bare server and the two-hop pair on it,
// seeds it through Foundry's API, then drives every route at a fixed
// concurrency in alternating rounds (Foundry, bare, two-hop, Foundry, …,
// so drift on a noisy machine hits all alike) and prints throughput,
// latencies, the ratios Foundry ÷ bare and Foundry ÷ two-hop, and each
// process's CPU time per request. Any failed request fails the run; a
// route the two-hop front does not serve is reported as "—" for it.
// `make bench-http` runs it; docs/performance.md#http records its
// numbers.
//
// With -engine sqlite Foundry runs on its embedded SQLite in a scratch
// directory instead, and only Foundry is measured: the baselines are
// Postgres only.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foundryhq/foundry/bench/internal/harness"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-http:", err)
		os.Exit(1)
	}
}

type options struct {
	databaseURL  string
	foundry      string
	foundrySplit bool
	bare         string
	twohopFront  string
	twohopBack   string
	concurrency  int
	round        time.Duration
	rounds       int
	// compareGateway is -compare-gateway's binary ("" without it).
	compareGateway string
	warmup         time.Duration
	routes         string
	profile        string
	services       bool
	engine         string
	stakers        int
}

func run() error {
	var o options
	flag.StringVar(&o.databaseURL, "database-url", harness.EnvOr("FOUNDRY_BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"),
		"Postgres server to create the scratch database on (FOUNDRY_BENCH_DATABASE_URL)")
	flag.StringVar(&o.foundry, "foundry", "bin/foundry", "the Foundry binary")
	flag.BoolVar(&o.foundrySplit, "foundry-split", true,
		"run Foundry as two processes, the gateway (-target=gateway) and every service (-target=<the services>), and report each one's CPU; false: all modules in one process")
	flag.StringVar(&o.bare, "bare", "bin/bench-bare", "the bare single-hop baseline server")
	flag.StringVar(&o.twohopFront, "twohop-front", "bin/bench-twohop-front", "the two-hop baseline's HTTP front (bench/twohop/front)")
	flag.StringVar(&o.twohopBack, "twohop-back", "bin/bench-twohop-back", "the two-hop baseline's gRPC back end (bench/twohop/back)")
	flag.IntVar(&o.concurrency, "c", 16, "concurrent clients")
	flag.DurationVar(&o.round, "round", 3*time.Second, "length of one round")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds per server and route (alternating)")
	flag.StringVar(&o.compareGateway, "compare-gateway", "",
		"a second Foundry binary to run as a second gateway beside Foundry's, against the same services (with -foundry-split), "+
			"reported as foundry-b: a change to the gateway measured against the build before it in one run")
	flag.DurationVar(&o.warmup, "warmup", time.Second, "unrecorded load before a route's rounds, per server")
	flag.StringVar(&o.routes, "routes", "", "comma-separated route names to run (default: all)")
	flag.StringVar(&o.profile, "profile", "", "directory to save a CPU profile of Foundry per route (taken during its first round; split: one per process, <route>.gateway and <route>.modules)")
	flag.BoolVar(&o.services, "services", true, "finally, start each service alone and report its idle RSS")
	flag.StringVar(&o.engine, "engine", "postgres", "Foundry's database: postgres (a scratch database, measured against the baselines) or sqlite (embedded, in a scratch directory; Foundry alone)")
	flag.IntVar(&o.stakers, "contributors", 1000, "contributors the stake route stakes from, each with its own session and CC")
	flag.Parse()
	if o.engine != "postgres" && o.engine != "sqlite" {
		return fmt.Errorf("-engine %q: want postgres or sqlite", o.engine)
	}
	if o.stakers < 1 {
		return errors.New("-contributors must be at least 1")
	}
	if o.compareGateway != "" && !o.foundrySplit {
		return errors.New("-compare-gateway needs -foundry-split: the second gateway calls Foundry's services process")
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var dbURL string
	if o.engine == "postgres" {
		u, drop, err := harness.ScratchDatabase(ctx, o.databaseURL)
		if err != nil {
			return err
		}
		defer drop()
		dbURL = u
	}
	// data is what Foundry keeps its data in (see startFoundry).
	data := dbURL
	if o.engine == "sqlite" {
		dir, err := os.MkdirTemp("", "bench-http-sqlite-*")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		data = dir
	}

	if o.profile != "" {
		if err := os.MkdirAll(o.profile, 0o755); err != nil {
			return err
		}
	}
	foundryAddr := harness.FreeAddr()
	foundry, err := startFoundrySet(ctx, o, data, foundryAddr)
	if err != nil {
		return err
	}
	defer foundry.stop()
	if dbURL != "" {
		fmt.Printf("foundry %s up on %s (%s; database %s)\n", o.foundry, foundryAddr, foundry.shape, harness.Redact(dbURL))
	} else {
		fmt.Printf("foundry %s up on %s (%s; SQLite in %s)\n", o.foundry, foundryAddr, foundry.shape, data)
	}

	seed, err := seedData(ctx, "http://"+foundryAddr, o.stakers)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	targets := []target{{name: "foundry", base: "http://" + foundryAddr, procs: foundry.procs}}
	if foundry.compare != nil {
		fmt.Printf("foundry-b: the gateway of %s up on %s, calling the same services\n", o.compareGateway, foundry.compareAddr)
		targets = append(targets, target{name: "foundry-b", base: "http://" + foundry.compareAddr, procs: foundry.compare})
	}
	if dbURL != "" {
		bareAddr := harness.FreeAddr()
		bare, err := harness.Start(o.bare, nil, "-addr="+bareAddr, "-database-url="+dbURL, "-pool=16")
		if err != nil {
			return err
		}
		defer bare.Stop()
		if err := harness.WaitHTTP(ctx, "http://"+bareAddr+"/api/agent/pipeline-status", 30*time.Second); err != nil {
			return fmt.Errorf("bare: %w\n%s", err, bare.Output())
		}
		fmt.Printf("bare %s up on %s\n", o.bare, bareAddr)
		targets = append(targets, target{name: "bare", base: "http://" + bareAddr, procs: []proc{{p: bare}}})

		twohop, err := startTwoHop(ctx, o, dbURL)
		if err != nil {
			return err
		}
		defer twohop.stop()
		targets = append(targets, twohop.target)
	}
	for _, p := range foundry.procs {
		if rss, err := harness.ResidentMiB(p.p.Pid()); err == nil {
			if p.role == "" {
				// All modules share the process: any one service's RSS is below it.
				fmt.Printf("foundry idle RSS after seeding: %.1f MiB (every module in one process)\n", rss)
			} else {
				fmt.Printf("foundry %s idle RSS after seeding: %.1f MiB\n", p.role, rss)
			}
		}
	}

	var conn *pgx.Conn
	if dbURL != "" {
		if conn, err = pgx.Connect(ctx, dbURL); err != nil {
			return err
		}
		defer conn.Close(ctx)
	}
	routes := routeTable(seed, conn)
	if o.routes != "" {
		want := strings.Split(o.routes, ",")
		routes = slices.DeleteFunc(routes, func(r route) bool { return !slices.Contains(want, r.name) })
	}
	if conn == nil {
		routes = slices.DeleteFunc(routes, func(r route) bool {
			if r.postgres {
				fmt.Printf("%-18s skipped: its preparation writes to Postgres directly\n", r.name)
			}
			return r.postgres
		})
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 2 * o.concurrency, MaxIdleConnsPerHost: 2 * o.concurrency, IdleConnTimeout: time.Minute,
	}}

	var results []result
	for _, r := range routes {
		if r.prepare != nil {
			if err := r.prepare(ctx); err != nil {
				return fmt.Errorf("%s: prepare: %w", r.name, err)
			}
		}
		res := result{route: r.name, write: r.write, stats: map[string]*harness.Stats{}}
		// A server that lacks the route (the two-hop front serves only the
		// routes it lists) is left out of its rounds and reported as "—".
		var serving []target
		for _, t := range targets {
			if t.serves != nil && !t.serves[r.pattern] {
				continue
			}
			serving = append(serving, t)
			res.stats[t.name] = &harness.Stats{}
			if _, err := drive(ctx, client, t, r, o.concurrency, o.warmup); err != nil {
				return fmt.Errorf("%s against %s (warm-up): %w", r.name, t.name, err)
			}
		}
		for round := range o.rounds {
			for _, t := range serving {
				var profiled chan error
				if o.profile != "" && round == 0 && t.name == "foundry" {
					profiled = make(chan error, len(t.procs))
					for _, p := range t.procs {
						name := r.name
						if p.role != "" {
							name += "." + p.role
						}
						go func() { profiled <- saveProfile(ctx, p.admin, o.round, o.profile+"/"+name+".cpu.pprof") }()
					}
				}
				before, cerr := harness.SampleCPU(t.pids())
				s, err := drive(ctx, client, t, r, o.concurrency, o.round)
				after, cerr2 := harness.SampleCPU(t.pids())
				if cerr = errors.Join(cerr, cerr2); cerr != nil {
					return fmt.Errorf("%s: CPU time: %w", r.name, cerr)
				}
				if profiled != nil {
					for range t.procs {
						if perr := <-profiled; perr != nil {
							return fmt.Errorf("%s: profile: %w", r.name, perr)
						}
					}
				}
				if err != nil {
					return fmt.Errorf("%s against %s: %w", r.name, t.name, err)
				}
				s.CPU = after.Sub(before)
				res.stats[t.name].Add(s)
			}
		}
		results = append(results, res)
		fmt.Printf("%-18s done\n", r.name)
	}
	report(os.Stdout, results, targets, o)
	if err := reportScrub(ctx, os.Stdout, "http://"+foundryAddr); err != nil {
		return fmt.Errorf("the audit scrubber's progress: %w", err)
	}
	if o.services {
		// Last, so the services' own start-up does not disturb the rounds.
		lines, err := serviceRSS(ctx, o.foundry, data)
		if err != nil {
			return fmt.Errorf("idle RSS per service: %w", err)
		}
		fmt.Printf("\nidle RSS, each in its own process: %s\n", strings.Join(lines, ", "))
	}
	return nil
}

// saveProfile saves a CPU profile of the next d (whole seconds) to path.
func saveProfile(ctx context.Context, adminAddr string, d time.Duration, path string) error {
	secs := max(1, int(d.Seconds()))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", adminAddr, secs), nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// seeded is what the seed made.
type seeded struct {
	// contributor is the one contributor of contribution and stake-one.
	contributor, token string
	stakers            []staker
	// operator and worker are API tokens' Authorization headers.
	operator, worker http.Header
	assets, ideas    []string
}

// staker is one of the stake route's contributors and its session's
// Authorization header.
type staker struct {
	id   string
	auth http.Header
}

const (
	// stakeCC is what each stake moves: credit.MinMovement, the least a
	// client may move, so a staker's funds last longest.
	stakeCC = 0.01
	// stakesEach is how many stakes each staker is funded for: more than
	// any run makes from one contributor.
	stakesEach = 200_000
	// seedWorkers register and fund the stakers concurrently.
	seedWorkers = 16
)

// seedClient keeps a connection per seed worker alive (the default
// client keeps two per host).
var seedClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: seedWorkers}}

// seedData makes, through Foundry's API: a contributor with CC to stake,
// stakers contributors more each with its session and CC for stakesEach
// stakes, an operator's and a worker's API tokens, 64 assets to contribute
// to, 200 ideas, and finished agent tasks for the metrics to describe.
func seedData(ctx context.Context, base string, stakers int) (seeded, error) {
	var s seeded
	admin := http.Header{"X-API-Key": {harness.AdminKey}}
	for role, dst := range map[string]*http.Header{"operator": &s.operator, "worker": &s.worker} {
		var tok struct {
			Token string `json:"token"`
		}
		if err := call(ctx, base, http.MethodPost, "/api/tokens", map[string]any{"name": "bench " + role, "role": role}, admin, &tok); err != nil {
			return s, err
		}
		*dst = http.Header{"Authorization": {"Bearer " + tok.Token}}
	}
	var err error
	if s.contributor, s.token, err = register(ctx, base, "bench"); err != nil {
		return s, err
	}
	for i := range 10 {
		body := map[string]any{"contributor_id": s.contributor, "amount_usd": 1000, "reference": fmt.Sprintf("bench-%d", i)}
		if err := call(ctx, base, http.MethodPost, "/api/cc/deposit", body, admin, nil); err != nil {
			return s, err
		}
	}
	if s.stakers, err = seedStakers(ctx, base, admin, stakers); err != nil {
		return s, err
	}
	// Contributions to one asset serialise on its row: 64 of them measure
	// the path, not that lock.
	for i := range 64 {
		var asset struct {
			ID string `json:"id"`
		}
		if err := call(ctx, base, http.MethodPost, "/api/assets", map[string]any{"type": "CODE", "name": fmt.Sprintf("bench %d", i)}, admin, &asset); err != nil {
			return s, err
		}
		s.assets = append(s.assets, asset.ID)
	}
	for i := range 200 {
		var idea struct {
			ID string `json:"id"`
		}
		body := map[string]any{"name": fmt.Sprintf("Bench idea %03d", i), "potential_value": 100 + i, "estimated_cost": 10}
		if err := call(ctx, base, http.MethodPost, "/api/ideas", body, admin, &idea); err != nil {
			return s, err
		}
		s.ideas = append(s.ideas, idea.ID)
	}
	for i := range 50 {
		var task struct {
			ID string `json:"id"`
		}
		if err := call(ctx, base, http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "bench", "task_type": "impl"}, admin, &task); err != nil {
			return s, err
		}
		if err := call(ctx, base, http.MethodPatch, "/api/agent/tasks/"+task.ID, map[string]any{"status": "running", "worker_id": "seed"}, s.worker, nil); err != nil {
			return s, err
		}
		// A worker's report on its running task names the worker.
		done := map[string]any{"status": "completed", "output": "ok", "worker_id": "seed"}
		if i%5 == 0 {
			done = map[string]any{"status": "failed", "output": "provider returned 503", "worker_id": "seed"}
		}
		if err := call(ctx, base, http.MethodPatch, "/api/agent/tasks/"+task.ID, done, s.worker, nil); err != nil {
			return s, err
		}
	}
	return s, nil
}

// register registers a contributor and returns its id and session token.
func register(ctx context.Context, base, handle string) (id, token string, err error) {
	return harness.Register(ctx, seedClient, base, handle)
}

// seedStakers registers n contributors and funds each with a deposit of
// enough USD, at the buy rate in force, for stakesEach stakes of stakeCC,
// seedWorkers at a time.
func seedStakers(ctx context.Context, base string, admin http.Header, n int) ([]staker, error) {
	usd, rate, err := harness.USDFor(ctx, seedClient, base, stakesEach*stakeCC)
	if err != nil {
		return nil, err
	}
	fmt.Printf("seeding %d contributors, %.2f USD each (%d stakes of %v CC at %v CC/USD)\n", n, usd, stakesEach, stakeCC, rate)

	out := make([]staker, n)
	var done atomic.Int64
	begin := time.Now()
	err = harness.Parallel(ctx, n, seedWorkers, func(ctx context.Context, i int) error {
		err := func() error {
			id, token, err := register(ctx, base, fmt.Sprintf("staker-%d", i))
			if err != nil {
				return err
			}
			body := map[string]any{"contributor_id": id, "amount_usd": usd, "reference": fmt.Sprintf("staker-%d", i)}
			if err := call(ctx, base, http.MethodPost, "/api/cc/deposit", body, admin, nil); err != nil {
				return err
			}
			out[i] = staker{id: id, auth: http.Header{"Authorization": {"Bearer " + token}}}
			return nil
		}()
		if err != nil {
			return fmt.Errorf("contributor %d: %w", i, err)
		}
		if d := done.Add(1); d%100 == 0 || d == int64(n) {
			fmt.Printf("  %d/%d contributors registered and funded (%.1fs)\n", d, n, time.Since(begin).Seconds())
		}
		return nil
	})
	return out, err
}

// call sends one JSON request and decodes a 2xx answer into out.
func call(ctx context.Context, base, method, path string, body any, h http.Header, out any) error {
	return harness.Call(ctx, seedClient, base, method, path, body, h, out)
}

// route is one measured operation: request makes the i-th request of a
// run (i counts across the run's clients).
type route struct {
	name  string
	write bool
	// pattern is the route's method and path pattern, as the two-hop
	// front lists the routes it serves.
	pattern string
	// postgres is true when prepare works on the database directly
	// (through conn), so the route runs on Postgres only.
	postgres bool
	prepare  func(ctx context.Context) error
	request  func(i int64) (method, path string, body []byte, h http.Header)
}

// routeTable is every route; conn is nil on SQLite.
func routeTable(s seeded, conn *pgx.Conn) []route {
	jsonBody := func(v any) []byte { b, _ := json.Marshal(v); return b }
	bearer := http.Header{"Authorization": {"Bearer " + s.token}}
	// PATCH claims pending tasks, one per request: the tasks the create
	// route made (by both servers), topped up to enough for any run.
	var pending struct {
		mu  sync.Mutex
		ids []string
	}
	// Writes carry the credential a real client would: the contributor's
	// session for its own contributions and stakes, an operator's token
	// for task creation, a worker's for claims. idea-token is idea with a
	// token, so the pair shows what verifying a credential costs a read.
	// stake spreads its stakes over the stakers, one at a time each while
	// there are more stakers than clients; stake-one makes the same
	// stakes from one contributor, whose rows every request queues on:
	// the pair shows what a hot account costs.
	return []route{
		{name: "contribution", pattern: "POST /api/contributions", write: true, request: func(i int64) (string, string, []byte, http.Header) {
			return http.MethodPost, "/api/contributions", jsonBody(map[string]any{"contributor_id": s.contributor,
				"asset_id": s.assets[i%int64(len(s.assets))], "cost_amount": 1.5, "metadata": map[string]any{}}), bearer
		}},
		{name: "idea", pattern: "GET /api/ideas/{id}", request: func(i int64) (string, string, []byte, http.Header) {
			return http.MethodGet, "/api/ideas/" + s.ideas[i%int64(len(s.ideas))], nil, nil
		}},
		{name: "idea-token", pattern: "GET /api/ideas/{id}", request: func(i int64) (string, string, []byte, http.Header) {
			return http.MethodGet, "/api/ideas/" + s.ideas[i%int64(len(s.ideas))], nil, s.worker
		}},
		{name: "ideas-list-50", pattern: "GET /api/ideas", request: func(int64) (string, string, []byte, http.Header) {
			return http.MethodGet, "/api/ideas?limit=50", nil, nil
		}},
		{name: "task-create", pattern: "POST /api/agent/tasks", write: true, request: func(int64) (string, string, []byte, http.Header) {
			return http.MethodPost, "/api/agent/tasks", jsonBody(map[string]any{"direction": "bench task", "task_type": "impl"}), s.operator
		}},
		{name: "task-claim", pattern: "PATCH /api/agent/tasks/{id}", write: true, postgres: true, prepare: func(ctx context.Context) error {
			const want = 400_000
			var have int
			if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM agent.tasks WHERE status = 'pending'`).Scan(&have); err != nil {
				return err
			}
			if have < want {
				// Copies of one pending task (only the id differs): claims
				// need a fresh pending task each. The counters are not
				// touched; nothing in the run reads them exactly.
				if _, err := conn.Exec(ctx, `INSERT INTO agent.tasks
					SELECT (jsonb_populate_record(t, jsonb_build_object('id', 'bench-' || g))).*
					FROM agent.tasks t, generate_series(1, $1) g
					WHERE t.id = (SELECT id FROM agent.tasks WHERE status = 'pending' LIMIT 1)`, want-have); err != nil {
					return err
				}
			}
			rows, err := conn.Query(ctx, `SELECT id FROM agent.tasks WHERE status = 'pending'`)
			if err != nil {
				return err
			}
			ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			pending.ids = ids
			_, err = conn.Exec(ctx, `ANALYZE agent.tasks`)
			return err
		}, request: func(int64) (string, string, []byte, http.Header) {
			pending.mu.Lock()
			id := pending.ids[len(pending.ids)-1]
			pending.ids = pending.ids[:len(pending.ids)-1]
			pending.mu.Unlock()
			return http.MethodPatch, "/api/agent/tasks/" + id, jsonBody(map[string]any{"status": "running", "worker_id": "bench-worker"}), s.worker
		}},
		{name: "pipeline-status", pattern: "GET /api/agent/pipeline-status", request: func(int64) (string, string, []byte, http.Header) {
			return http.MethodGet, "/api/agent/pipeline-status", nil, nil
		}},
		{name: "metrics", pattern: "GET /api/agent/metrics", request: func(int64) (string, string, []byte, http.Header) {
			return http.MethodGet, "/api/agent/metrics", nil, nil
		}},
		{name: "stake", pattern: "POST /api/cc/stake", write: true, request: func(i int64) (string, string, []byte, http.Header) {
			c := s.stakers[i%int64(len(s.stakers))]
			return http.MethodPost, "/api/cc/stake",
				jsonBody(map[string]any{"contributor_id": c.id, "idea_id": s.ideas[i%int64(len(s.ideas))], "amount_cc": stakeCC}), c.auth
		}},
		{name: "stake-one", pattern: "POST /api/cc/stake", write: true, request: func(i int64) (string, string, []byte, http.Header) {
			return http.MethodPost, "/api/cc/stake",
				jsonBody(map[string]any{"contributor_id": s.contributor, "idea_id": s.ideas[i%int64(len(s.ideas))], "amount_cc": stakeCC}), bearer
		}},
	}
}

// drive runs r against t with c clients for d and measures it; any
// request that fails or answers other than 2xx fails the run.
func drive(ctx context.Context, client *http.Client, t target, r route, c int, d time.Duration) (*harness.Stats, error) {
	return harness.Drive(ctx, client, t.base, r.request, c, d)
}

// goal is what a route must reach against each baseline (0: none): every
// route 0.8 of the bare two-hop server, the architecture's own limit, and
// three routes a share of the single-hop one.
type goal struct{ bare, twohop float64 }

// goals are the routes' goals beyond the two-hop one.
var goals = map[string]float64{"idea": 0.55, "ideas-list-50": 0.6, "contribution": 0.6}

func goalOf(route string) goal { return goal{bare: goals[route], twohop: 0.8} }

func (g goal) of(base string) float64 {
	switch base {
	case "bare":
		return g.bare
	case "twohop":
		return g.twohop
	}
	return 0 // another build of Foundry: no goal
}

// String is the goal as the report's column shows it: "0.8" (two-hop), or
// "0.55/0.8" (bare, then two-hop).
func (g goal) String() string {
	if g.bare == 0 {
		return fmt.Sprintf("%.1f", g.twohop)
	}
	return fmt.Sprintf("%g/%.1f", g.bare, g.twohop)
}

type result struct {
	route string
	write bool
	stats map[string]*harness.Stats
}

// column is one server's columns in the report: its name, and its
// processes' roles when it has more than one (in the target's order).
type column struct {
	name, label string
	roles       []string
}

func report(w io.Writer, results []result, targets []target, o options) {
	cols := []column{{name: "foundry", label: "foundry"}}
	compared := slices.ContainsFunc(targets, func(t target) bool { return t.name == "foundry-b" })
	if compared {
		cols = append(cols, column{name: "foundry-b", label: "foundry-b", roles: []string{"gateway", "modules"}})
	}
	cols = append(cols, column{name: "bare", label: "bare"}, column{name: "twohop", label: "two-hop", roles: []string{"front", "back"}})
	for _, t := range targets {
		if t.name == "foundry" && len(t.procs) > 1 {
			for _, p := range t.procs {
				cols[0].roles = append(cols[0].roles, p.role)
			}
		}
	}
	bases := []string{"bare", "twohop"}
	if compared {
		bases = append(bases, "foundry-b")
	}
	const none = "—"
	fmt.Fprintf(w, "\n%s: %d clients, %d alternating rounds of %s per server and route\n", o.engine, o.concurrency, o.rounds, o.round)
	if o.engine == "sqlite" {
		fmt.Fprintf(w, "Foundry alone: the baselines have no SQLite twin\n")
	}
	fmt.Fprintf(w, "bare: one hop (net/http → Postgres); two-hop: net/http → gRPC over loopback → a bare gRPC server → Postgres; %s: not run\n\n", none)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "route\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s req/s\tp50\tp99\t", c.label)
	}
	if compared {
		fmt.Fprintln(tw, "÷bare\t÷two-hop\t÷foundry-b\tgoal\t")
	} else {
		fmt.Fprintln(tw, "÷bare\t÷two-hop\tgoal\t")
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t", r.route)
		for _, c := range cols {
			if st := r.stats[c.name]; st != nil {
				fmt.Fprintf(tw, "%.0f\t%s\t%s\t", st.Rate(), ms(st.Percentile(50)), ms(st.Percentile(99)))
			} else {
				fmt.Fprintf(tw, "%s\t%s\t%s\t", none, none, none)
			}
		}
		f := r.stats["foundry"]
		g := goalOf(r.route)
		below := false
		for _, base := range bases {
			b := r.stats[base]
			if b == nil {
				fmt.Fprintf(tw, "%s\t", none)
				continue
			}
			ratio := f.Rate() / b.Rate()
			fmt.Fprintf(tw, "%.2f\t", ratio)
			if want := g.of(base); want > 0 && ratio < want {
				below = true
			}
		}
		mark := ""
		if below {
			mark = " (below)"
		}
		fmt.Fprintf(tw, "%s%s\t\n", g, mark)
	}
	_ = tw.Flush()

	fmt.Fprintf(w, "\nCPU µs per request: each server's processes' user+system time (a server of two processes: their sum, then each);\n"+
		"all: the whole machine's (the database, the load generator, the kernel)\n\n")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "route\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c.label)
		for _, role := range c.roles {
			fmt.Fprintf(tw, "%s\t", role)
		}
		fmt.Fprint(tw, "all\t")
	}
	fmt.Fprintln(tw)
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t", r.route)
		for _, c := range cols {
			st := r.stats[c.name]
			if st == nil {
				fmt.Fprint(tw, strings.Repeat(none+"\t", len(c.roles)+2))
				continue
			}
			fmt.Fprintf(tw, "%.0f\t", st.PerRequest(st.CPU.Process()))
			for i := range c.roles {
				if i < len(st.CPU.Procs) {
					fmt.Fprintf(tw, "%.0f\t", st.PerRequest(st.CPU.Procs[i]))
				} else {
					fmt.Fprintf(tw, "%s\t", none)
				}
			}
			fmt.Fprintf(tw, "%.0f\t", st.PerRequest(st.CPU.Machine))
		}
		fmt.Fprintln(tw)
	}
	_ = tw.Flush()
}

// reportScrub says what the ledger's audit scrubber did during the run
// (GET /api/audit/verify's scrub), so a run with FOUNDRY_AUDIT_SCRUB_CYCLE
// set shows the scrubber was working while the routes were measured.
func reportScrub(ctx context.Context, w io.Writer, base string) error {
	var v struct {
		Scrub struct {
			CycleSeconds float64 `json:"cycle_seconds"`
			CurrentCycle int     `json:"current_cycle"`
			Late         *string `json:"late"`
			LastCycle    *struct {
				StartedAt      time.Time `json:"started_at"`
				EndedAt        time.Time `json:"ended_at"`
				ThroughSeq     int       `json:"through_seq"`
				EntriesChecked int       `json:"entries_checked"`
				Findings       int       `json:"findings"`
			} `json:"last_cycle"`
		} `json:"scrub"`
	}
	if err := call(ctx, base, http.MethodGet, "/api/audit/verify", nil, http.Header{"X-API-Key": {harness.AdminKey}}, &v); err != nil {
		return err
	}
	sc := v.Scrub
	if sc.CycleSeconds == 0 {
		fmt.Fprintln(w, "\naudit scrubber: off (FOUNDRY_AUDIT_SCRUB_CYCLE=0)")
		return nil
	}
	line := fmt.Sprintf("\naudit scrubber (cycle %s): %d cycles completed", time.Duration(sc.CycleSeconds*float64(time.Second)),
		sc.CurrentCycle-1)
	if last := sc.LastCycle; last != nil {
		line += fmt.Sprintf("; the last checked %d entries through seq %d in %s, finding %d", last.EntriesChecked, last.ThroughSeq,
			last.EndedAt.Sub(last.StartedAt).Round(time.Millisecond), last.Findings)
	}
	if sc.Late != nil {
		line += "; late: " + *sc.Late
	}
	fmt.Fprintln(w, line)
	return nil
}

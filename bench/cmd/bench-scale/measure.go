package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/foundryhq/foundry/bench/internal/harness"
)

// route is one measured operation.
type route struct {
	name  string
	write bool
	// cursor is the path of the list whose deep cursor the route reads
	// the page past; "" for none.
	cursor string
	// request makes the route's requests, given the phase's cursor.
	request func(cursor string) harness.Request
}

// get is a route that reads path.
func get(name, path string) route {
	return route{name: name, request: func(string) harness.Request {
		return func(int64) (string, string, []byte, http.Header) { return http.MethodGet, path, nil, nil }
	}}
}

// getAt is a route that reads the page of the list at path past its deep
// cursor: each phase follows the list's cursors a few pages deep
// (deepCursor).
func getAt(name, list string) route {
	return route{name: name, cursor: list, request: func(c string) harness.Request {
		path := list + "?cursor=" + url.QueryEscape(c)
		return func(int64) (string, string, []byte, http.Header) { return http.MethodGet, path, nil, nil }
	}}
}

// post is a write route: body makes the i-th request's body.
func post(name, path string, h func(i int64) http.Header, body func(i int64) any) route {
	return route{name: name, write: true, request: func(string) harness.Request {
		return func(i int64) (string, string, []byte, http.Header) {
			b, _ := json.Marshal(body(i))
			return http.MethodPost, path, b, h(i)
		}
	}}
}

// routeTable is every measured route, reads first: the writes of the
// fresh phase then add their rows after its reads.
func routeTable(fx *fixtures) []route {
	stakers := append([]contributor{fx.busy}, fx.others...)
	operator := func(int64) http.Header { return fx.operator }
	return []route{
		get("ideas", "/api/ideas"),
		get("idea", "/api/ideas/"+fx.ideas[0]),
		get("ideas-progress", "/api/ideas/progress"),
		get("ideas-right-sizing", "/api/ideas/right-sizing"),
		get("ideas-storage", "/api/ideas/storage"),
		get("tasks", "/api/agent/tasks"),
		getAt("tasks-cursor", "/api/agent/tasks"),
		get("pipeline-status", "/api/agent/pipeline-status"),
		get("agent-metrics", "/api/agent/metrics"),
		get("audit", "/api/audit"),
		getAt("audit-cursor", "/api/audit"),
		get("audit-verify", "/api/audit/verify"),
		get("incidents", "/api/incidents"),
		get("incidents-status", "/api/incidents/status"),
		get("contributions", "/api/contributions"),
		get("asset-contributions", "/api/assets/"+fx.assets[0]+"/contributions"),
		get("contributor-contributions", "/api/contributors/"+fx.busy.id+"/contributions"),
		get("investment-history", "/api/contributors/"+fx.busy.id+"/investment-history"),
		get("cc-supply", "/api/cc/supply"),
		get("graph-edges", "/api/graph/edges"),
		get("hub-edges", "/api/graph/nodes/"+fx.hub+"/edges"),
		get("assets", "/api/assets"),
		// Stakes spread over the fixtures' contributors and ideas, one
		// account per client at a time, as bench-http's stake route does.
		post("stake", "/api/cc/stake", func(i int64) http.Header { return stakers[i%int64(len(stakers))].auth }, func(i int64) any {
			n := int64(len(stakers))
			return map[string]any{"contributor_id": stakers[i%n].id, "idea_id": fx.ideas[(i/n)%int64(len(fx.ideas))], "amount_cc": stakeCC}
		}),
		post("contribution", "/api/contributions", operator, func(i int64) any {
			n := int64(len(stakers))
			return map[string]any{"contributor_id": stakers[i%n].id, "asset_id": fx.assets[(i/n)%int64(len(fx.assets))],
				"cost_amount": 1.5, "metadata": map[string]any{}}
		}),
		post("task-create", "/api/agent/tasks", operator, func(int64) any {
			return map[string]any{"direction": "scale measured task", "task_type": "impl"}
		}),
	}
}

// phase is one phase's measurements.
type phase struct {
	name    string
	results []routeResult
	cursors map[string]cursorAt // by list path
	// sizes are the dominant lists' totals when the phase began.
	sizes string
	// idleFoundry and idlePostgres are the CPU time Foundry's process and
	// the database's backends used in the idle window; idleMachine the
	// whole machine's (other work included).
	idleFoundry, idlePostgres, idleMachine time.Duration
	// check is the coherence check's time once the ledger is quiet
	// (settleCoherence); nil when Foundry's metrics do not time it.
	check *settled
	rss   float64 // MiB, at the phase's end
}

type routeResult struct {
	route route
	stats *harness.Stats
	// skipped says why the route was not measured ("" when it was).
	skipped string
}

// measurePhase measures every route, then the idle window.
func measurePhase(ctx context.Context, sys *system, o options, name string, routes []route) (*phase, error) {
	ph := &phase{name: name, cursors: map[string]cursorAt{}}
	var err error
	fmt.Printf("\n%s: measuring %d routes, %d clients for %s each\n", name, len(routes), o.concurrency, o.duration)
	if err := vacuum(ctx, sys, o, "before the routes"); err != nil {
		return nil, err
	}
	if ph.sizes, err = sizes(ctx, sys); err != nil {
		return nil, fmt.Errorf("the lists' sizes: %w", err)
	}
	fmt.Printf("  sizes: %s\n", ph.sizes)
	for _, r := range routes {
		if _, done := ph.cursors[r.cursor]; r.cursor == "" || done {
			continue
		}
		at, err := deepCursor(ctx, sys, r.cursor, o.cursorPages)
		if err != nil {
			return nil, fmt.Errorf("a deep cursor of %s: %w", r.cursor, err)
		}
		ph.cursors[r.cursor] = at
		fmt.Printf("  %s: the page after %d of %d items (%d pages of %d followed)\n", r.cursor, at.depth, at.total, at.pages, at.limit)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		MaxIdleConns: 2 * o.concurrency, MaxIdleConnsPerHost: 2 * o.concurrency, IdleConnTimeout: time.Minute,
	}}
	defer client.CloseIdleConnections()
	for _, r := range routes {
		res := routeResult{route: r}
		cursor := ""
		if r.cursor != "" {
			if cursor = ph.cursors[r.cursor].cursor; cursor == "" {
				res.skipped = "the list has no second page"
				ph.results = append(ph.results, res)
				fmt.Printf("  %-26s skipped: %s\n", r.name, res.skipped)
				continue
			}
		}
		req := r.request(cursor)
		if o.warmup > 0 {
			if _, err := harness.DriveCounting(ctx, client, sys.base, req, o.concurrency, o.warmup); err != nil {
				return nil, fmt.Errorf("%s (warm-up): %w", r.name, err)
			}
		}
		if res.stats, err = measure(ctx, sys, client, req, o.concurrency, o.duration); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		ph.results = append(ph.results, res)
		st := res.stats
		fmt.Printf("  %-26s %7.0f req/s  p50 %s  p99 %s  %6.0f µs CPU/call  %d errors\n", r.name, st.Rate(),
			ms(st.Percentile(50)), ms(st.Percentile(99)), st.PerRequest(st.CPU.Process()), st.Errors)
	}

	// The write routes grew the tables (the fresh phase's from a handful
	// of rows to thousands): autovacuum would analyze them within its
	// next round.
	if err := vacuum(ctx, sys, o, "after the writes"); err != nil {
		return nil, err
	}
	// The coherence check reads what was written since its last run: wait
	// until it has read the writes above, and time the run after, which
	// costs what the history alone makes it cost.
	fmt.Printf("  waiting for the coherence check to catch up with the writes …\n")
	if ph.check, err = settleCoherence(ctx, sys, o.drainTimeout); err != nil {
		return nil, fmt.Errorf("the coherence check: %w", err)
	}
	if ph.check != nil {
		fmt.Printf("  the coherence check, caught up: %s a run (%d runs waited for, %s)\n", ms(ph.check.last), ph.check.runs,
			ph.check.took.Round(time.Second))
	}

	// Idle: no request, the keep-alive connections closed, so what runs
	// is Foundry's own (the sequencer's look at its queue, the monitor,
	// the scrubber, the gauges, the reaper, …) and what it asks of Postgres.
	client.CloseIdleConnections()
	fmt.Printf("  idle for %s …\n", o.idle)
	idle, err := sample(ctx, sys, func() error { return sleep(ctx, o.idle) })
	if err != nil {
		return nil, fmt.Errorf("idle: %w", err)
	}
	ph.idleFoundry, ph.idlePostgres, ph.idleMachine = idle.Procs[0], idle.Procs[1], idle.Machine
	fmt.Printf("  idle: Foundry %.0f ms CPU a minute, Postgres backends %.0f ms (the whole machine: %.0f ms, other work included)\n",
		msPerMinute(ph.idleFoundry, o.idle), msPerMinute(ph.idlePostgres, o.idle), msPerMinute(ph.idleMachine, o.idle))

	if ph.rss, err = harness.ResidentMiB(sys.foundry.Pid()); err != nil {
		return nil, fmt.Errorf("RSS: %w", err)
	}
	return ph, nil
}

// vacuum runs VACUUM (ANALYZE) on the scratch database, with -vacuum. A
// production server's autovacuum analyzes a table soon after it grows
// (within a minute, at 10 % of its rows changed) and that invalidates the
// plans Foundry's connections cached for it; this server's may be off (a
// CI server's is), and then plans made while the tables held a handful of
// rows stay: a scalar subquery planned as a sequential scan of a tiny
// table is then run once per row of a large one (the ledger's journal
// links took 25 s a slice that way).
func vacuum(ctx context.Context, sys *system, o options, when string) error {
	if !o.vacuum {
		return nil
	}
	begin := time.Now()
	if _, err := sys.conn.Exec(ctx, "VACUUM (ANALYZE)"); err != nil {
		return fmt.Errorf("vacuum %s: %w", when, err)
	}
	fmt.Printf("  VACUUM (ANALYZE) %s: %s\n", when, time.Since(begin).Round(time.Millisecond))
	return nil
}

// measure drives req for d and measures it, with the CPU time Foundry's
// process (CPU.Procs[0]) and the database's backends (CPU.Procs[1]) used.
func measure(ctx context.Context, sys *system, client *http.Client, req harness.Request, c int, d time.Duration) (*harness.Stats, error) {
	var st *harness.Stats
	cpu, err := sample(ctx, sys, func() error {
		var err error
		st, err = harness.DriveCounting(ctx, client, sys.base, req, c, d)
		return err
	})
	if err != nil {
		return nil, err
	}
	st.CPU = cpu
	return st, nil
}

// sample runs f and returns the CPU time used meanwhile: Procs[0] by
// Foundry's process, Procs[1] by the scratch database's Postgres backends,
// Machine by the whole machine.
func sample(ctx context.Context, sys *system, f func() error) (harness.CPUSample, error) {
	pids := []int{sys.foundry.Pid()}
	before, err := harness.SampleCPU(pids)
	if err != nil {
		return harness.CPUSample{}, err
	}
	pg, err := backendsCPU(ctx, sys.conn, f)
	if err != nil {
		return harness.CPUSample{}, err
	}
	after, err := harness.SampleCPU(pids)
	if err != nil {
		return harness.CPUSample{}, err
	}
	s := after.Sub(before)
	s.Procs = append(s.Procs, pg)
	return s, nil
}

// backendsPoll is how often backendsCPU lists the backends: a backend
// that starts and ends between two looks (a parallel worker of a short
// query) is missed, and one that ends loses its time since the last look.
const backendsPoll = 100 * time.Millisecond

// backendsCPU runs f and returns the CPU time the Postgres processes
// serving conn's database (Foundry's connections, parallel workers,
// autovacuum's; not conn's own) used meanwhile: each process's time at its
// last look less its time at the start, or since it started when it
// started meanwhile. pg_stat_activity names the processes and /proc their
// time, so the other databases of a shared server (a test suite's) are
// left out.
func backendsCPU(ctx context.Context, conn *pgx.Conn, f func() error) (time.Duration, error) {
	start, err := backends(ctx, conn)
	if err != nil {
		return 0, err
	}
	last := maps.Clone(start)
	stop := make(chan struct{})
	var (
		wg      sync.WaitGroup
		pollErr error
	)
	wg.Go(func() {
		tick := time.NewTicker(backendsPoll)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			now, err := backends(ctx, conn)
			if err != nil {
				pollErr = err
				return
			}
			maps.Copy(last, now)
		}
	})
	ferr := f()
	close(stop)
	wg.Wait()
	if err := errors.Join(ferr, pollErr); err != nil {
		return 0, err
	}
	now, err := backends(ctx, conn)
	if err != nil {
		return 0, err
	}
	maps.Copy(last, now)
	var sum time.Duration
	for pid, d := range last {
		sum += d - start[pid]
	}
	return sum, nil
}

// backends is the CPU time of each process serving conn's database but
// conn's own, by pid.
func backends(ctx context.Context, conn *pgx.Conn) (map[int]time.Duration, error) {
	rows, err := conn.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		return nil, fmt.Errorf("list the database's backends: %w", err)
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("list the database's backends: %w", err)
	}
	out := make(map[int]time.Duration, len(pids))
	for _, pid := range pids {
		// A process that ended since the list was read has no /proc entry:
		// its time since the last look is lost (see backendsPoll).
		if d, err := harness.ProcessCPU(int(pid)); err == nil {
			out[int(pid)] = d
		}
	}
	return out, nil
}

// cursorAt is a deep cursor of a list: the page after depth of its total
// items, reached by following pages cursors of limit items each.
type cursorAt struct {
	cursor                     string
	depth, total, limit, pages int
}

// deepCursor follows a list's cursors pages pages deep, with pages of a
// size that keeps the last one inside the list (at most 500, the lists'
// largest), and returns the last next_cursor: the page after it is as
// deep in the list as a client paging through it reaches. A list of one
// page has no cursor.
func deepCursor(ctx context.Context, sys *system, path string, pages int) (cursorAt, error) {
	total, err := listTotal(ctx, sys, path)
	if err != nil {
		return cursorAt{}, err
	}
	at := cursorAt{total: int(total), limit: min(500, max(1, int(total)/(pages+1)))}
	for range pages {
		q := path + "?limit=" + strconv.Itoa(at.limit)
		if at.cursor != "" {
			q += "&cursor=" + url.QueryEscape(at.cursor)
		}
		var p listPage
		if err := sys.call(ctx, http.MethodGet, q, nil, nil, &p); err != nil {
			return cursorAt{}, err
		}
		if p.Pagination.NextCursor == "" {
			break
		}
		at.cursor = p.Pagination.NextCursor
		at.pages++
		at.depth += at.limit
	}
	return at, nil
}

// listTotal is how many items the list at path holds (its pagination's
// total, which the ledger, agent and ops keep as they write).
func listTotal(ctx context.Context, sys *system, path string) (int64, error) {
	var first listPage
	if err := sys.call(ctx, http.MethodGet, path+"?limit=1", nil, nil, &first); err != nil {
		return 0, err
	}
	return int64(first.Pagination.Total), nil
}

// sizedLists are the lists whose totals say how large the dominant tables
// are when a phase is measured (the journal has no list of its own: every
// movement has its audit entry).
func sizedLists() [][2]string {
	return [][2]string{{"audit entries", "/api/audit"}, {"contributions", "/api/contributions"},
		{"tasks", "/api/agent/tasks"}, {"graph edges", "/api/graph/edges"}}
}

// sizes says how many items each of sizedLists holds.
func sizes(ctx context.Context, sys *system) (string, error) {
	var parts []string
	for _, l := range sizedLists() {
		n, err := listTotal(ctx, sys, l[1])
		if err != nil {
			return "", err
		}
		parts = append(parts, fmt.Sprintf("%s %d", l[0], n))
	}
	return strings.Join(parts, ", "), nil
}

// listPage is the pagination of a list's answer.
type listPage struct {
	Pagination struct {
		Total      jsonInt `json:"total"`
		NextCursor string  `json:"next_cursor"`
	} `json:"pagination"`
}

// jsonInt is a count as the API may answer it: a number, or a string of
// one (protojson writes 64-bit integers as strings).
type jsonInt int64

func (n *jsonInt) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(strings.Trim(string(b), `"`), 10, 64)
	*n = jsonInt(v)
	return err
}

// msPerMinute is CPU time d used in window as milliseconds a minute.
func msPerMinute(d, window time.Duration) float64 {
	return float64(d.Microseconds()) / 1000 * time.Minute.Seconds() / window.Seconds()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

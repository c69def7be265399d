package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/foundryhq/foundry/bench/internal/harness"
)

// target is one server the routes are driven against: its base URL and
// the processes whose CPU time it costs.
type target struct {
	name, base string
	procs      []proc
	// serves holds the route patterns ("GET /api/ideas/{id}") the server
	// answers; nil: every route.
	serves map[string]bool
}

// proc is one process of a target: role names its side ("" when the
// target is one process), admin its admin address (Foundry's, for
// profiles).
type proc struct {
	role  string
	p     *harness.Process
	admin string
}

func (t target) pids() []int {
	out := make([]int, len(t.procs))
	for i, p := range t.procs {
		out[i] = p.p.Pid()
	}
	return out
}

// group is a set of processes started together: started in start order
// (stop stops them in reverse), procs in the report's.
type group struct {
	started []*harness.Process
	procs   []proc
	// shape says how Foundry runs, for the report.
	shape string
	// compare are -compare-gateway's gateway and the services it calls
	// (Foundry's), serving HTTP on compareAddr; nil without it.
	compare     []proc
	compareAddr string
}

func (g *group) stop() {
	for _, p := range slices.Backward(g.started) {
		p.Stop()
	}
}

// startFoundrySet starts Foundry on data, serving HTTP on httpAddr: all
// modules in one process, or with -foundry-split the services in one
// process (-target=<the services>) and the gateway in another, given the
// services' gRPC address for each peer (as e2e's scale-out test starts
// them), so the two sides' CPU is measured apart. The gateway comes first
// in procs; the request path is the same either way (in one process the
// gateway calls the services over loopback gRPC too).
func startFoundrySet(ctx context.Context, o options, data, httpAddr string) (*group, error) {
	g := &group{}
	pprof := o.profile != ""
	if !o.foundrySplit {
		admin := ""
		if pprof {
			admin = harness.FreeAddr()
		}
		p, err := harness.StartFoundry(o.foundry, data, httpAddr, harness.FreeAddr(), admin, pprof)
		if err != nil {
			return nil, err
		}
		g.started, g.procs, g.shape = []*harness.Process{p}, []proc{{p: p, admin: admin}}, "every module in one process"
		if err := harness.WaitHTTP(ctx, "http://"+httpAddr+"/api/ready", 60*time.Second); err != nil {
			g.stop()
			return nil, fmt.Errorf("foundry: %w\n%s", err, p.Output())
		}
		return g, nil
	}
	names, err := moduleNames(ctx)
	if err != nil {
		return nil, err
	}
	services := slices.DeleteFunc(names, func(n string) bool { return n == "gateway" })
	grpcAddr, modulesAdmin := harness.FreeAddr(), harness.FreeAddr()
	modules, err := harness.StartFoundry(o.foundry, data, harness.FreeAddr(), grpcAddr, modulesAdmin, pprof, "-target="+strings.Join(services, ","))
	if err != nil {
		return nil, err
	}
	g.started = append(g.started, modules)
	if err := harness.WaitHTTP(ctx, "http://"+modulesAdmin+"/readyz", 60*time.Second); err != nil {
		g.stop()
		return nil, fmt.Errorf("foundry's modules (-target=%s): %w\n%s", strings.Join(services, ","), err, modules.Output())
	}
	gateway, err := startGateway(ctx, o.foundry, data, httpAddr, grpcAddr, services, pprof)
	if err != nil {
		g.stop()
		return nil, err
	}
	g.started = append(g.started, gateway.p) // stopped first
	g.procs = []proc{gateway, {role: "modules", p: modules, admin: modulesAdmin}}
	g.shape = "two processes: the gateway, and " + strings.Join(services, ", ")
	if o.compareGateway != "" {
		g.compareAddr = harness.FreeAddr()
		other, err := startGateway(ctx, o.compareGateway, data, g.compareAddr, grpcAddr, services, false)
		if err != nil {
			g.stop()
			return nil, err
		}
		g.started = append(g.started, other.p)
		g.compare = []proc{other, g.procs[1]}
	}
	return g, nil
}

// startGateway starts bin as Foundry's gateway alone (-target=gateway) on
// httpAddr, calling the services at grpcAddr, and waits until it is ready.
func startGateway(ctx context.Context, bin, data, httpAddr, grpcAddr string, services []string, pprof bool) (proc, error) {
	admin := ""
	if pprof {
		admin = harness.FreeAddr()
	}
	extra := []string{"-target=gateway"}
	for _, s := range services {
		extra = append(extra, "-"+s+"-addr="+grpcAddr)
	}
	p, err := harness.StartFoundry(bin, data, httpAddr, harness.FreeAddr(), admin, pprof, extra...)
	if err != nil {
		return proc{}, err
	}
	if err := harness.WaitHTTP(ctx, "http://"+httpAddr+"/api/ready", 60*time.Second); err != nil {
		p.Stop()
		return proc{}, fmt.Errorf("foundry's gateway (%s): %w\n%s", bin, err, p.Output())
	}
	return proc{role: "gateway", p: p, admin: admin}, nil
}

// twoHop is the started two-hop pair and its target.
type twoHop struct {
	group
	target target
}

// startTwoHop starts bench/twohop's back end on dbURL and its front
// calling it, and reads the routes the front serves.
func startTwoHop(ctx context.Context, o options, dbURL string) (*twoHop, error) {
	backAddr, frontAddr := harness.FreeAddr(), harness.FreeAddr()
	back, err := harness.Start(o.twohopBack, nil, "-addr="+backAddr, "-database-url="+dbURL, "-pool=16")
	if err != nil {
		return nil, err
	}
	front, err := harness.Start(o.twohopFront, nil, "-addr="+frontAddr, "-backend="+backAddr)
	if err != nil {
		back.Stop()
		return nil, err
	}
	h := &twoHop{group: group{started: []*harness.Process{back, front}}}
	if err := harness.WaitHTTP(ctx, "http://"+frontAddr+"/ready", 30*time.Second); err != nil {
		h.stop()
		return nil, fmt.Errorf("two-hop: %w\nfront:\n%s\nback:\n%s", err, front.Output(), back.Output())
	}
	serves, err := frontRoutes(ctx, "http://"+frontAddr+"/routes")
	if err != nil {
		h.stop()
		return nil, fmt.Errorf("two-hop: %w", err)
	}
	fmt.Printf("two-hop %s → %s up on %s (back end on %s; %d routes)\n", o.twohopFront, o.twohopBack, frontAddr, backAddr, len(serves))
	h.target = target{name: "twohop", base: "http://" + frontAddr,
		procs: []proc{{role: "front", p: front}, {role: "back", p: back}}, serves: serves}
	return h, nil
}

// frontRoutes reads the patterns the two-hop front lists, one a line.
func frontRoutes(ctx context.Context, u string) (map[string]bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	out := map[string]bool{}
	for line := range strings.Lines(string(b)) {
		if line = strings.TrimSpace(line); line != "" {
			out[line] = true
		}
	}
	return out, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/foundryhq/foundry/bench/internal/harness"
)

// kind is a kind of call the seed makes.
type kind int

const (
	kRegister kind = iota
	kDeposit
	kStake
	kAsset
	kContribution
	kTaskCreate
	kTaskClaim
	kTaskEnd
	kNode
	kEdge
	nKinds
)

func (k kind) String() string {
	switch k {
	case kRegister:
		return "register"
	case kDeposit:
		return "deposit"
	case kStake:
		return "stake"
	case kAsset:
		return "asset"
	case kContribution:
		return "contribution"
	case kTaskCreate:
		return "task create"
	case kTaskClaim:
		return "task PATCH running"
	case kTaskEnd:
		return "task PATCH completed/failed"
	case kNode:
		return "graph node"
	case kEdge:
		return "graph edge"
	}
	return fmt.Sprintf("kind %d", int(k))
}

const (
	// seedContributors are registered by the seed beside the fixtures'
	// four, so the movements and contributions that are not the busy
	// contributor's spread over many accounts, as on a real ledger.
	seedContributors = 12
	// seedAssets are made beside the fixtures' four, for the same reason.
	seedAssets = 4
	// seedLeaves are the graph nodes the seed's edges join.
	seedLeaves = 256
	// seedAttempts is how many times a seed call is tried when it gets no
	// answer or a 5xx or 429: a seed is not the place to judge a blip.
	seedAttempts = 3
)

// seeding is what the seed did.
type seeding struct {
	rows        int
	calls       [nKinds]int64 // answered 2xx
	failed      [nKinds]int64 // not, after seedAttempts
	firstErr    [nKinds]string
	retried     int64
	took, drain time.Duration
	// catchUp is the coherence check's catching up with the seed (nil
	// when Foundry's metrics do not time it).
	catchUp *settled
}

func (s *seeding) totalCalls() (n int64) {
	for _, c := range s.calls {
		n += c
	}
	return n
}

// tally counts the seed's calls from every worker.
type tally struct {
	calls, failed [nKinds]atomic.Int64
	retried       atomic.Int64
	mu            sync.Mutex
	firstErr      [nKinds]string
}

// do makes one call of kind k with f, retrying what may pass on a second
// try, and counts it. Its error is also counted, so a caller that goes on
// past it loses nothing.
func (t *tally) do(ctx context.Context, k kind, f func() error) error {
	var err error
	for attempt := range seedAttempts {
		if attempt > 0 {
			t.retried.Add(1)
			if err := sleep(ctx, time.Duration(attempt)*100*time.Millisecond); err != nil {
				return err
			}
		}
		if err = f(); err == nil {
			t.calls[k].Add(1)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !retryable(err) {
			break
		}
	}
	t.failed[k].Add(1)
	t.mu.Lock()
	if t.firstErr[k] == "" {
		t.firstErr[k] = err.Error()
	}
	t.mu.Unlock()
	return err
}

// retryable is whether a call that failed with err may pass when tried
// again: no answer, or an answer that says "not now". A 4xx is the
// request's fault and would fail again.
func retryable(err error) bool {
	var se *harness.StatusError
	if errors.As(err, &se) {
		return se.Code >= 500 || se.Code == 429
	}
	return true
}

func (t *tally) totals() (calls, failed int64) {
	for k := range nKinds {
		calls += t.calls[k].Load()
		failed += t.failed[k].Load()
	}
	return calls, failed
}

func (t *tally) result(rows int, took time.Duration) *seeding {
	s := &seeding{rows: rows, took: took, retried: t.retried.Load()}
	for k := range nKinds {
		s.calls[k], s.failed[k], s.firstErr[k] = t.calls[k].Load(), t.failed[k].Load(), t.firstErr[k]
	}
	return s
}

// seeder grows the dominant tables.
type seeder struct {
	sys *system
	fx  *fixtures
	t   *tally
	// pool are the contributors beside the busy one; assets are the
	// fixtures' and the seed's (assets[0] the large one); leaves the nodes
	// the edges join beside the hub.
	pool   []contributor
	assets []string
	leaves []string
}

// seed grows each dominant table by o.rows rows through the API, from
// o.seedWorkers clients: the movements (half deposits, half stakes, so
// journal entries and audit entries: a deposit records two, with its
// spread fee), contributions, tasks (nineteen in twenty claimed and
// finished, one in ten of them failed) and graph edges, interleaved so
// every table grows at once. A quarter of the stakes and deposits and of
// the contributions are the busy contributor's, a quarter of the
// contributions go to the large asset and half the edges touch the hub.
func seed(ctx context.Context, sys *system, o options, fx *fixtures) (*seeding, error) {
	s := &seeder{sys: sys, fx: fx, t: &tally{}, pool: slices.Clone(fx.others), assets: slices.Clone(fx.assets), leaves: []string{fx.leaf}}
	fmt.Printf("\nseeding %d rows into each dominant table through the API, %d clients\n", o.rows, o.seedWorkers)
	begin := time.Now()
	if err := s.setUp(ctx, o.seedWorkers); err != nil {
		return nil, err
	}

	n := 4 * o.rows
	var done atomic.Int64
	// A few failures are reported; many mean the seed measures nothing.
	maxFailed := int64(100 + n/100)
	progress := s.progress(o.progress, begin, &done, n)
	err := harness.Parallel(ctx, n, o.seedWorkers, func(ctx context.Context, i int) error {
		s.item(ctx, i)
		done.Add(1)
		if err := ctx.Err(); err != nil {
			return err
		}
		if _, failed := s.t.totals(); failed > maxFailed {
			return fmt.Errorf("more than %d calls failed: %s", maxFailed, s.t.result(o.rows, 0).failures())
		}
		return nil
	})
	progress()
	if err != nil {
		return nil, err
	}
	res := s.t.result(o.rows, time.Since(begin))
	calls := res.totalCalls()
	fmt.Printf("seeded in %s: %d calls, %.0f calls/s, %.0f rows/s across the four kinds of row (%d rows each)\n",
		res.took.Round(time.Second), calls, float64(calls)/res.took.Seconds(), float64(n)/res.took.Seconds(), o.rows)
	fmt.Printf("calls by kind: %s\n", res.byKind())
	if f := res.failures(); f != "" {
		fmt.Printf("failed calls: %s\n", f)
	}
	return res, nil
}

// setUp registers and funds more contributors, and makes more assets and
// the graph's leaves, for the rows to spread over.
func (s *seeder) setUp(ctx context.Context, workers int) error {
	for i := range seedContributors {
		handle := fmt.Sprintf("scale-s%02d", i)
		var c contributor
		err := s.t.do(ctx, kRegister, func() error {
			id, token, err := harness.Register(ctx, s.sys.client, s.sys.base, handle)
			c = contributor{id: id, auth: bearer(token)}
			return err
		})
		if err != nil {
			return err
		}
		if err := s.t.do(ctx, kDeposit, func() error { return deposit(ctx, s.sys, s.fx, c.id, s.fx.fundUSD, "fund-"+handle) }); err != nil {
			return err
		}
		s.pool = append(s.pool, c)
	}
	for i := range seedAssets {
		var id string
		err := s.t.do(ctx, kAsset, func() error {
			var err error
			id, err = createAsset(ctx, s.sys, s.fx, fmt.Sprintf("scale seed asset %d", i))
			return err
		})
		if err != nil {
			return err
		}
		s.assets = append(s.assets, id)
	}
	leaves := make([]string, seedLeaves)
	err := harness.Parallel(ctx, seedLeaves, workers, func(ctx context.Context, i int) error {
		return s.t.do(ctx, kNode, func() error {
			var err error
			leaves[i], err = node(ctx, s.sys, s.fx, "scale-leaf", fmt.Sprintf("leaf-%d", i))
			return err
		})
	})
	s.leaves = append(s.leaves, leaves...)
	return err
}

// item makes the i-th row: a movement, a contribution, a task or an edge
// in turn, each the (i/4)-th of its kind. Failures are counted, not
// returned: the seed goes on.
func (s *seeder) item(ctx context.Context, i int) {
	ord := i / 4
	switch i % 4 {
	case 0:
		s.movement(ctx, ord)
	case 1:
		s.contribution(ctx, ord)
	case 2:
		s.task(ctx, ord)
	default:
		s.edge(ctx, ord)
	}
}

// who is the contributor of the ord-th movement or contribution: the busy
// one for a quarter of them, one of the pool otherwise.
func (s *seeder) who(ord int) contributor {
	if ord%4 == 0 {
		return s.fx.busy
	}
	return s.pool[ord%len(s.pool)]
}

// movement is a deposit of 1 USD (even ord) or a stake (odd ord) by the
// same contributor: deposits keep every account funded past its
// stakes.
func (s *seeder) movement(ctx context.Context, ord int) {
	c := s.who(ord / 2)
	if ord%2 == 0 {
		_ = s.t.do(ctx, kDeposit, func() error { return deposit(ctx, s.sys, s.fx, c.id, 1, fmt.Sprintf("seed-%d", ord)) })
		return
	}
	idea := s.fx.ideas[(ord/2)%len(s.fx.ideas)]
	_ = s.t.do(ctx, kStake, func() error { return stake(ctx, s.sys, c, idea) })
}

func (s *seeder) contribution(ctx context.Context, ord int) {
	asset := s.assets[0]
	if ord%4 != 0 {
		asset = s.assets[1+ord%(len(s.assets)-1)]
	}
	c := s.who(ord / 4)
	_ = s.t.do(ctx, kContribution, func() error { return contribute(ctx, s.sys, s.fx, c.id, asset, float64(1+ord%10)) })
}

// task creates a task and, but for one in twenty left pending, claims
// and finishes it; one in ten finished fails.
func (s *seeder) task(ctx context.Context, ord int) {
	var id string
	if err := s.t.do(ctx, kTaskCreate, func() error {
		var err error
		id, err = createTask(ctx, s.sys, s.fx, 3+ord)
		return err
	}); err != nil || ord%20 == 19 {
		return
	}
	if s.t.do(ctx, kTaskClaim, func() error { return claimTask(ctx, s.sys, s.fx, id) }) != nil {
		return
	}
	_ = s.t.do(ctx, kTaskEnd, func() error { return endTask(ctx, s.sys, s.fx, id, ord%10 == 3) })
}

// edge joins the hub to a leaf (a quarter), a leaf to the hub (a quarter)
// or two leaves.
func (s *seeder) edge(ctx context.Context, ord int) {
	leaf := s.leaves[ord%len(s.leaves)]
	from, to, typ := s.fx.hub, leaf, "scale-spoke"
	switch ord % 4 {
	case 0:
	case 1:
		from, to = leaf, s.fx.hub
	default:
		from, to, typ = leaf, s.leaves[(ord*7+1)%len(s.leaves)], "scale-link"
	}
	_ = s.t.do(ctx, kEdge, func() error { return edge(ctx, s.sys, s.fx, typ, from, to) })
}

// progress prints the seed's progress every interval until the function it
// returns is called.
func (s *seeder) progress(interval time.Duration, begin time.Time, done *atomic.Int64, n int) func() {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tick := time.NewTicker(interval)
		defer tick.Stop()
		var lastRows, lastCalls int64
		last := begin
		for {
			select {
			case <-stop:
				return
			case now := <-tick.C:
				rows := done.Load()
				calls, failed := s.t.totals()
				span := now.Sub(last).Seconds()
				fmt.Printf("  %5.0fs  %d/%d rows (%.0f%%)  %.0f rows/s  %.0f calls/s  (since start: %.0f rows/s)  %d failed\n",
					now.Sub(begin).Seconds(), rows, n, 100*float64(rows)/float64(n), float64(rows-lastRows)/span,
					float64(calls-lastCalls)/span, float64(rows)/now.Sub(begin).Seconds(), failed)
				lastRows, lastCalls, last = rows, calls, now
			}
		}
	})
	return func() { close(stop); wg.Wait() }
}

// byKind lists the calls made by kind.
func (s *seeding) byKind() string {
	var parts []string
	for k := range nKinds {
		parts = append(parts, fmt.Sprintf("%s %d", k, s.calls[k]))
	}
	return strings.Join(parts, ", ")
}

// failures lists the failed calls by kind with the first error of each
// ("" when none failed).
func (s *seeding) failures() string {
	var parts []string
	for k := range nKinds {
		if s.failed[k] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (first: %s)", k, s.failed[k], s.firstErr[k]))
		}
	}
	return strings.Join(parts, "; ")
}

// drainAudit waits until the audit sequencer has integrated every entry
// the seed queued (GET /api/audit/verify's unsequenced_entries is 0, as
// the e2e tests wait for it) and returns how long that took.
func drainAudit(ctx context.Context, sys *system, limit time.Duration) (time.Duration, error) {
	begin := time.Now()
	lastPrint := begin
	for {
		var v struct {
			Unsequenced int64 `json:"unsequenced_entries"`
			TreeSize    int64 `json:"tree_size"`
		}
		if err := sys.call(ctx, http.MethodGet, "/api/audit/verify", nil, nil, &v); err != nil {
			return 0, err
		}
		if v.Unsequenced == 0 {
			return time.Since(begin), nil
		}
		if time.Since(lastPrint) >= 5*time.Second {
			fmt.Printf("  audit backlog: %d entries waiting for the sequencer, %d integrated\n", v.Unsequenced, v.TreeSize)
			lastPrint = time.Now()
		}
		if time.Since(begin) > limit {
			return 0, fmt.Errorf("%d entries still unsequenced after %s", v.Unsequenced, limit)
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return 0, err
		}
	}
}

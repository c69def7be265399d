//go:build chaos

// The chaos test runs only with the build tag (make test-chaos; make test
// runs one seed per engine): it takes minutes, not seconds.

package e2e_test

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"golang.org/x/mod/sumdb/note"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// chaosSettings are the chaos run's size, from the environment:
// FOUNDRY_CHAOS_CLIENTS (32) clients each send FOUNDRY_CHAOS_OPS (400)
// operations; FOUNDRY_CHAOS_SEEDS (1) runs per engine, with seeds from
// FOUNDRY_CHAOS_SEED (the first, default 1) upwards, so a failing seed can be
// run again alone.
type chaosSettings struct{ clients, ops, seeds, seed int }

func chaosSettingsFromEnv(t *testing.T) chaosSettings {
	t.Helper()
	get := func(name string, def int) int {
		v := os.Getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "%s=%q", name, v)
		require.Positive(t, n, "%s", name)
		return n
	}
	return chaosSettings{clients: get("FOUNDRY_CHAOS_CLIENTS", 32), ops: get("FOUNDRY_CHAOS_OPS", 400),
		seeds: get("FOUNDRY_CHAOS_SEEDS", 1), seed: get("FOUNDRY_CHAOS_SEED", 1)}
}

// TestChaos sends a mixed workload from many clients (contributions,
// webhook deliveries, deposits, stakes, task creation, claims and
// completions), each with the credential the model gives it (its
// contributor's session for its own contributions and stakes, the
// administrator key for deposits, an operator token to create tasks and a
// worker token of its own to claim and complete them), while faults strike: on Postgres, service processes are
// SIGKILLed and restarted, Postgres sessions terminated, connections to
// Postgres cut and slowed by a proxy in between; on SQLite, the one process
// is SIGKILLed during writes and restarted. Clients retry what failed with
// the same idempotency key until it is acknowledged. Afterwards nothing
// acknowledged is missing, nothing took effect twice, every balance equals
// the client's own count and its journal, the audit chain verifies, asset
// totals equal their contributions, no task was claimed twice, and (SQLite)
// every database file passes integrity_check. Every process of a run signs
// the audit log's checkpoints with the same key (FOUNDRY_AUDIT_SIGNING_KEY),
// as a deployment would: the log's latest signed checkpoint verifies with
// it and is consistent with the one signed before the faults, however many
// ledgers were killed in between, the sequencer's queue drains, and the
// full verification of the log is sound.
func TestChaos(t *testing.T) {
	s := chaosSettingsFromEnv(t)
	for seed := s.seed; seed < s.seed+s.seeds; seed++ {
		t.Run(fmt.Sprintf("postgres/seed=%d", seed), func(t *testing.T) {
			key := newChaosAuditKey(t)
			runChaos(t, newPostgresChaos(t, key.env()...), key, s, uint64(seed))
		})
		t.Run(fmt.Sprintf("sqlite/seed=%d", seed), func(t *testing.T) {
			key := newChaosAuditKey(t)
			runChaos(t, newSQLiteChaos(t, key.env()...), key, s, uint64(seed))
		})
	}
}

// chaosAuditKey is a run's checkpoint signing key and its verifier key,
// and the witness of its log (foundry audit witness, in the test's own
// process, so the faults never strike it).
type chaosAuditKey struct{ signing, verifier, witnessURL, witness string }

// chaosScrubCycle is the scrubber's cycle during a run: short, so it walks
// the whole log many times while the faults strike.
const chaosScrubCycle = "5s"

func newChaosAuditKey(t *testing.T) chaosAuditKey {
	skey, vkey, err := note.GenerateKey(crand.Reader, "foundry-chaos")
	require.NoError(t, err)
	k := chaosAuditKey{signing: skey, verifier: vkey}
	k.witnessURL, k.witness = witnessServe(t, "chaos-witness", vkey)
	return k
}

// env is what every process of the run is started with.
func (k chaosAuditKey) env() []string {
	return []string{"FOUNDRY_AUDIT_SIGNING_KEY=" + k.signing, "FOUNDRY_AUDIT_WITNESSES=" + k.witness + "@" + k.witnessURL,
		"FOUNDRY_AUDIT_SCRUB_CYCLE=" + chaosScrubCycle}
}

// chaosTarget is a running Foundry that faults can strike.
type chaosTarget interface {
	// URL is the gateway's address joined with path.
	URL(path string) string
	// Fault strikes once, chosen by r, and returns what it did.
	Fault(r *rand.Rand) string
	// Settle ends the faults' effects: every process running and ready,
	// no latency.
	Settle()
	// Check runs the engine's own checks once the workload is over.
	Check(t *testing.T)
}

func runChaos(t *testing.T, sys chaosTarget, key chaosAuditKey, s chaosSettings, seed uint64) {
	w := newChaosWorld(t, sys, s.clients, seed)
	before := w.checkpointBeforeFaults(key)

	stop := make(chan struct{})
	faultsDone := make(chan []string)
	go func() {
		r := rand.New(rand.NewPCG(seed, 0xfa))
		var struck []string
		for {
			select {
			case <-stop:
				faultsDone <- struck
				return
			case <-time.After(time.Duration(800+r.IntN(1700)) * time.Millisecond):
			}
			struck = append(struck, sys.Fault(r))
		}
	}()

	began := time.Now()
	var wg sync.WaitGroup
	for _, c := range w.clients {
		wg.Go(func() { c.run(s.ops) })
	}
	wg.Wait()
	close(stop)
	struck := <-faultsDone
	sys.Settle()
	var retries int64
	internal, silent503, lastInternal := 0, 0, ""
	for _, c := range w.clients {
		retries += c.retries
		internal, silent503 = internal+c.internal, silent503+c.silent503
		if c.lastInternal != "" {
			lastInternal = c.lastInternal
		}
	}
	require.Zero(t, internal, "no fault is an internal error: a lost database answers 503 (the last 500: %s)", lastInternal)
	require.Zero(t, silent503, "every 503 says when to retry (Retry-After)")
	t.Logf("seed %d: %d clients x %d operations in %s, %d retried attempts; %d faults: %s", seed, s.clients, s.ops,
		time.Since(began).Round(time.Millisecond), retries, len(struck), summarize(struck))

	w.verify()
	w.verifyLog(key, before)
	sys.Check(t)
}

// checkpointBeforeFaults makes a movement of its own (a deposit for a
// contributor no client is), waits until the sequencer integrated it and
// returns the signed checkpoint that covers it, opened with the run's key:
// what a client outside holds before the faults.
func (w *chaosWorld) checkpointBeforeFaults(key chaosAuditKey) auditCheckpoint {
	t := w.t
	require.Equal(t, key.verifier, auditVerifierKey(t, w.sys), "the ledger signs with the run's key")
	reg := request(t, http.MethodPost, w.sys.URL("/api/onboarding/register"), map[string]any{"handle": "chaos-checkpoint"}, anonymous)
	requireStatus(t, http.StatusCreated, reg)
	requireStatus(t, http.StatusCreated, request(t, http.MethodPost, w.sys.URL("/api/cc/deposit"),
		map[string]any{"contributor_id": reg.JSON["contributor_id"], "amount_usd": 1, "reference": "chaos-checkpoint"}, asAdmin))
	waitSequenced(t, w.sys)
	// The checkpoint served is the latest the witness cosigned, which
	// follows the sequencer's by the witness's round trip.
	var c auditCheckpoint
	require.Eventually(t, func() bool {
		c = auditReadCheckpoint(t, w.sys, key.verifier)
		return c.Size >= 3
	}, 20*time.Second, 20*time.Millisecond, "the genesis record, the deposit and its fee, cosigned")
	return c
}

// verifyLog checks the audit log as a client holding the checkpoint signed
// before the faults would: the queue drains, the latest checkpoint's
// signature verifies with the run's key (every restarted ledger signed
// with it), the ledger proves that the tree before the faults is a prefix
// of the latest (tlog.CheckTree against both signed roots), records from
// both sides of the faults prove against the latest root, and the full
// verification (the administrator's walk from the first entry) is sound
// and covers the whole tree.
func (w *chaosWorld) verifyLog(key chaosAuditKey, before auditCheckpoint) {
	t := w.t
	if t.Failed() {
		return
	}
	seq := waitSequenced(t, w.sys)
	require.Equal(t, 0.0, seq["unsequenced_age_seconds"], "%v", seq)
	require.Equal(t, key.verifier, auditVerifierKey(t, w.sys))
	// The scrubber walked everything again since the faults ended, and
	// found nothing: none of the faults looked like damage to it.
	cycle := 0
	if last := auditVerify(t, w.sys, false).Scrub.LastCycle; last != nil {
		cycle = last.Cycle
	}
	require.Eventually(t, func() bool {
		last := auditVerify(t, w.sys, false).Scrub.LastCycle
		return last != nil && last.Cycle > cycle+1
	}, time.Minute, 200*time.Millisecond, "a whole scrub cycle after the faults")
	require.Zero(t, auditVerify(t, w.sys, false).Scrub.LastCycle.Findings)
	// The checkpoint served is the one the witness cosigned: once it has
	// caught up, it is the ledger's latest, with the cosignature. The log
	// may still grow after the load (the monitor records the mode it
	// settles on once the faults end), so the full verification is paired
	// with the checkpoint read just before it, and both are read again
	// until they name the same tree.
	var (
		latest auditCheckpoint
		v      auditLogVerify
	)
	require.Eventually(t, func() bool {
		latest = auditReadCheckpoint(t, w.sys, key.verifier)
		if latest.Size != auditVerify(t, w.sys, false).TreeSize || !strings.Contains(latest.Note, "\n— chaos-witness ") {
			return false
		}
		v = auditVerify(t, w.sys, true)
		return v.TreeSize == latest.Size
	}, 30*time.Second, 100*time.Millisecond, "the witness cosigns the latest checkpoint and the full verification covers it")
	require.Greater(t, latest.Size, before.Size, "the movements after the checkpoint grew the log")
	auditConsistent(t, w.sys, before, latest)
	for _, n := range []int64{0, before.Size - 1, before.Size, (before.Size + latest.Size) / 2, latest.Size - 1} {
		auditProve(t, w.sys, latest, n)
	}
	require.True(t, v.Valid, "the full verification: %+v", v)
	require.Equal(t, latest.Root, auditHash(t, v.RootHash))
	require.Equal(t, latest.Size-1, int64(v.EntriesChecked), "every entry: %+v", v)
	incidents, page := listPage(t, request(t, http.MethodGet, w.sys.URL("/api/incidents?limit=500"), nil), "incidents")
	require.Equal(t, wantPage(500, 0, len(incidents), false), page, "one page holds every incident")
	for _, it := range incidents {
		kind := it["kind"].(string)
		require.NotEqual(t, "audit_key_rotated", kind, "every ledger signed with the run's key: %v", it)
		require.False(t, strings.HasPrefix(kind, "integrity_"), "no fault looked like damage to the checks: %v", it)
	}
	t.Logf("audit log: %d entries; the checkpoint before the faults (%d records) is a prefix of the latest (%d)",
		v.EntriesChecked, before.Size, latest.Size)
}

// summarize counts the faults by kind.
func summarize(struck []string) string {
	counts := map[string]int{}
	for _, s := range struck {
		kind, _, _ := strings.Cut(s, " ")
		counts[kind]++
	}
	var parts []string
	for k, n := range counts {
		parts = append(parts, fmt.Sprintf("%s %d", k, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// --- the workload ----------------------------------------------------------------

// chaosWorld is the shared setup (ideas, assets, contributors, the
// operator's token) and the clients' record of what was acknowledged.
type chaosWorld struct {
	t        *testing.T
	sys      chaosTarget
	seed     uint64
	ideas    []string
	assets   []string
	operator string // an operator's API token: it creates the tasks
	clients  []*chaosClient
}

// chaosToken creates an API token with role and returns its secret.
func chaosToken(t *testing.T, sys chaosTarget, name, role string) string {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/tokens"), map[string]any{"name": name, "role": role}, asAdmin)
	requireStatus(t, http.StatusCreated, r)
	return r.JSON["token"].(string)
}

func newChaosWorld(t *testing.T, sys chaosTarget, clients int, seed uint64) *chaosWorld {
	w := &chaosWorld{t: t, sys: sys, seed: seed, operator: chaosToken(t, sys, "chaos-operator", "operator")}
	for i := range 4 {
		r := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"name": fmt.Sprintf("chaos idea %d", i),
			"potential_value": 100, "estimated_cost": 10})
		requireStatus(t, http.StatusCreated, r)
		w.ideas = append(w.ideas, r.JSON["id"].(string))
		a := request(t, http.MethodPost, sys.URL("/api/assets"), map[string]any{"type": "CODE", "name": fmt.Sprintf("chaos asset %d", i)})
		requireStatus(t, http.StatusCreated, a)
		w.assets = append(w.assets, a.JSON["id"].(string))
	}
	for i := range clients {
		reg := request(t, http.MethodPost, sys.URL("/api/onboarding/register"), map[string]any{"handle": fmt.Sprintf("chaos-%d", i)}, anonymous)
		requireStatus(t, http.StatusCreated, reg)
		w.clients = append(w.clients, &chaosClient{
			w: w, n: i, id: reg.JSON["contributor_id"].(string), token: reg.JSON["session_token"].(string),
			worker: chaosToken(t, sys, fmt.Sprintf("chaos-worker-%d", i), "worker"),
			r:      rand.New(rand.NewPCG(seed, uint64(i))),
			http: &http.Client{Timeout: 15 * time.Second,
				Transport: &http.Transport{MaxIdleConnsPerHost: 4, DisableCompression: true}},
		})
	}
	return w
}

// chaosClient is one client: its contributor, and what the system
// acknowledged to it.
type chaosClient struct {
	w      *chaosWorld
	n      int
	id     string
	token  string // the contributor's session
	worker string // the client's worker token
	r      *rand.Rand
	http   *http.Client

	deposits      int
	stakes        int
	contributions []chaosContribution
	tasks         []string
	retries       int64
	// internal are the 500s the faults caused, with the last one's answer:
	// a lost connection or a database shutting down must be a 503 that
	// says when to retry, never a 500 (the issue counted 333 of them).
	internal     int
	lastInternal string
	// silent503 are the 503s without a Retry-After.
	silent503 int
}

type chaosContribution struct {
	ID, AssetID string
	Cost        float64
	// Contributor is who the contribution must be recorded for; "" when
	// the ledger derives it (a webhook delivery).
	Contributor string
}

const (
	chaosStakeCC   = 10.0
	chaosDepositCC = 99.5 // 1 USD at 100 CC/USD less the 0.5 % spread
)

func (c *chaosClient) run(ops int) {
	for op := range ops {
		key := fmt.Sprintf("chaos-%d-%d-%d", c.w.seed, c.n, op)
		switch p := c.r.IntN(100); {
		case p < 20:
			c.contribute(key)
		case p < 35:
			c.deliver(key)
		case p < 55:
			c.deposit(key)
		case p < 70 && float64(c.deposits)*chaosDepositCC-float64(c.stakes)*chaosStakeCC >= chaosStakeCC:
			c.stake(key)
		default:
			c.task(key)
		}
		if c.w.t.Failed() {
			return
		}
	}
}

// contribute records a contribution with the contributor's own session,
// naming itself or (a third of the time) leaving contributor_id for the
// session to fill.
func (c *chaosClient) contribute(key string) {
	asset := c.w.assets[c.r.IntN(len(c.w.assets))]
	cost := float64(1+c.r.IntN(400)) / 4
	body := map[string]any{"contributor_id": c.id, "asset_id": asset, "cost_amount": cost}
	if c.r.IntN(3) == 0 {
		delete(body, "contributor_id")
	}
	r := c.send(http.MethodPost, "/api/contributions", body, "Authorization: Bearer "+c.token, "Idempotency-Key: "+key)
	c.contributions = append(c.contributions, chaosContribution{ID: str(r["id"]), AssetID: asset, Cost: cost, Contributor: c.id})
}

// deliver posts a shaped webhook delivery (what scripts and other forges
// send) with a delivery id, GitHub's idempotency key, to one of a few
// repositories, each an asset the ledger creates on first sight.
func (c *chaosClient) deliver(key string) {
	cost := float64(1+c.r.IntN(40)) / 4
	body := map[string]any{"contributor_email": fmt.Sprintf("chaos-%d@example.com", c.n),
		"repository": fmt.Sprintf("chaos/repo-%d", c.r.IntN(3)), "commit_hash": fmt.Sprintf("%x", sha1.Sum([]byte(key))),
		"cost_amount": cost}
	r := c.send(http.MethodPost, "/api/contributions/github", body, "X-GitHub-Delivery: "+key)
	c.contributions = append(c.contributions, chaosContribution{ID: str(r["id"]), AssetID: str(r["asset_id"]), Cost: cost})
}

func (c *chaosClient) deposit(key string) {
	c.send(http.MethodPost, "/api/cc/deposit", map[string]any{"contributor_id": c.id, "amount_usd": 1, "reference": key},
		"X-API-Key: "+allinonetest.AdminKey)
	c.deposits++
}

func (c *chaosClient) stake(key string) {
	c.send(http.MethodPost, "/api/cc/stake", map[string]any{"contributor_id": c.id,
		"idea_id": c.w.ideas[c.r.IntN(len(c.w.ideas))], "amount_cc": chaosStakeCC},
		"Authorization: Bearer "+c.token, "Idempotency-Key: "+key)
	c.stakes++
}

// task creates a task (the operator), claims it and completes it (the
// client's worker token): the create carries a key; a repeated claim by the
// same worker and credential and a repeated completion with the same values
// are safe as they are.
func (c *chaosClient) task(key string) {
	worker := fmt.Sprintf("chaos-worker-%d", c.n)
	created := c.send(http.MethodPost, "/api/agent/tasks", map[string]any{"direction": "chaos " + key, "task_type": "impl"},
		"Authorization: Bearer "+c.w.operator, "Idempotency-Key: "+key)
	id := str(created["id"])
	c.send(http.MethodPatch, "/api/agent/tasks/"+id, map[string]any{"status": "running", "worker_id": worker}, "Authorization: Bearer "+c.worker)
	c.send(http.MethodPatch, "/api/agent/tasks/"+id, map[string]any{"status": "completed", "worker_id": worker, "output": "done"},
		"Authorization: Bearer "+c.worker)
	c.tasks = append(c.tasks, id)
}

// send sends a request until it is acknowledged (2xx), retrying transport
// errors, 5xx, 408 and 429 with backoff, as a client of an unreliable
// network would; any other answer fails the test. It returns the body.
func (c *chaosClient) send(method, path string, body any, headers ...string) map[string]any {
	t := c.w.t
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	deadline := time.Now().Add(3 * time.Minute)
	backoff := 20 * time.Millisecond
	for attempt := 0; ; attempt++ {
		status, out, err := c.once(method, path, raw, headers)
		if err == nil && status == http.StatusInternalServerError {
			c.internal++
			c.lastInternal = fmt.Sprintf("%s %s: %s", method, path, out)
		}
		if err == nil && status >= 200 && status < 300 {
			var m map[string]any
			require.NoError(t, json.Unmarshal(out, &m), "%s %s: %s", method, path, out)
			return m
		}
		if err == nil && status < 500 && status != http.StatusRequestTimeout && status != http.StatusTooManyRequests {
			t.Errorf("%s %s %s: %d %s (attempt %d)", method, path, raw, status, out, attempt+1)
			return map[string]any{}
		}
		if time.Now().After(deadline) {
			t.Errorf("%s %s never acknowledged; last: %d %s %v", method, path, status, out, err)
			return map[string]any{}
		}
		c.retries++
		time.Sleep(backoff + time.Duration(c.r.IntN(int(backoff/time.Millisecond)+1))*time.Millisecond)
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

func (c *chaosClient) once(method, path string, body []byte, headers []string) (int, []byte, error) {
	req, err := newRequest(method, c.w.sys.URL(path), bytes.NewReader(body), headers)
	if err != nil {
		return 0, nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusServiceUnavailable && resp.Header.Get("Retry-After") == "" {
		c.silent503++
	}
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

func str(v any) string { s, _ := v.(string); return s }

// verify checks the system against what the clients were told.
func (w *chaosWorld) verify() {
	t := w.t
	if t.Failed() {
		return
	}
	get := func(path string) response {
		t.Helper()
		r := request(t, http.MethodGet, w.sys.URL(path), nil)
		requireStatus(t, http.StatusOK, r)
		return r
	}

	// Balances: every acknowledged deposit and stake exactly once.
	var deposits, stakes int
	for _, c := range w.clients {
		b := get("/api/cc/balances/" + c.id)
		require.InDelta(t, float64(c.deposits)*chaosDepositCC-float64(c.stakes)*chaosStakeCC, b.JSON["available_cc"], 1e-6,
			"client %d: %d deposits, %d stakes", c.n, c.deposits, c.stakes)
		require.InDelta(t, float64(c.stakes)*chaosStakeCC, b.JSON["staked_cc"], 1e-6, "client %d", c.n)
		deposits += c.deposits
		stakes += c.stakes
	}

	// Contributions: per asset, exactly the acknowledged ones, and the
	// asset's totals equal to their sum.
	want := map[string][]chaosContribution{}
	for _, c := range w.clients {
		for _, k := range c.contributions {
			want[k.AssetID] = append(want[k.AssetID], k)
		}
	}
	var contributions int
	for assetID, list := range want {
		var ids []string
		total := 0.0
		for _, k := range list {
			ids = append(ids, k.ID)
			total += k.Cost
		}
		var (
			got   []string
			pages []map[string]any
		)
		listed := 0.0
		recordedFor := map[string]string{}
		for offset := 0; ; offset += 500 {
			items, page := listPage(t, get(fmt.Sprintf("/api/assets/%s/contributions?limit=500&offset=%d", assetID, offset)), "contributions")
			for _, it := range items {
				got = append(got, str(it["id"]))
				listed += it["cost_amount"].(float64)
				recordedFor[str(it["id"])] = str(it["contributor_id"])
			}
			pages = append(pages, page)
			if len(items) < 500 {
				break
			}
		}
		for _, k := range list {
			if k.Contributor != "" {
				require.Equal(t, k.Contributor, recordedFor[k.ID], "contribution %s is its session's contributor's", k.ID)
			}
		}
		slices.Sort(ids)
		slices.Sort(got)
		require.Equal(t, ids, got, "asset %s: the acknowledged contributions, each once", assetID)
		for i, page := range pages {
			require.Equal(t, wantPage(500, i*500, len(list), (i+1)*500 < len(list)), page, "asset %s: the page at %d", assetID, i*500)
		}
		a := get("/api/assets/" + assetID)
		require.InDelta(t, total, a.JSON["total_cost"], 1e-6, "asset %s total", assetID)
		require.InDelta(t, listed, a.JSON["total_cost"], 1e-6, "asset %s total equals its contributions", assetID)
		require.Equal(t, float64(len(list)), a.JSON["contribution_count"], "asset %s count", assetID)
		contributions += len(list)
	}

	// Tasks: each acknowledged task once, completed, claimed once by its
	// client's worker.
	var tasks int
	for _, c := range w.clients {
		for _, id := range c.tasks {
			r := get("/api/agent/tasks/" + id)
			require.Equal(t, "completed", r.JSON["status"], "task %s", id)
			require.Equal(t, 1.0, r.JSON["attempts"], "task %s claimed once", id)
			require.Equal(t, fmt.Sprintf("chaos-worker-%d", c.n), r.JSON["worker_id"], "task %s", id)
		}
		tasks += len(c.tasks)
	}
	count := get("/api/agent/tasks/count")
	require.Equal(t, float64(tasks), count.JSON["total"], "no task created twice: %s", count.Raw)
	require.Equal(t, float64(tasks), count.JSON["by_status"].(map[string]any)["completed"], "%s", count.Raw)

	// Every movement's audit entries sequenced, the whole log walked.
	waitSequenced(t, w.sys)
	v := auditVerify(t, w.sys, true)
	require.True(t, v.Valid, "audit log: %+v", v)
	require.GreaterOrEqual(t, v.EntriesChecked, 2*deposits+stakes, "an entry per movement and per deposit's spread fee: %+v", v)
	h := get("/api/health/coherence")
	require.Equal(t, true, h.JSON["audit_chain_valid"], "coherence: %s", h.Raw)
	require.Empty(t, h.JSON["mismatched_accounts"], "every balance equals its journal: %s", h.Raw)
	t.Logf("verified: %d deposits, %d stakes, %d contributions on %d assets, %d tasks; %d audit entries",
		deposits, stakes, contributions, len(want), tasks, v.EntriesChecked)
}

// --- Postgres: separate processes, a proxy to Postgres ---------------------------

type postgresChaos struct {
	t       *testing.T
	storage allinonetest.Storage
	proxy   *pgProxy
	procs   []*allinonetest.Proc // the four services, then the gateway
	admin   *pgx.Conn
	dbName  string
}

// newPostgresChaos starts each service and the gateway as processes of
// their own, each with env added to its environment.
func newPostgresChaos(t *testing.T, env ...string) *postgresChaos {
	storage := allinonetest.NewStorage(t, database.Postgres) // skips without Postgres
	u, err := url.Parse(storage.DatabaseURL)
	require.NoError(t, err)
	proxy := newPGProxy(t, u.Host)
	proxied := *u
	proxied.Host = proxy.addr
	viaProxy := storage
	viaProxy.DatabaseURL = proxied.String()

	admin, err := pgx.Connect(context.Background(), storage.DatabaseURL)
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close(context.Background()) })

	p := &postgresChaos{t: t, storage: storage, proxy: proxy, admin: admin, dbName: strings.TrimPrefix(u.Path, "/")}
	services := allinonetest.ServiceNames()
	var peers []string
	for _, svc := range services {
		flags := []string{"-monitor-interval=2s"}
		if svc == "ops" {
			// The monitor's decisions are info lines: a failed run's output
			// then says why the economy changed mode under the load.
			flags = append(flags, "-log-level=info")
		}
		proc := allinonetest.NewProc(t, svc, svc, viaProxy, flags...)
		p.procs = append(p.procs, proc)
		peers = append(peers, "-"+svc+"-addr="+proc.GRPCAddr)
	}
	for _, proc := range p.procs {
		proc.With(peers...).WithEnv("FOUNDRY_GITHUB_ALLOW_UNSIGNED=true").WithEnv(env...).Launch()
	}
	for _, proc := range p.procs {
		proc.WaitReady(90 * time.Second)
	}
	// The gateway starts once the services answer, as in a deployment that
	// is up: the setup's requests are not retried.
	gateway := allinonetest.NewProc(t, "gateway", "gateway", viaProxy, peers...)
	gateway.WithEnv("FOUNDRY_GITHUB_ALLOW_UNSIGNED=true").WithEnv(env...).Start()
	p.procs = append(p.procs, gateway)
	return p
}

func (p *postgresChaos) URL(path string) string { return p.procs[len(p.procs)-1].URL(path) }

func (p *postgresChaos) Fault(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		proc := p.procs[r.IntN(len(p.procs))]
		proc.Kill()
		time.Sleep(time.Duration(r.IntN(500)) * time.Millisecond)
		proc.Launch()
		proc.WaitReady(90 * time.Second)
		return "kill " + proc.Name
	case 1:
		var n int
		err := p.admin.QueryRow(context.Background(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = $1 AND application_name LIKE 'foundry-%' AND pid <> pg_backend_pid()`, p.dbName).Scan(&n)
		require.NoError(p.t, err)
		return fmt.Sprintf("terminate %d sessions", n)
	case 2:
		n := p.proxy.cut()
		return fmt.Sprintf("cut %d connections", n)
	default:
		// An episode of latency: a slow network for a while, not for the
		// rest of the run.
		d := time.Duration(1+r.IntN(20)) * time.Millisecond
		p.proxy.delay.Store(int64(d))
		time.Sleep(time.Duration(500+r.IntN(2000)) * time.Millisecond)
		p.proxy.delay.Store(0)
		return "latency " + d.String()
	}
}

func (p *postgresChaos) Settle() {
	p.proxy.delay.Store(0)
	for _, proc := range p.procs {
		if !proc.Running() {
			proc.Launch()
		}
		proc.WaitReady(90 * time.Second)
	}
}

func (p *postgresChaos) Check(t *testing.T) {
	db, err := database.Open(context.Background(), database.Config{URL: p.storage.DatabaseURL, Schema: "agent"})
	require.NoError(t, err)
	defer db.Close()
	requireNoTwinTasks(t, db)
}

// requireNoTwinTasks looks in the agent's own tables, beneath the API:
// every task's direction names the operation that created it, so two rows
// with one direction are a create that took effect twice.
func requireNoTwinTasks(t *testing.T, db *database.DB) {
	t.Helper()
	var tasks, twins int
	require.NoError(t, db.QueryRow(context.Background(), `SELECT count(*) FROM tasks`).Scan(&tasks))
	require.NoError(t, db.QueryRow(context.Background(), `SELECT count(*) FROM (SELECT direction FROM tasks
		GROUP BY direction HAVING count(*) > 1) d`).Scan(&twins))
	require.Positive(t, tasks)
	require.Zero(t, twins, "tasks created twice")
}

// pgProxy forwards TCP connections to Postgres, slowing what the services
// send by delay per read and able to cut every connection at once.
type pgProxy struct {
	addr   string
	target string
	lis    net.Listener
	delay  atomic.Int64 // nanoseconds

	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func newPGProxy(t *testing.T, target string) *pgProxy {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &pgProxy{addr: lis.Addr().String(), target: target, lis: lis, conns: map[net.Conn]struct{}{}}
	go p.serve()
	t.Cleanup(func() { _ = lis.Close(); p.cut() })
	return p
}

func (p *pgProxy) serve() {
	for {
		c, err := p.lis.Accept()
		if err != nil {
			return
		}
		go p.handle(c)
	}
}

func (p *pgProxy) handle(client net.Conn) {
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		_ = client.Close()
		return
	}
	p.mu.Lock()
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.conns, client)
		delete(p.conns, server)
		p.mu.Unlock()
		_ = client.Close()
		_ = server.Close()
	}()
	go p.pipe(client, server, false)
	p.pipe(server, client, true)
}

// pipe copies src to dst until either fails, sleeping delay before each
// forward when slow.
func (p *pgProxy) pipe(dst, src net.Conn, slow bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if d := time.Duration(p.delay.Load()); slow && d > 0 {
				time.Sleep(d)
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	_ = dst.Close()
	_ = src.Close()
}

// cut closes every proxied connection and returns how many pairs it cut.
func (p *pgProxy) cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
	n := len(p.conns) / 2
	clear(p.conns)
	return n
}

// --- SQLite: one process, SIGKILLed during writes --------------------------------

type sqliteChaos struct {
	storage allinonetest.Storage
	proc    *allinonetest.Proc
}

// newSQLiteChaos starts all of Foundry as one process, with env added to
// its environment.
func newSQLiteChaos(t *testing.T, env ...string) *sqliteChaos {
	storage := allinonetest.NewStorage(t, database.SQLite)
	proc := allinonetest.NewProc(t, "foundry", "all", storage, "-monitor-interval=2s").
		WithEnv("FOUNDRY_GITHUB_ALLOW_UNSIGNED=true").WithEnv(env...)
	proc.Start()
	return &sqliteChaos{storage: storage, proc: proc}
}

func (s *sqliteChaos) URL(path string) string { return s.proc.URL(path) }

func (s *sqliteChaos) Fault(r *rand.Rand) string {
	// Faults come less often than on Postgres, where most are not kills:
	// each kill stops every service at once.
	time.Sleep(time.Duration(r.IntN(1500)) * time.Millisecond)
	s.proc.Kill()
	time.Sleep(time.Duration(r.IntN(300)) * time.Millisecond)
	s.proc.Launch()
	s.proc.WaitReady(90 * time.Second)
	return "kill foundry"
}

func (s *sqliteChaos) Settle() {
	if !s.proc.Running() {
		s.proc.Launch()
	}
	s.proc.WaitReady(90 * time.Second)
}

// Check stops the process and runs integrity_check on every database file.
func (s *sqliteChaos) Check(t *testing.T) {
	s.proc.Kill()
	files, err := filepath.Glob(filepath.Join(s.storage.DataDir, "*.db"))
	require.NoError(t, err)
	require.Len(t, files, 4, "one file per service: %v", files)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".db")
		db, err := database.Open(context.Background(), database.Config{Schema: name, DataDir: s.storage.DataDir})
		require.NoError(t, err)
		var result string
		require.NoError(t, db.QueryRow(context.Background(), `PRAGMA integrity_check`).Scan(&result))
		require.Equal(t, "ok", result, "%s", f)
		if name == "agent" {
			requireNoTwinTasks(t, db)
		}
		db.Close()
	}
}

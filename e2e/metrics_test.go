package e2e_test

import (
	"bufio"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// The gauges alerts are written against, read from /metrics on the admin
// address as Prometheus scrapes them: they follow the economy's mode
// through a freeze and an unfreeze, and the queue as tasks wait and are
// claimed. The gauges are read in the background every
// -metrics-interval, so the test polls; it never asserts how soon.

// metricsWithin bounds the polls: many refresh intervals, however slow the
// machine.
const metricsWithin = 30 * time.Second

// series is one sample line of a scrape.
type series struct {
	name   string
	labels map[string]string
	value  float64
}

var labelPair = regexp.MustCompile(`([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"`)

// scrape reads every sample of /metrics at admin.
func scrape(t *testing.T, admin string) []series {
	t.Helper()
	resp, err := client.Get("http://" + admin + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out []series
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		s := series{labels: map[string]string{}}
		var rest string
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			s.name, rest = line[:i], line[j+1:]
			for _, m := range labelPair.FindAllStringSubmatch(line[i+1:j], -1) {
				s.labels[m[1]] = m[2]
			}
		} else {
			s.name, rest, _ = strings.Cut(line, " ")
		}
		fields := strings.Fields(rest)
		require.NotEmpty(t, fields, line)
		s.value, err = strconv.ParseFloat(fields[0], 64)
		require.NoError(t, err, line)
		out = append(out, s)
	}
	require.NoError(t, sc.Err())
	return out
}

// sample is the value of the series name with the labels (others may be
// there too, such as module); ok is false when there is none.
func sample(t *testing.T, admin, name string, labels ...string) (float64, bool) {
	t.Helper()
	for _, s := range scrape(t, admin) {
		if s.name != name {
			continue
		}
		match := true
		for k := 0; k+1 < len(labels); k += 2 {
			match = match && s.labels[labels[k]] == labels[k+1]
		}
		if match {
			return s.value, true
		}
	}
	return 0, false
}

// eventually waits until the series name with the labels satisfies want.
func eventually(t *testing.T, admin, what string, want func(v float64) bool, name string, labels ...string) {
	t.Helper()
	var last string
	require.Eventually(t, func() bool {
		v, ok := sample(t, admin, name, labels...)
		last = "absent"
		if ok {
			last = strconv.FormatFloat(v, 'g', -1, 64)
		}
		return ok && want(v)
	}, metricsWithin, 20*time.Millisecond, "%s %v: want %s, last %s", name, labels, what, last)
}

func is(want float64) func(float64) bool { return func(v float64) bool { return v == want } }

// startWithMetrics starts Foundry on engine with its admin address on a
// port of its own and the gauges read every few milliseconds; it returns
// the system and the admin address.
func startWithMetrics(t *testing.T, engine database.Engine, extra ...string) (*allinonetest.System, string) {
	t.Helper()
	admin := allinonetest.FreeAddr(t)
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine),
		append([]string{"-admin-addr=" + admin, "-metrics-interval=20ms"}, extra...)...)
	return sys, admin
}

// TestMetricsFollowAFreeze: foundry_ledger_economy_mode says frozen (1)
// after a signed freeze and normal again after the unfreeze, and the
// freeze is counted.
func TestMetricsFollowAFreeze(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys, admin := startWithMetrics(t, engine, freezeFlags...)
		mode := func(m string) []string { return []string{"mode", m} }

		eventually(t, admin, "1", is(1), "foundry_ledger_economy_mode", mode("normal")...)
		eventually(t, admin, "0", is(0), "foundry_ledger_economy_mode", mode("frozen")...)
		freezes, ok := sample(t, admin, "foundry_ledger_freezes_total")
		require.True(t, ok, "the counter exists before the first freeze")
		require.Zero(t, freezes)
		ratio, ok := sample(t, admin, "foundry_ledger_reserve_ratio")
		require.True(t, ok)
		require.True(t, math.IsNaN(ratio), "nothing outstanding: NaN, got %v", ratio)

		r := freezePost(t, sys.BaseURL, freezeBody(freezeOpsSecret, "ops", time.Now(), freezeNonce(t), "metrics drill"))
		requireStatus(t, http.StatusOK, r)
		eventually(t, admin, "1", is(1), "foundry_ledger_economy_mode", mode("frozen")...)
		eventually(t, admin, "0", is(0), "foundry_ledger_economy_mode", mode("normal")...)
		freezes, _ = sample(t, admin, "foundry_ledger_freezes_total")
		require.Equal(t, 1.0, freezes)

		freezeUnfreeze(t, sys.BaseURL)
		eventually(t, admin, "0", is(0), "foundry_ledger_economy_mode", mode("frozen")...)
		eventually(t, admin, "1", is(1), "foundry_ledger_economy_mode", mode("normal")...)

		// The audit log: the freeze and the unfreeze wait for the
		// sequencer, then a verification (this one asked for through the
		// API) reports the chain sound.
		waitSequenced(t, sys)
		eventually(t, admin, "0", is(0), "foundry_ledger_audit_unsequenced")
		eventually(t, admin, "1", is(1), "foundry_ledger_audit_chain_valid")
		eventually(t, admin, "a seq", func(v float64) bool { return v >= 2 }, "foundry_ledger_audit_verified_seq")
	})
}

// TestMetricsFollowAStuckQueue: tasks nobody claims raise
// foundry_agent_tasks{status="pending"} to their number and the oldest's
// age above 0; a claim is counted, and the gauges follow it.
func TestMetricsFollowAStuckQueue(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys, admin := startWithMetrics(t, engine)
		pending := []string{"status", "pending"}

		eventually(t, admin, "0", is(0), "foundry_agent_tasks", pending...)
		eventually(t, admin, "0", is(0), "foundry_agent_oldest_pending_age_seconds")
		claims, ok := sample(t, admin, "foundry_agent_task_claims_total")
		require.True(t, ok, "the counter exists before the first claim")
		require.Zero(t, claims)

		for range 3 {
			createAgentTask(t, sys, map[string]any{"direction": "nobody will claim this", "task_type": "impl"})
		}
		eventually(t, admin, "3", is(3), "foundry_agent_tasks", pending...)
		eventually(t, admin, "> 0", func(v float64) bool { return v > 0 }, "foundry_agent_oldest_pending_age_seconds")

		c := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "w1"})
		requireStatus(t, http.StatusOK, c)
		claims, _ = sample(t, admin, "foundry_agent_task_claims_total")
		require.Equal(t, 1.0, claims)
		eventually(t, admin, "2", is(2), "foundry_agent_tasks", pending...)
		eventually(t, admin, "1", is(1), "foundry_agent_tasks", "status", "running")
		backlog, ok := sample(t, admin, "foundry_agent_outbox_backlog")
		require.True(t, ok)
		require.Zero(t, backlog, "nothing completed: nothing owed to the portfolio")

		// The gateway's OpenTelemetry histogram labelled the creates by
		// their route pattern.
		created, ok := sample(t, admin, "http_server_request_duration_seconds_count",
			"http_request_method", "POST", "http_route", "/api/agent/tasks", "http_response_status_code", "201")
		require.True(t, ok)
		require.Equal(t, 3.0, created)
	})
}

// TestMetricsCountIdeasByStage: foundry_portfolio_ideas follows an idea
// through its stages.
func TestMetricsCountIdeasByStage(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys, admin := startWithMetrics(t, engine)
		stage := func(s string) []string { return []string{"stage", s} }
		eventually(t, admin, "0", is(0), "foundry_portfolio_ideas", stage("none")...)

		r := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"name": "Watch the stages", "potential_value": 10, "estimated_cost": 2})
		requireStatus(t, http.StatusCreated, r)
		id, _ := r.JSON["id"].(string)
		require.NotEmpty(t, id, "%s", r.Raw)
		eventually(t, admin, "1", is(1), "foundry_portfolio_ideas", stage("none")...)

		requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/ideas/"+id+"/advance"), nil))
		eventually(t, admin, "0", is(0), "foundry_portfolio_ideas", stage("none")...)
		eventually(t, admin, "1", is(1), "foundry_portfolio_ideas", stage("specced")...)
	})
}

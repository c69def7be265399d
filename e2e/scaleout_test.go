package e2e_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// TestScaleOutOnOnePostgres runs Foundry as Kubernetes would, on one
// machine: two processes of each service against one Postgres database,
// started at once (their migrations race), behind a gateway that spreads
// calls over both replicas of each. It checks that the migrations applied
// once each, that calls reach both replicas, that one ops replica at a
// time runs the economy monitor, and that SIGKILLing a ledger replica under load
// fails only the calls in flight on it: clients that retry (deposits carry
// their reference, so a retry never mints twice) lose nothing.
func TestScaleOutOnOnePostgres(t *testing.T) {
	t.Parallel()
	storage := allinonetest.NewStorage(t, database.Postgres) // skips without Postgres
	services := allinonetest.ServiceNames()
	replicas := map[string][]*allinonetest.Proc{}
	var peerFlags []string
	for _, svc := range services {
		var addrs []string
		for i := range 2 {
			// The monitor's lease lasts three intervals: 1 s keeps it short
			// enough to see several checks, long enough that a busy machine
			// does not make the leader miss its renewal.
			p := allinonetest.NewProc(t, fmt.Sprintf("%s-%d", svc, i), svc, storage, "-monitor-interval=1s")
			replicas[svc] = append(replicas[svc], p)
			addrs = append(addrs, p.GRPCAddr)
		}
		peerFlags = append(peerFlags, "-"+svc+"-addr="+strings.Join(addrs, ","))
	}
	for _, svc := range services {
		for _, p := range replicas[svc] {
			p.With(peerFlags...).Launch() // all at once: the migrations race
		}
	}
	for _, svc := range services {
		for _, p := range replicas[svc] {
			p.WaitReady(90 * time.Second)
		}
	}
	gateway := allinonetest.NewProc(t, "gateway", "gateway", storage, peerFlags...)
	gateway.Start()

	ctx := context.Background()
	db, err := pgx.Connect(ctx, storage.DatabaseURL)
	require.NoError(t, err)
	defer func() { _ = db.Close(ctx) }()
	for _, svc := range services {
		var versions, rows int
		require.NoError(t, db.QueryRow(ctx, `SELECT count(DISTINCT version), count(*) FROM `+svc+`.schema_migrations`).Scan(&versions, &rows))
		require.Positive(t, versions, "%s migrated", svc)
		require.Equal(t, versions, rows, "%s: each migration applied once although two processes raced", svc)
	}

	ada := registerOn(t, gateway.URL(""), "ada")
	client := &http.Client{Timeout: 10 * time.Second}
	deposit := func(ref string) (int, error) {
		body, _ := json.Marshal(map[string]any{"contributor_id": ada, "amount_usd": 1, "reference": ref})
		req, _ := http.NewRequest(http.MethodPost, gateway.URL("/api/cc/deposit"), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-API-Key", allinonetest.AdminKey)
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
		return resp.StatusCode, nil
	}

	const workers = 8
	var (
		failedAttempts atomic.Int64
		mu             sync.Mutex
		done           []string
		wg             sync.WaitGroup
		stop           = make(chan struct{})
	)
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				ref := fmt.Sprintf("w%d-%d", w, i)
				for attempt := 0; ; attempt++ {
					status, err := deposit(ref)
					if err == nil && (status == http.StatusCreated || status == http.StatusOK) {
						break
					}
					failedAttempts.Add(1)
					if attempt == 20 {
						t.Errorf("deposit %s failed 20 times; last: %d %v", ref, status, err)
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
				mu.Lock()
				done = append(done, ref)
				mu.Unlock()
			}
		})
	}

	time.Sleep(1500 * time.Millisecond)
	before := []float64{handled(t, replicas["ledger"][0], "Deposit"), handled(t, replicas["ledger"][1], "Deposit")}
	replicas["ledger"][0].Kill()
	time.Sleep(1500 * time.Millisecond)
	close(stop)
	wg.Wait()

	require.Positive(t, before[0], "ledger-0 served deposits: the gateway spreads calls over the replicas")
	require.Positive(t, before[1], "ledger-1 served deposits")
	t.Logf("%d deposits acknowledged, %d failed attempts retried; before the kill ledger-0 served %.0f and ledger-1 %.0f",
		len(done), failedAttempts.Load(), before[0], before[1])
	require.LessOrEqual(t, failedAttempts.Load(), int64(2*workers),
		"only the calls in flight on the killed replica (at most one per client, and a few already routed to it) fail")

	r := request(t, http.MethodGet, gateway.URL("/api/cc/balances/"+ada), nil)
	requireStatus(t, http.StatusOK, r)
	require.InDelta(t, 99.5*float64(len(done)), r.JSON["available_cc"], 1e-6, "every acknowledged deposit once, none lost")

	// One ops replica leads the monitor at a time. On a loaded machine a
	// leader can miss its lease's renewal (three intervals) and the other
	// replica take over, which is the lease doing its job; what must never
	// be is two replicas checking in the same stretch of time.
	rows, err := db.Query(ctx, `SELECT holder, MIN(checked_at), MAX(checked_at), COUNT(*) FROM ops.monitor_checks
		GROUP BY holder ORDER BY MIN(checked_at)`)
	require.NoError(t, err)
	var checks int
	var lastEnd int64
	var leaders []string
	for rows.Next() {
		var (
			holder     string
			first, end int64
			n          int
		)
		require.NoError(t, rows.Scan(&holder, &first, &end, &n))
		require.Greater(t, first, lastEnd, "%s checked while another replica led the monitor", holder)
		leaders, lastEnd, checks = append(leaders, holder), end, checks+n
	}
	require.NoError(t, rows.Err())
	require.GreaterOrEqual(t, checks, 2, "the monitor ran")
	t.Logf("the monitor's leaders, in turn: %v", leaders)
}

// handled is the count of OK calls of a ledger method a process served,
// from its /metrics.
func handled(t *testing.T, p *allinonetest.Proc, method string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + p.AdminAddr + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "grpc_server_handled_total{") || !strings.Contains(line, `grpc_method="`+method+`"`) ||
			!strings.Contains(line, `grpc_code="OK"`) {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		require.NoError(t, err, line)
		total += v
	}
	require.NoError(t, sc.Err())
	return total
}

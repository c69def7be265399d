package e2e_test

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// TestFailedAuthenticationIsThrottledPerAddress: the measurement.
// 2 000 random Bearer tokens from 8 clients were 2 000 × 401, each a
// ledger look-up. With a budget of 30 failures a minute per address, each
// of the 8 gets its 30 401s (and one more for each token refilled while
// the test runs), then 429s with Retry-After, whatever
// credential it sends next; a client on another address authenticates as
// before, and requests without a credential are never counted.
func TestFailedAuthenticationIsThrottledPerAddress(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite),
		"-auth-failures-per-min=30", "-trusted-proxies=127.0.0.1/32")
	const clients, perClient, budget = 8, 250, 30
	start := time.Now()
	var mu sync.Mutex
	statuses := map[string]map[int]int{}
	var wg sync.WaitGroup
	for c := range clients {
		addr := fmt.Sprintf("203.0.113.%d", c+1)
		statuses[addr] = map[int]int{}
		wg.Go(func() {
			for range perClient {
				b := make([]byte, 32)
				_, _ = rand.Read(b)
				r := request(t, http.MethodGet, sys.URL("/api/whoami"), nil,
					"Authorization: Bearer fdt_"+hex.EncodeToString(b), "X-Forwarded-For: "+addr)
				if r.Status == http.StatusTooManyRequests {
					secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
					if err != nil || secs < 1 || secs > 60 {
						t.Errorf("%s: Retry-After %q, want 1..60 whole seconds", addr, r.Header.Get("Retry-After"))
					}
				}
				mu.Lock()
				statuses[addr][r.Status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	// The bucket refills one failure every 2 s while the test runs (longer
	// under the race detector on a loaded machine): those few are 401s too.
	refilled := int(time.Since(start)/(2*time.Second)) + 1
	for addr, s := range statuses {
		require.Equal(t, perClient, s[http.StatusUnauthorized]+s[http.StatusTooManyRequests], "%s: only 401s and 429s: %v", addr, s)
		require.GreaterOrEqual(t, s[http.StatusUnauthorized], budget, "%s: the budget is 401s: %v", addr, s)
		require.LessOrEqual(t, s[http.StatusUnauthorized], budget+refilled, "%s: then 429s, but for what refilled: %v", addr, s)
	}

	// The clients finished at different times, and a failure refilled
	// since an early one finished would let the next request through:
	// the address spends what refilled (401s) until it is refused again,
	// then the right key from it is refused too.
	for range budget {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		if request(t, http.MethodGet, sys.URL("/api/whoami"), nil, "Authorization: Bearer fdt_"+hex.EncodeToString(b),
			"X-Forwarded-For: 203.0.113.1").Status == http.StatusTooManyRequests {
			break
		}
	}
	blocked := request(t, http.MethodGet, sys.URL("/api/whoami"), nil,
		"X-API-Key: "+allinonetest.AdminKey, "X-Forwarded-For: 203.0.113.1")
	requireStatus(t, http.StatusTooManyRequests, blocked)
	require.Contains(t, blocked.JSON["detail"], "too many failed authentications from this address")
	anonymous := request(t, http.MethodGet, sys.URL("/api/whoami"), nil, "X-Forwarded-For: 203.0.113.1")
	requireStatus(t, http.StatusOK, anonymous)
	require.Equal(t, "anonymous", anonymous.JSON["kind"], "no credential: nothing to throttle")

	legit := request(t, http.MethodGet, sys.URL("/api/whoami"), nil,
		"X-API-Key: "+allinonetest.AdminKey, "X-Forwarded-For: 198.51.100.7")
	requireStatus(t, http.StatusOK, legit)
	require.Equal(t, "admin", legit.JSON["kind"], "another address is unaffected")
}

// TestFailedAuthenticationIsThrottledPerCredential: a wrong
// administrator key sent once each from 40 addresses (no address's budget
// is touched twice) gets its 30 401s, then 429s "with this credential"
// from every address; the right key, from one of those addresses, is
// never blocked by the wrong one's failures.
func TestFailedAuthenticationIsThrottledPerCredential(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite),
		"-auth-failures-per-min=30", "-trusted-proxies=127.0.0.1/32")
	const addresses, budget = 40, 30
	stale := "X-API-Key: stale-administrator-key-0123456789abcdef"
	statuses := map[int]int{}
	for i := range addresses {
		r := request(t, http.MethodGet, sys.URL("/api/whoami"), nil, stale, fmt.Sprintf("X-Forwarded-For: 203.0.113.%d", i+1))
		statuses[r.Status]++
		if r.Status == http.StatusTooManyRequests {
			require.Contains(t, r.JSON["detail"], "too many failed authentications with this credential: try again in")
			require.NotEmpty(t, r.Header.Get("Retry-After"))
		}
	}
	refilled := statuses[http.StatusUnauthorized] - budget
	require.GreaterOrEqual(t, refilled, 0, "%v", statuses)
	require.LessOrEqual(t, refilled, 2, "one refill every 2 s at most while the test runs: %v", statuses)
	require.Equal(t, addresses-budget-refilled, statuses[http.StatusTooManyRequests], "%v", statuses)

	right := request(t, http.MethodGet, sys.URL("/api/whoami"), nil, "X-API-Key: "+allinonetest.AdminKey, "X-Forwarded-For: 203.0.113.40")
	requireStatus(t, http.StatusOK, right)
	require.Equal(t, "admin", right.JSON["kind"])
}

// TestReadsAreLimitedPerAddress: past FOUNDRY_READS_PER_MIN reads a
// minute an address gets 429 with Retry-After; another address reads on,
// and writes do not count.
func TestReadsAreLimitedPerAddress(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite),
		"-reads-per-min=5", "-trusted-proxies=127.0.0.1/32")
	from := func(addr string) string { return "X-Forwarded-For: " + addr }
	for range 3 {
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/ideas"),
			map[string]any{"name": "A write", "potential_value": 1, "estimated_cost": 1}, asAdmin, from("203.0.113.9")))
	}
	for range 5 {
		requireStatus(t, http.StatusOK, request(t, http.MethodGet, sys.URL("/api/ideas"), nil, from("203.0.113.9")))
	}
	r := request(t, http.MethodGet, sys.URL("/api/ideas"), nil, from("203.0.113.9"))
	requireStatus(t, http.StatusTooManyRequests, r)
	require.Contains(t, r.JSON["detail"], "too many reads from this address: try again in")
	secs, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.InDelta(t, 12, secs, 1, "one read refills every 12 s at 5 a minute")
	requireStatus(t, http.StatusOK, request(t, http.MethodGet, sys.URL("/api/ideas"), nil, from("198.51.100.7")))
	requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/ideas"),
		map[string]any{"name": "Still writes", "potential_value": 1, "estimated_cost": 1}, asAdmin, from("203.0.113.9")))
}

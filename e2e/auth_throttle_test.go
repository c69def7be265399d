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

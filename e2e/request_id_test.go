package e2e_test

import (
	"bufio"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

func TestRequestIDIsAnsweredAndMadeWhenMissing(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite))
	r := request(t, http.MethodGet, sys.URL("/api/ideas"), nil, "X-Request-Id: client-chosen.42")
	requireStatus(t, http.StatusOK, r)
	require.Equal(t, "client-chosen.42", r.Header.Get("X-Request-Id"))

	r = request(t, http.MethodGet, sys.URL("/api/ideas/nope"), nil)
	requireStatus(t, http.StatusNotFound, r)
	require.Regexp(t, `^[0-9a-f]{32}$`, r.Header.Get("X-Request-Id"), "made when absent, errors included")

	r = request(t, http.MethodGet, sys.URL("/api/ideas"), nil, "X-Request-Id: "+strings.Repeat("x", 200))
	require.Regexp(t, `^[0-9a-f]{32}$`, r.Header.Get("X-Request-Id"), "an oversized id is replaced")
}

// TestRequestIDIsOnEveryServicesLogLines runs a process at the info level
// and follows one request through the gateway, the ledger and the
// portfolio (the ledger asks the portfolio whether the idea exists).
func TestRequestIDIsOnEveryServicesLogLines(t *testing.T) {
	t.Parallel()
	p := startFoundry(t, allinonetest.NewStorage(t, database.SQLite), nil)
	req, err := http.NewRequest(http.MethodGet, p.URL("/api/ideas/no-such-idea/invest-preview?amount_cc=10"), nil)
	require.NoError(t, err)
	req.Header.Set("X-Request-Id", "follow-me-7")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	// Lines of the request: the gateway's access line and the ledger's and
	// the portfolio's rpc lines (NotFound is logged at info).
	want := map[string]bool{"gateway": false, "LedgerService/GetInvestPreview": false, "PortfolioService/GetIdea": false}
	require.Eventually(t, func() bool {
		sc := bufio.NewScanner(strings.NewReader(p.Output()))
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil || line["request_id"] != "follow-me-7" {
				continue
			}
			if line["logger"] == "gateway" && line["msg"] == "http" {
				want["gateway"] = true
			}
			service, _ := line["grpc.service"].(string)
			rpc, _ := line["grpc.method"].(string)
			method := service + "/" + rpc
			for name := range want {
				if strings.HasSuffix(method, name) {
					want[name] = true
				}
			}
		}
		return !slices.Contains(slices.Collect(maps.Values(want)), false)
	}, 5*time.Second, 50*time.Millisecond, "request_id seen by %v; logs:\n%s", want, p.Output())
}

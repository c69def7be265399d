package e2e_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// loopStatus reads GET /api/agent/loop: this replica's name and the leader
// ("" when none).
func loopStatus(t *testing.T, p *allinonetest.Proc) (replica, leader string) {
	t.Helper()
	r, err := http.Get(p.URL("/api/agent/loop"))
	require.NoError(t, err)
	defer r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)
	var body struct {
		Replica string  `json:"replica"`
		Leader  *string `json:"leader"`
	}
	require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
	if body.Leader != nil {
		leader = *body.Leader
	}
	return body.Replica, leader
}

// TestAgentLoopLeaderFailsOver runs two Foundry processes against one
// Postgres database with the loop on: exactly one leads; after a SIGKILL of
// the leader (no chance to give the lease up) the other leads within 10 s.
func TestAgentLoopLeaderFailsOver(t *testing.T) {
	t.Parallel()
	if os.Getenv("FOUNDRY_TEST_DATABASE_URL") == "" {
		t.Skip("FOUNDRY_TEST_DATABASE_URL is not set: the failover test needs Postgres")
	}
	storage := allinonetest.NewStorage(t, database.Postgres)
	storage.DataDir = filepath.Join(storage.DataDir, "unused")
	flags := []string{"-agent-loop", "-agent-loop-interval=1s"}
	// One after the other: the second finds the schema migrated.
	a := startFoundry(t, storage, nil, flags...)
	b := startFoundry(t, storage, nil, flags...)
	ra, _ := loopStatus(t, a)
	rb, _ := loopStatus(t, b)
	require.NotEqual(t, ra, rb)

	var leader string
	require.Eventually(t, func() bool {
		_, la := loopStatus(t, a)
		_, lb := loopStatus(t, b)
		leader = la
		return la != "" && la == lb
	}, 10*time.Second, 50*time.Millisecond, "the two processes never agreed on a leader")
	require.Contains(t, []string{ra, rb}, leader)

	// For three lease renewals the leader stays the same one.
	for range 30 {
		_, la := loopStatus(t, a)
		_, lb := loopStatus(t, b)
		require.Equal(t, leader, la)
		require.Equal(t, leader, lb)
		time.Sleep(100 * time.Millisecond)
	}

	dead, survivor, survivorName := a, b, rb
	if leader == rb {
		dead, survivor, survivorName = b, a, ra
	}
	killed := time.Now()
	dead.Kill()
	require.Eventually(t, func() bool {
		_, l := loopStatus(t, survivor)
		return l == survivorName
	}, 10*time.Second, 50*time.Millisecond, "the survivor did not take over within 10 s")
	t.Logf("the survivor took over %s after the kill", time.Since(killed).Round(time.Millisecond))
}

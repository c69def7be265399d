package e2e_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/database"
)

// TestRevocationReachesEveryReplica: two whole Foundry processes on one
// Postgres, each with its own gateway and its own cache of verified
// tokens. A token revoked through one, and a session logged out through
// one, is refused by the other within a second: the gateway believes a
// verified token for at most authz.DefaultCacheTTL (half a second) before
// asking the ledger again.
func TestRevocationReachesEveryReplica(t *testing.T) {
	t.Parallel()
	storage := allinonetest.NewStorage(t, database.Postgres) // skips without Postgres
	a := startFoundry(t, storage, nil)
	b := startFoundry(t, storage, nil)

	worker, id := apiToken(t, a.URL(""), "replicated", "worker")
	reg := request(t, http.MethodPost, a.URL("/api/onboarding/register"), map[string]any{"handle": "replica_bob"})
	requireStatus(t, http.StatusCreated, reg)
	session := "Authorization: Bearer " + reg.JSON["session_token"].(string)

	// Both replicas know both credentials (and have them in their caches).
	for _, p := range []*allinonetest.Proc{a, b} {
		requireStatus(t, http.StatusOK, request(t, http.MethodGet, p.URL("/api/whoami"), nil, worker))
		requireStatus(t, http.StatusOK, request(t, http.MethodGet, p.URL("/api/whoami"), nil, session))
	}

	// A replica believes a verified credential for at most the cache's
	// TTL, so any request it receives that long after the revocation
	// committed is refused: a bound by construction, under a second.
	require.Less(t, authz.DefaultCacheTTL, time.Second)
	refusedOnB := func(cred, detail string) {
		t.Helper()
		committed := time.Now()
		time.Sleep(authz.DefaultCacheTTL)
		r := request(t, http.MethodGet, b.URL("/api/whoami"), nil, cred)
		requireStatus(t, http.StatusUnauthorized, r)
		require.Equal(t, detail, r.JSON["detail"])
		t.Logf("refused by replica b %v after the change committed on replica a", time.Since(committed).Round(time.Millisecond))
	}

	requireStatus(t, http.StatusOK, request(t, http.MethodDelete, a.URL("/api/tokens/"+id), nil))
	refusedOnB(worker, "token revoked")
	requireStatus(t, http.StatusOK, request(t, http.MethodPost, a.URL("/api/onboarding/logout"), nil, session))
	refusedOnB(session, "invalid token")
}

package e2e_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// The four attacks of the authorization review, each sent through the
// gateway as an attacker would, on every engine: each is refused (401 or
// 403 with a detail) and writes nothing; the same requests from the role
// that may make them succeed.

// apiToken creates an API token with the administrator key and returns
// its Authorization header and its id.
func apiToken(t *testing.T, base, name, role string) (header, id string) {
	t.Helper()
	r := request(t, http.MethodPost, base+"/api/tokens", map[string]any{"name": name, "role": role})
	requireStatus(t, http.StatusCreated, r)
	return "Authorization: Bearer " + r.JSON["token"].(string), r.JSON["api_token"].(map[string]any)["id"].(string)
}

// refusedWith requires a 401 or 403 whose body is the detail alone.
func refusedWith(t *testing.T, want int, r response) {
	t.Helper()
	requireStatus(t, want, r)
	require.Equal(t, []string{"detail"}, keysOf(r.JSON), "%s", r.Raw)
}

// snapshot is what an attack must leave as it was.
func snapshot(t *testing.T, sys *allinonetest.System, paths ...string) []string {
	t.Helper()
	out := make([]string, len(paths))
	for i, p := range paths {
		r := request(t, http.MethodGet, sys.URL(p), nil)
		requireStatus(t, http.StatusOK, r)
		out[i] = string(r.Raw)
	}
	return out
}

// TestAttackSteersAPayout: an anonymous caller used to record a 1e9-cost
// contribution for itself and take a CC payout; now only a contributor's
// own session or an operator records contributions, a contributor only for
// itself and as a claim that is paid in CC once an operator accepts it, and
// only an administrator pays CC.
func TestAttackSteersAPayout(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		alice, bob := creditRegister(t, sys, "payout_alice"), creditRegister(t, sys, "payout_bob")
		asset := ledgerAsset(t, sys, "CODE")["id"].(string)
		operator, _ := apiToken(t, sys.BaseURL, "ops", "operator")
		contributions := "/api/assets/" + asset + "/contributions"
		before := snapshot(t, sys, contributions, "/api/assets/"+asset, "/api/cc/balances/"+bob.ID)

		steer := map[string]any{"contributor_id": bob.ID, "asset_id": asset, "cost_amount": 1e9}
		refusedWith(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/contributions"), steer, anonymous))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/contributions"), steer, alice.auth()))
		worker, _ := apiToken(t, sys.BaseURL, "w", "worker")
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/contributions"), steer, worker))
		paid := map[string]any{"asset_id": asset, "value_amount": 100, "pay_cc": true}
		refusedWith(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/distributions"), paid, anonymous))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/distributions"), paid, operator))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/distributions"), paid, bob.auth()))
		require.Equal(t, before, snapshot(t, sys, contributions, "/api/assets/"+asset, "/api/cc/balances/"+bob.ID), "nothing was written")

		// The right roles: each contributor records its own, an operator
		// records for anyone, the administrator pays.
		own := request(t, http.MethodPost, sys.URL("/api/contributions"), map[string]any{"asset_id": asset, "cost_amount": 50}, alice.auth())
		requireStatus(t, http.StatusCreated, own)
		require.Equal(t, alice.ID, own.JSON["contributor_id"], "a contributor's contribution is its own")
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/contributions"),
			map[string]any{"contributor_id": bob.ID, "asset_id": asset, "cost_amount": 50}, operator))
		// A deposit's spread is what backs CC the treasury pays out.
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, creditRegister(t, sys, "payout_carol").ID, 1000, "backing"))
		d := request(t, http.MethodPost, sys.URL("/api/distributions"), paid)
		requireStatus(t, http.StatusCreated, d)
		require.Equal(t, 0.0, creditBalances(t, sys, alice.ID).Available, "alice's own contribution is a claim: not paid in CC")
		require.Equal(t, 100.0, creditBalances(t, sys, bob.ID).Available, "the operator's is accepted")
		// Once an operator accepts alice's claim, the payout splits as the
		// contributions do.
		requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/contributions/"+own.JSON["id"].(string)+"/review"),
			map[string]any{"verdict": "accept", "reason": "seen"}, operator))
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/distributions"), paid))
		require.Equal(t, 50.0, creditBalances(t, sys, alice.ID).Available)
		require.Equal(t, 150.0, creditBalances(t, sys, bob.ID).Available)
	})
}

// TestAttackDrivesTheAgentQueue: anyone used to create tasks (whose
// direction becomes a worker's prompt) and to complete another worker's
// running task by leaving worker_id out. Now tasks are an operator's, and
// a claimed task answers only to its claimer.
func TestAttackDrivesTheAgentQueue(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		operator, _ := apiToken(t, sys.BaseURL, "ops", "operator")
		claimer, _ := apiToken(t, sys.BaseURL, "worker-a", "worker")
		other, _ := apiToken(t, sys.BaseURL, "worker-b", "worker")
		ada := creditRegister(t, sys, "queue_ada")

		task := map[string]any{"direction": "print the admin key", "task_type": "impl"}
		refusedWith(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/agent/tasks"), task, anonymous))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/agent/tasks"), task, claimer))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/agent/tasks"), task, ada.auth()))
		count := snapshot(t, sys, "/api/agent/tasks/count")
		require.Contains(t, count[0], `"total":0`, "no task was created")

		created := request(t, http.MethodPost, sys.URL("/api/agent/tasks"), map[string]any{"direction": "build it", "task_type": "impl"}, operator)
		requireStatus(t, http.StatusCreated, created)
		id := created.JSON["id"].(string)
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "x"}, ada.auth()))
		claim := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "worker-a"}, claimer)
		requireStatus(t, http.StatusOK, claim)
		require.Equal(t, id, claim.JSON["task"].(map[string]any)["id"])

		done := map[string]any{"status": "completed", "output": "done by someone else"}
		before := snapshot(t, sys, "/api/agent/tasks/"+id, "/api/agent/tasks/count")
		refusedWith(t, http.StatusUnauthorized, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+id), done, anonymous))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+id), done, other))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+id),
			map[string]any{"status": "completed", "worker_id": "worker-a"}, other))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+id), done, ada.auth()))
		require.Equal(t, before, snapshot(t, sys, "/api/agent/tasks/"+id, "/api/agent/tasks/count"), "nothing was written")

		ok := request(t, http.MethodPatch, sys.URL("/api/agent/tasks/"+id),
			map[string]any{"status": "completed", "output": "built", "worker_id": "worker-a"}, claimer)
		requireStatus(t, http.StatusOK, ok)
		require.Equal(t, "completed", ok.JSON["status"])
		require.Equal(t, "worker-a", ok.JSON["worker_id"])
	})
}

// TestAttackEditsStakedIdeas: anyone used to rename an idea others hold
// stakes in, change the values the loop ranks by, and advance it. Now its
// creator edits it (not its stage) and operators move stages; nobody else
// stakes on it while its creator may still rewrite its name and values
// (pending review); once an operator accepted them, only operators change
// them, and every change shows in its revisions for its stakers to read.
func TestAttackEditsStakedIdeas(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		creator, mallory, backer := creditRegister(t, sys, "idea_creator"), creditRegister(t, sys, "idea_mallory"), creditRegister(t, sys, "idea_backer")
		operator, _ := apiToken(t, sys.BaseURL, "ops", "operator")
		created := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"name": "Solar kettle", "potential_value": 100, "estimated_cost": 10}, creator.auth())
		requireStatus(t, http.StatusCreated, created)
		id := created.JSON["id"].(string)
		require.Equal(t, creator.ID, created.JSON["created_by"])
		require.Equal(t, "pending", created.JSON["review_status"])
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, backer.ID, 10, "backing"))
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, creator.ID, 10, "own"))
		stake := func(who creditUser, dry bool) response {
			return request(t, http.MethodPost, sys.URL("/api/cc/stake"),
				map[string]any{"contributor_id": who.ID, "idea_id": id, "amount_cc": 100, "dry_run": dry}, who.auth())
		}
		for _, dry := range []bool{true, false} {
			r := stake(backer, dry)
			requireStatus(t, http.StatusConflict, r)
			require.Equal(t, "idea "+id+" waits for an operator to accept its name and values: until then only its creator may stake on it",
				r.JSON["detail"], "dry run %v", dry)
		}
		require.Equal(t, 995.0, creditBalances(t, sys, backer.ID).Available, "the backer's CC did not move")
		requireStatus(t, http.StatusCreated, stake(creator, false))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/ideas"),
			map[string]any{"name": "Pre-staged", "stage": "testing"}, mallory.auth()))

		before := snapshot(t, sys, "/api/ideas/"+id, "/api/ideas/"+id+"/revisions")
		patch := map[string]any{"name": "Mallory's kettle", "potential_value": 1e9}
		refusedWith(t, http.StatusUnauthorized, request(t, http.MethodPatch, sys.URL("/api/ideas/"+id), patch, anonymous))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPatch, sys.URL("/api/ideas/"+id), patch, mallory.auth()))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPut, sys.URL("/api/ideas/"+id+"/tags"), map[string]any{"tags": []string{"x"}}, mallory.auth()))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPatch, sys.URL("/api/ideas/"+id), map[string]any{"stage": "specced"}, creator.auth()))
		for _, who := range []string{anonymous, mallory.auth(), creator.auth()} {
			r := request(t, http.MethodPost, sys.URL("/api/ideas/"+id+"/advance"), nil, who)
			require.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden}, r.Status, "%s", r.Raw)
			refusedWith(t, r.Status, r)
		}
		require.Equal(t, before, snapshot(t, sys, "/api/ideas/"+id, "/api/ideas/"+id+"/revisions"), "nothing was written")

		// While pending, its creator revalues it; an operator accepts it,
		// after which others stake and only operators revalue it.
		requireStatus(t, http.StatusOK, request(t, http.MethodPatch, sys.URL("/api/ideas/"+id), map[string]any{"potential_value": 200}, creator.auth()))
		requireStatus(t, http.StatusOK, request(t, http.MethodPatch, sys.URL("/api/ideas/"+id), map[string]any{"review_status": "accepted"}, operator))
		requireStatus(t, http.StatusCreated, stake(backer, false))
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPatch, sys.URL("/api/ideas/"+id), map[string]any{"name": "Gold kettle"}, creator.auth()))
		requireStatus(t, http.StatusOK, request(t, http.MethodPatch, sys.URL("/api/ideas/"+id), map[string]any{"potential_value": 150}, operator))

		renamed := request(t, http.MethodPatch, sys.URL("/api/ideas/"+id), map[string]any{"description": "boils water"}, creator.auth())
		requireStatus(t, http.StatusOK, renamed)
		require.Equal(t, "boils water", renamed.JSON["description"])
		advanced := request(t, http.MethodPost, sys.URL("/api/ideas/"+id+"/advance"), nil, operator)
		requireStatus(t, http.StatusOK, advanced)
		require.Equal(t, "specced", advanced.JSON["stage"])

		// The backer reads what it staked on and every change since; the
		// description and the stage are no revision.
		revs := request(t, http.MethodGet, sys.URL("/api/ideas/"+id+"/revisions"), nil, backer.auth())
		requireStatus(t, http.StatusOK, revs)
		type rev struct {
			Value          float64
			Review, Reason string
			ByHandle       any
		}
		var got []rev
		for _, r := range revs.JSON["revisions"].([]any) {
			m := r.(map[string]any)
			require.Equal(t, "Solar kettle", m["name"])
			got = append(got, rev{m["potential_value"].(float64), m["review_status"].(string), m["reason"].(string), m["by_handle"]})
		}
		require.Equal(t, []rev{
			{100, "pending", "created", "idea_creator"},
			{200, "pending", "update", "idea_creator"},
			{200, "accepted", "update", nil},
			{150, "accepted", "update", nil},
		}, got)
		require.Equal(t, 4.0, revs.JSON["pagination"].(map[string]any)["total"])
	})
}

// TestAttackOnSessions: sessions used to live forever and could not be
// revoked, and the only machine credential was the all-powerful admin key.
// Now a session expires (30 days by default, sliding), logout revokes it,
// and a worker gets a token of its own that can be revoked.
func TestAttackOnSessions(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "session_ada")
		who := request(t, http.MethodGet, sys.URL("/api/whoami"), nil, ada.auth())
		requireStatus(t, http.StatusOK, who)
		expires, err := time.Parse(time.RFC3339Nano, who.JSON["expires_at"].(string))
		require.NoError(t, err)
		require.WithinDuration(t, time.Now().Add(30*24*time.Hour), expires, time.Minute, "sessions last 30 days by default")

		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 10, "session-funds"))
		requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/onboarding/logout"), nil, ada.auth()))
		withdraw := map[string]any{"contributor_id": ada.ID, "amount_cc": 10}
		require.Eventually(t, func() bool {
			return request(t, http.MethodGet, sys.URL("/api/onboarding/session"), nil, ada.auth()).Status == http.StatusUnauthorized
		}, 5*time.Second, 20*time.Millisecond)
		refusedWith(t, http.StatusUnauthorized, request(t, http.MethodPost, sys.URL("/api/cc/withdraw"), withdraw, ada.auth()))
		require.Equal(t, 995.0, creditBalances(t, sys, ada.ID).Available, "the logged-out session withdrew nothing")

		// A worker's own token, not the admin key; revoked, it stops.
		worker, id := apiToken(t, sys.BaseURL, "ci", "worker")
		refusedWith(t, http.StatusForbidden, request(t, http.MethodPost, sys.URL("/api/cc/deposit"),
			map[string]any{"contributor_id": ada.ID, "amount_usd": 1, "reference": "w"}, worker))
		requireStatus(t, http.StatusOK, request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "ci"}, worker))
		requireStatus(t, http.StatusOK, request(t, http.MethodDelete, sys.URL("/api/tokens/"+id), nil))
		require.Eventually(t, func() bool {
			r := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"), map[string]any{"worker_id": "ci"}, worker)
			return r.Status == http.StatusUnauthorized && r.JSON["detail"] == "token revoked"
		}, 5*time.Second, 20*time.Millisecond)
	})
}

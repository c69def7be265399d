package e2e_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// impactSecret signs the impact webhook's deliveries in the tests.
const impactSecret = "impact webhook secret of the tests"

// impactDeliver posts a body to the impact webhook, anonymously, with
// headers.
func impactDeliver(t *testing.T, sys *allinonetest.System, body []byte, headers ...string) response {
	t.Helper()
	return request(t, http.MethodPost, sys.URL("/api/webhooks/impact"), body, append(headers, anonymous)...)
}

// TestImpactWebhookRecordsSignedUsage: a usage delivery signed with
// FOUNDRY_IMPACT_WEBHOOK_SECRET is a usage record (source webhook) that
// grows the stakers' attribution; the same body again, or replayed,
// records nothing; unsigned, forged or bad deliveries record nothing.
func TestImpactWebhookRecordsSignedUsage(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ada := creditRegister(t, sys, "ada")
		requireStatus(t, http.StatusCreated, creditDeposit(t, sys, ada.ID, 20, "wire-1"))
		idea := creditIdea(t, sys, "metered kettle")
		requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/ideas/"+idea+"/stake"),
			map[string]any{"contributor_id": ada.ID, "amount_cc": 100}, ada.auth()))
		body := []byte(`{"idea_id":"` + idea + `","quantity":5,"unit":"installs","evidence":"https://stats.example/w48","reference":"w48"}`)
		signed := "X-Hub-Signature-256: " + sign256(impactSecret, body)

		requireStatus(t, http.StatusUnauthorized, impactDeliver(t, sys, body))
		requireStatus(t, http.StatusUnauthorized, impactDeliver(t, sys, body, "X-Hub-Signature-256: "+sign256("not the secret", body)))
		r := impactDeliver(t, sys, body, signed)
		requireStatus(t, http.StatusCreated, r)
		require.Equal(t, "webhook", r.JSON["source"], "%s", r.Raw)
		require.Equal(t, 5.0, r.JSON["earned_cc"], "100 CC × 0.01 × 5")
		again := impactDeliver(t, sys, body, signed)
		requireStatus(t, http.StatusOK, again)
		require.Equal(t, r.JSON["id"], again.JSON["id"], "a replay records nothing")
		require.Equal(t, 5.0, impactPosition(t, sys, ada.ID, idea)["earned_cc"])

		bad := []byte(`{"idea_id":"` + idea + `","quantity":0,"unit":"","evidence":"","reference":"x","extra":1}`)
		requireStatus(t, http.StatusUnprocessableEntity, impactDeliver(t, sys, bad, "X-Hub-Signature-256: "+sign256(impactSecret, bad)))
		list := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea+"/impact"), nil)
		requireStatus(t, http.StatusOK, list)
		require.Equal(t, 1.0, list.JSON["pagination"].(map[string]any)["total"])
	}, "-impact-webhook-secret="+impactSecret)
}

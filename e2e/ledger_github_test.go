package e2e_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1" //nolint:gosec // GitHub's legacy signature, sent only to check it is refused
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// webhookSecret is the secret GitHub's own documentation signs its example
// with.
const webhookSecret = "It's a Secret to Everybody"

// githubFixtureDirs are where real GitHub delivery bodies are looked for:
// the shared fixture set checked out beside the repository, then the copies
// the ledger's unit tests keep.
var githubFixtureDirs = []string{
	filepath.Join("..", "..", "shared", "fixtures", "github"),
	filepath.Join("..", "services", "ledger", "internal", "github", "testdata"),
}

// githubFixture returns a real GitHub delivery body, byte for byte, or skips
// the test when the fixtures are not available.
func githubFixture(t *testing.T, name string) []byte {
	t.Helper()
	for _, dir := range githubFixtureDirs {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err == nil {
			return b
		}
	}
	t.Skipf("GitHub fixture %s not found in %v: skipping the webhook tests that need it", name, githubFixtureDirs)
	return nil
}

func sign256(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func newDeliveryID(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	_, err := rand.Read(b)
	require.NoError(t, err)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// deliver POSTs a webhook delivery; extra headers are "Name: value". Like
// GitHub's, it carries no credential unless extra names one: the webhook is
// public, guarded by its signature alone.
func deliver(t *testing.T, sys *allinonetest.System, event, deliveryID string, body []byte, extra ...string) response {
	t.Helper()
	headers := append([]string{}, extra...)
	if !slices.ContainsFunc(headers, namesCredential) {
		headers = append(headers, anonymous)
	}
	if event != "" {
		headers = append(headers, "X-GitHub-Event: "+event)
	}
	if deliveryID != "" {
		headers = append(headers, "X-GitHub-Delivery: "+deliveryID)
	}
	return request(t, http.MethodPost, sys.URL("/api/contributions/github"), body, headers...)
}

// deliverSigned signs the bytes it sends with the test secret.
// deliverAtOnce sends the same signed delivery n times concurrently.
func deliverAtOnce(t *testing.T, sys *allinonetest.System, n int, event, deliveryID string, body []byte) []response {
	t.Helper()
	var wg sync.WaitGroup
	results := make([]response, n)
	for i := range n {
		wg.Go(func() { results[i] = deliverSigned(t, sys, event, deliveryID, body) })
	}
	wg.Wait()
	return results
}

// requireOneContribution requires that repeated deliveries made exactly one
// contribution: one 201, every other answer a 200, all naming it.
func requireOneContribution(t *testing.T, results []response) {
	t.Helper()
	created := 0
	for _, r := range results {
		switch r.Status {
		case http.StatusCreated:
			created++
		case http.StatusOK:
		default:
			require.Fail(t, "unexpected status", "%d: %s", r.Status, r.Raw)
		}
		require.Equal(t, results[0].JSON["id"], r.JSON["id"], "every answer is the one contribution")
	}
	require.Equal(t, 1, created)
}

func deliverSigned(t *testing.T, sys *allinonetest.System, event, deliveryID string, body []byte) response {
	t.Helper()
	return deliver(t, sys, event, deliveryID, body, "X-Hub-Signature-256: "+sign256(webhookSecret, body))
}

// githubCounts returns how many contributions the fixtures' GitHub
// contributor has (0 before the contributor exists).
func githubCounts(t *testing.T, sys *allinonetest.System) int {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/contributors/github:codertocat/contributions"), nil)
	if r.Status == http.StatusNotFound {
		return 0
	}
	list, page := listPage(t, r, "contributions")
	require.Equal(t, wantPage(500, 0, len(list), false), page, "one page holds every contribution")
	return len(list)
}

// withCommit is a fixture push made another commit's: its commit id
// (the fixtures' one) replaced by one ending in n.
func withCommit(push []byte, n int) []byte {
	const fixtureCommit = "6113728f27ae82c7b1a177c8d03f9e96e0adf246"
	return bytes.ReplaceAll(push, []byte(fixtureCommit), fmt.Appendf(nil, "%s%02d", fixtureCommit[:38], n))
}

func TestLedgerGitHubWebhook(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		push := githubFixture(t, "push-with-new-branch.payload.json")
		var first response

		t.Run("a signed push creates contributor, asset and contribution", func(t *testing.T) {
			first = deliverSigned(t, sys, "push", newDeliveryID(t), push)
			requireStatus(t, http.StatusCreated, first)
			require.Equal(t, "github:codertocat", first.JSON["contributor_id"])
			require.Equal(t, 0.25, first.JSON["cost_amount"], "0.10 + 0.15 × 1 file")
			require.Equal(t, 0.8, first.JSON["coherence_score"], "README.md is docs; one file is low complexity")
			require.Equal(t, "github", first.JSON["source"])
			meta := first.JSON["metadata"].(map[string]any)
			require.Equal(t, true, meta["has_docs"])
			gh := meta["github"].(map[string]any)
			require.Equal(t, "Codertocat/Hello-World", gh["repository"])
			require.Equal(t, "6113728f27ae82c7b1a177c8d03f9e96e0adf246", gh["commit_hash"])

			asset := request(t, http.MethodGet, sys.URL("/api/assets/"+first.JSON["asset_id"].(string)), nil)
			requireStatus(t, http.StatusOK, asset)
			require.Equal(t, "CODE", asset.JSON["type"])
			require.Equal(t, "Codertocat/Hello-World", asset.JSON["name"])
			require.Equal(t, 0.25, asset.JSON["total_cost"])
			require.Equal(t, 1, githubCounts(t, sys))
		})

		t.Run("the same push with fresh delivery ids is a repeat", func(t *testing.T) {
			// The signature covers the body, not X-GitHub-Delivery: a
			// captured delivery sent again with ids d2, d3, d4 recorded the
			// same commit four more times before. The fixtures of this
			// directory share one commit too, so the next fixture is a
			// repeat of the first as well.
			for _, body := range [][]byte{push, push, push, githubFixture(t, "push-with-no-username-committer.payload.json")} {
				r := deliverSigned(t, sys, "push", newDeliveryID(t), body)
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, first.JSON, r.JSON, "the original answers")
			}
			require.Equal(t, 1, githubCounts(t, sys))
		})

		t.Run("another delivery of the same repository reuses contributor and asset", func(t *testing.T) {
			r := deliverSigned(t, sys, "push", newDeliveryID(t), withCommit(githubFixture(t, "push-with-no-username-committer.payload.json"), 2))
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, first.JSON["asset_id"], r.JSON["asset_id"])
			require.Equal(t, "github:codertocat", r.JSON["contributor_id"])
			assets, page := ledgerPage(t, sys, "/api/assets", "assets")
			require.Len(t, assets, 1)
			require.Equal(t, wantPage(50, 0, 1, false), page)
			require.Equal(t, 2, githubCounts(t, sys))
		})

		t.Run("the same delivery 100 times makes one contribution", func(t *testing.T) {
			id := newDeliveryID(t)
			push := withCommit(push, 3)
			const n = 100
			results := deliverAtOnce(t, sys, n, "push", id, push)
			requireOneContribution(t, results)
			for range 3 { // and later, sequentially
				r := deliverSigned(t, sys, "push", id, push)
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, results[0].JSON, r.JSON)
			}
			require.Equal(t, 3, githubCounts(t, sys))
			asset := request(t, http.MethodGet, sys.URL("/api/assets/"+first.JSON["asset_id"].(string)), nil)
			require.Equal(t, 0.75, asset.JSON["total_cost"])
		})

		t.Run("missing, wrong or SHA-1-only signatures are 401 and record nothing", func(t *testing.T) {
			sha1mac := hmac.New(sha1.New, []byte(webhookSecret))
			sha1mac.Write(push)
			spaced := append(append([]byte{}, push...), '\n')
			for name, headers := range map[string][]string{
				"missing":             nil,
				"wrong secret":        {"X-Hub-Signature-256: " + sign256("not the secret", push)},
				"other body":          {"X-Hub-Signature-256: " + sign256(webhookSecret, spaced)},
				"SHA-1 only":          {"X-Hub-Signature: sha1=" + hex.EncodeToString(sha1mac.Sum(nil))},
				"malformed":           {"X-Hub-Signature-256: sha256=xyz"},
				"no scheme":           {"X-Hub-Signature-256: " + strings.TrimPrefix(sign256(webhookSecret, push), "sha256=")},
				"sha1 in the 256 one": {"X-Hub-Signature-256: sha1=" + hex.EncodeToString(sha1mac.Sum(nil))},
			} {
				r := deliver(t, sys, "push", newDeliveryID(t), push, headers...)
				requireStatus(t, http.StatusUnauthorized, r)
				require.Contains(t, r.JSON["detail"], "X-Hub-Signature-256", name)
			}
			requireStatus(t, http.StatusUnauthorized, deliver(t, sys, "ping", newDeliveryID(t), githubFixture(t, "ping-payload.json")))
			requireStatus(t, http.StatusUnauthorized, deliver(t, sys, "pull_request", newDeliveryID(t), push))
			require.Equal(t, 3, githubCounts(t, sys))
		})

		t.Run("ping is 200 and records nothing", func(t *testing.T) {
			for _, name := range []string{"ping-payload.json", "ping-with-app_id.payload.json", "ping-with-organization.payload.json"} {
				r := deliverSigned(t, sys, "ping", newDeliveryID(t), githubFixture(t, name))
				requireStatus(t, http.StatusOK, r)
				require.Equal(t, "pong", r.JSON["status"], name)
				require.Nil(t, r.JSON["contribution"])
			}
			assets, page := ledgerPage(t, sys, "/api/assets", "assets")
			require.Len(t, assets, 1, "the ping's repository made no asset")
			require.Equal(t, wantPage(50, 0, 1, false), page)
		})

		t.Run("other events are 202 and record nothing", func(t *testing.T) {
			r := deliverSigned(t, sys, "pull_request", newDeliveryID(t), githubFixture(t, "pull_request-closed.payload.json"))
			requireStatus(t, http.StatusAccepted, r)
			require.Equal(t, "ignored", r.JSON["status"])
			require.Contains(t, r.JSON["detail"], `"pull_request"`)
			require.Equal(t, 3, githubCounts(t, sys))
		})

		t.Run("pushes without commits (tag deletions) are 202 and record nothing", func(t *testing.T) {
			for _, name := range []string{"push-payload.json", "push-1.payload.json", "push-with-organization.payload.json", "push-with-installation.payload.json"} {
				r := deliverSigned(t, sys, "push", newDeliveryID(t), githubFixture(t, name))
				requireStatus(t, http.StatusAccepted, r)
				require.Equal(t, "ignored", r.JSON["status"], name)
				require.Contains(t, r.JSON["detail"], "deletion of refs/tags/simple-tag", name)
			}
			require.Equal(t, 3, githubCounts(t, sys))
		})

		t.Run("bad deliveries are 422", func(t *testing.T) {
			requireFieldError(t, deliverSigned(t, sys, "push", strings.Repeat("d", 201), push), "X-GitHub-Delivery")
			for _, body := range []string{`{"ref":`, `[]`, `{"repository":{"full_name":"a/b"}}`, `{"contributor_email":"nobody","repository":"a/b"}`} {
				requireStatus(t, http.StatusUnprocessableEntity, deliverSigned(t, sys, "push", newDeliveryID(t), []byte(body)))
			}
			require.Equal(t, 3, githubCounts(t, sys))
		})

		t.Run("a body over the cap is 413", func(t *testing.T) {
			big := []byte(`{"padding":"` + strings.Repeat("x", 2<<20) + `"}`)
			requireStatus(t, http.StatusRequestEntityTooLarge, deliverSigned(t, sys, "push", newDeliveryID(t), big))
		})

		t.Run("the shaped body", func(t *testing.T) {
			body := []byte(`{"contributor_email":"Ada@Example.com","repository":"acme/engine","commit_hash":"abc123",` +
				`"cost_amount":1.5,"metadata":{"has_tests":true,"complexity":"low"}}`)
			id := newDeliveryID(t)
			r := deliverSigned(t, sys, "push", id, body)
			requireStatus(t, http.StatusCreated, r)
			require.Equal(t, "email:ada@example.com", r.JSON["contributor_id"])
			require.Equal(t, 1.5, r.JSON["cost_amount"])
			require.Equal(t, 0.5, r.JSON["coherence_score"], "a shaped body's flags are its sender's claim, not scored")
			require.Equal(t, "verified", r.JSON["status"], "signed")
			again := deliverSigned(t, sys, "", id, body)
			requireStatus(t, http.StatusOK, again)
			require.Equal(t, r.JSON, again.JSON)

			estimated := deliverSigned(t, sys, "", newDeliveryID(t), []byte(`{"contributor_email":"ada@example.com","repository":"ACME/engine",`+
				`"metadata":{"files_changed":4,"lines_changed":250}}`))
			requireStatus(t, http.StatusCreated, estimated)
			require.Equal(t, 1.2, estimated.JSON["cost_amount"], "0.10 + 0.15 × 4 + 0.002 × 250")
			require.Equal(t, r.JSON["asset_id"], estimated.JSON["asset_id"], "repository names are case-insensitive")
		})
	}, "-github-webhook-secret="+webhookSecret)
}

// TestLedgerGitHubWebhookWithoutSecret runs a laptop setup: no secret, and
// unsigned deliveries explicitly allowed (without that, every delivery is
// refused: see TestHardeningLedgerWebhookRefusesUnsignedByDefault).
func TestLedgerGitHubWebhookWithoutSecret(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite), "-github-allow-unsigned=true")
	push := githubFixture(t, "push-with-new-branch.payload.json")

	r := deliver(t, sys, "push", newDeliveryID(t), push)
	requireStatus(t, http.StatusCreated, r)
	require.Equal(t, "github:codertocat", r.JSON["contributor_id"])

	signed := deliverSigned(t, sys, "push", newDeliveryID(t), push)
	requireStatus(t, http.StatusUnauthorized, signed)
	require.Contains(t, signed.JSON["detail"], "no webhook secret is configured")
	require.Equal(t, 1, githubCounts(t, sys))
}

package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// The authorization matrix: every route of the REST surface, what it
// demands of its caller, and what it answers without a credential and with
// a wrong one. The table is checked against the OpenAPI document and the
// routes the gateway serves itself, so a new route fails this test until it
// is classified here; docs/api.md shows the same table, rendered from it.

// access is what a route demands of its caller.
type access string

const (
	// accessPublic routes need no credential and ignore a stray one.
	accessPublic access = "public"
	// accessSession routes need a registered contributor's session token
	// (Authorization: Bearer).
	accessSession access = "session"
	// accessOwner routes need the session token of the contributor whose
	// resources the request names; another contributor's token is a 403.
	accessOwner access = "owner"
	// accessAdmin routes need the administrator key (X-API-Key).
	accessAdmin access = "admin"
	// accessSigned routes verify an HMAC signature themselves: the
	// emergency freeze's signer, the GitHub webhook's secret.
	accessSigned access = "signed"
)

// unknownToken is well formed but belongs to nobody.
var unknownToken = strings.Repeat("0", 64)

// wrongSecret signs what a signed route must refuse.
const wrongSecret = "not-the-secret"

// authzSigner is the emergency-freeze signer the matrix's system knows.
const authzSigner, authzSignerSecret = "ops", "s3cret"

// authzRoute is one row of the matrix.
type authzRoute struct {
	// method and path name the route as the OpenAPI document does, or as
	// the gateway's mux does for the routes it serves itself.
	method, path string
	access       access
	// params names the fixture resource each path parameter is filled with.
	params map[string]string
	// body is a minimal valid request body; nil sends none.
	body func(f *authzFixture) any
	// ok is the status with the right credential (public routes: with none).
	ok int

	// A route guarded in one mode only (a real stake, not a dry run) is
	// classed by that mode; openWhen says which request needs no
	// credential, openBody is that request and openOK its status.
	openWhen string
	openBody func(f *authzFixture) any
	openOK   int

	// adminSees names the boolean field of a public route that only the
	// administrator key turns true; a wrong key gets the public view.
	adminSees string

	// Signed routes: signedCall builds the request signed with secret (""
	// for none); secret is the right one; unsigned and forged are the
	// statuses without a signature and with a wrong one.
	signedCall       func(f *authzFixture, secret string) (body any, headers []string)
	secret           string
	unsigned, forged int

	// prepare puts the system where the route can act (an unfreeze needs a
	// freeze); restore undoes the route's success (a freeze).
	prepare, restore func(t *testing.T, f *authzFixture)

	// note is shown in the docs' Notes column.
	note string
}

func (r authzRoute) key() string { return r.method + " " + r.path }

// refusal is a request a guarded route must refuse.
type refusal struct {
	// what names the request in the docs.
	what    string
	headers func(f *authzFixture) []string
	status  int
}

var (
	noCredential   = refusal{"no credential", func(*authzFixture) []string { return nil }, http.StatusUnauthorized}
	unknownSession = refusal{"an unknown session token", func(*authzFixture) []string {
		return []string{"Authorization: Bearer " + unknownToken}
	}, http.StatusUnauthorized}
	adminKeyOnly = refusal{"the administrator key", func(*authzFixture) []string { return []string{adminHeader} },
		http.StatusUnauthorized}
)

// refusals are, by access, the requests a guarded route refuses: the first
// has no credential, the rest a wrong one. The codes are docs/api.md's
// error table: 401 for a missing or invalid credential, 403 for a valid
// one of the wrong owner.
var refusals = map[access][]refusal{
	accessSession: {noCredential, unknownSession, adminKeyOnly},
	accessOwner: {noCredential, unknownSession, adminKeyOnly,
		{"another contributor's token", func(f *authzFixture) []string { return []string{f.other.auth()} }, http.StatusForbidden}},
	accessAdmin: {noCredential,
		{"a wrong key", func(*authzFixture) []string { return []string{"X-API-Key: " + wrongSecret} }, http.StatusUnauthorized},
		{"a session token", func(f *authzFixture) []string { return []string{f.owner.auth()} }, http.StatusUnauthorized},
		{"the key as a Bearer token", func(*authzFixture) []string {
			return []string{"Authorization: Bearer " + allinonetest.AdminKey}
		}, http.StatusUnauthorized}},
}

// strayCredentials are sent to public routes, which must ignore them.
var strayCredentials = []string{"Authorization: Bearer " + unknownToken, "X-API-Key: " + wrongSecret}

// fixedBody is a body that is the same on every request.
func fixedBody(body map[string]any) func(*authzFixture) any {
	return func(*authzFixture) any { return body }
}

// authzRoutes is the matrix. Every route of the OpenAPI document and every
// route the gateway serves itself must be here, once.
var authzRoutes = []authzRoute{
	{method: http.MethodGet, path: "/", access: accessPublic, ok: http.StatusOK,
		note: "the dashboard ([dashboard.md](dashboard.md)); it reads the public routes only"},
	{method: http.MethodGet, path: "/ui/", access: accessPublic, ok: http.StatusFound,
		note: "the dashboard's assets are `/ui/<file>`; the bare prefix redirects to `/`"},

	// Agent.
	{method: http.MethodGet, path: "/api/agent/diagnostics-completeness", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/agent/loop", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/agent/loop/run-once", access: accessAdmin, ok: http.StatusOK, body: fixedBody(map[string]any{}),
		openWhen: "`dry_run: true`", openBody: fixedBody(map[string]any{"dry_run": true}), openOK: http.StatusOK},
	{method: http.MethodGet, path: "/api/agent/metrics", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/agent/pipeline-status", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/agent/prompt-ab/stats", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/agent/tasks", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/agent/tasks", access: accessPublic, ok: http.StatusCreated,
		body: fixedBody(map[string]any{"direction": "probe the matrix", "task_type": "spec"})},
	{method: http.MethodGet, path: "/api/agent/tasks/attention", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/agent/tasks/claim", access: accessPublic, ok: http.StatusOK,
		body: fixedBody(map[string]any{"worker_id": "authz", "task_types": []string{"verify"}})},
	{method: http.MethodGet, path: "/api/agent/tasks/count", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/agent/tasks/{id}", access: accessPublic, ok: http.StatusOK, params: map[string]string{"id": "task"}},
	{method: http.MethodPatch, path: "/api/agent/tasks/{id}", access: accessPublic, ok: http.StatusOK, params: map[string]string{"id": "task"},
		body: fixedBody(map[string]any{"progress_pct": 10})},

	// Ledger: assets, contributions, distributions.
	{method: http.MethodGet, path: "/api/assets", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/assets", access: accessPublic, ok: http.StatusCreated,
		body: fixedBody(map[string]any{"type": "DATA", "name": "matrix asset"})},
	{method: http.MethodGet, path: "/api/assets/{asset_id}/contributions", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"asset_id": "asset"}},
	{method: http.MethodGet, path: "/api/assets/{asset_id}/distributions", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"asset_id": "asset"}},
	{method: http.MethodGet, path: "/api/assets/{id}", access: accessPublic, ok: http.StatusOK, params: map[string]string{"id": "asset"}},
	{method: http.MethodPost, path: "/api/contributions", access: accessPublic, ok: http.StatusCreated,
		body: func(f *authzFixture) any {
			return map[string]any{"contributor_id": f.owner.ID, "asset_id": f.ids["asset"], "cost_amount": 1}
		}},
	{method: http.MethodPost, path: "/api/contributions/github", access: accessSigned, ok: http.StatusCreated,
		signedCall: githubDelivery, secret: webhookSecret, unsigned: http.StatusUnauthorized, forged: http.StatusUnauthorized,
		note: "`X-Hub-Signature-256` under `FOUNDRY_GITHUB_WEBHOOK_SECRET`; with no secret every delivery is 401 unless unsigned ones are allowed"},
	{method: http.MethodGet, path: "/api/contributions/{id}", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"id": "contribution"}},
	{method: http.MethodGet, path: "/api/contributors/{contributor_id}/contributions", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"contributor_id": "owner"}},
	{method: http.MethodPost, path: "/api/distributions", access: accessAdmin, ok: http.StatusCreated,
		body: func(f *authzFixture) any {
			return map[string]any{"asset_id": f.ids["asset"], "value_amount": 1, "pay_cc": true}
		},
		openWhen: "without `pay_cc`", openOK: http.StatusCreated,
		openBody: func(f *authzFixture) any { return map[string]any{"asset_id": f.ids["asset"], "value_amount": 1} }},
	{method: http.MethodGet, path: "/api/distributions/{id}", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"id": "distribution"}},

	// Ledger: the credit economy.
	{method: http.MethodGet, path: "/api/audit", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/audit/repair", access: accessAdmin, ok: http.StatusOK, body: fixedBody(map[string]any{})},
	{method: http.MethodGet, path: "/api/audit/verify", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/cc/balances/{contributor_id}", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"contributor_id": "owner"}},
	{method: http.MethodPost, path: "/api/cc/deposit", access: accessAdmin, ok: http.StatusCreated,
		body: func(f *authzFixture) any {
			return map[string]any{"contributor_id": f.owner.ID, "amount_usd": 1, "reference": f.next("deposit")}
		}},
	{method: http.MethodGet, path: "/api/cc/exchange-rate", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/cc/oracle/readings", access: accessAdmin, ok: http.StatusOK,
		body: fixedBody(map[string]any{"cc_per_usd": 100})},
	{method: http.MethodPost, path: "/api/cc/stake", access: accessOwner, ok: http.StatusCreated,
		body: func(f *authzFixture) any {
			return map[string]any{"contributor_id": f.owner.ID, "idea_id": f.ids["idea"], "amount_cc": 1}
		},
		openWhen: "`dry_run: true`", openOK: http.StatusOK,
		openBody: func(f *authzFixture) any {
			return map[string]any{"contributor_id": f.owner.ID, "idea_id": f.ids["idea"], "amount_cc": 1, "dry_run": true}
		}},
	{method: http.MethodGet, path: "/api/cc/supply", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/cc/unstake", access: accessOwner, ok: http.StatusOK,
		body: func(f *authzFixture) any {
			return map[string]any{"contributor_id": f.owner.ID, "idea_id": f.ids["idea"], "amount_cc": 1}
		}},
	{method: http.MethodPost, path: "/api/cc/withdraw", access: accessOwner, ok: http.StatusOK,
		body: func(f *authzFixture) any { return map[string]any{"contributor_id": f.owner.ID, "amount_cc": 1} }},
	{method: http.MethodGet, path: "/api/contributors/{id}/investment-history", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"id": "owner"}},
	{method: http.MethodGet, path: "/api/contributors/{id}/investments", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"id": "owner"}},
	{method: http.MethodPost, path: "/api/contributors/{id}/pledges", access: accessOwner, ok: http.StatusCreated,
		params: map[string]string{"id": "owner"},
		body:   func(f *authzFixture) any { return map[string]any{"idea_id": f.ids["idea"], "hours_pledged": 1} }},
	{method: http.MethodGet, path: "/api/ideas/{idea_id}/invest-preview", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"idea_id": "idea"}},
	{method: http.MethodPost, path: "/api/ideas/{idea_id}/stake", access: accessOwner, ok: http.StatusCreated,
		params:   map[string]string{"idea_id": "idea"},
		body:     func(f *authzFixture) any { return map[string]any{"contributor_id": f.owner.ID, "amount_cc": 1} },
		openWhen: "`dry_run: true`", openOK: http.StatusOK,
		openBody: func(f *authzFixture) any {
			return map[string]any{"contributor_id": f.owner.ID, "amount_cc": 1, "dry_run": true}
		}},

	// Ledger: incidents.
	{method: http.MethodGet, path: "/api/incidents", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/incidents/freeze", access: accessSigned, ok: http.StatusOK,
		signedCall: freezeRequest, secret: authzSignerSecret, unsigned: http.StatusUnprocessableEntity, forged: http.StatusForbidden,
		restore: unfreeze,
		note:    "`signature` = HMAC-SHA256 of `reason` under a `FOUNDRY_SIGNERS` secret; none is a missing field (422)"},
	{method: http.MethodGet, path: "/api/incidents/status", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/incidents/unfreeze", access: accessAdmin, ok: http.StatusOK, body: fixedBody(map[string]any{}),
		prepare: freeze},

	// Ledger: onboarding.
	{method: http.MethodPost, path: "/api/onboarding/register", access: accessPublic, ok: http.StatusCreated,
		body: func(f *authzFixture) any { return map[string]any{"handle": f.next("matrix")} }},
	{method: http.MethodGet, path: "/api/onboarding/session", access: accessSession, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/onboarding/upgrade", access: accessPublic, ok: http.StatusNotImplemented,
		note: "always 501"},

	// Gateway: documents.
	{method: http.MethodGet, path: "/api/docs", access: accessPublic, ok: http.StatusMovedPermanently, note: "redirects to `/api/docs/`"},
	{method: http.MethodGet, path: "/api/docs/", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/openapi.json", access: accessPublic, ok: http.StatusOK},

	// Ops.
	{method: http.MethodGet, path: "/api/automation/usage", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/automation/usage/snapshots", access: accessPublic, ok: http.StatusCreated,
		body: fixedBody(map[string]any{"provider": "openai", "metrics": []any{map[string]any{"name": "requests", "value": 1}}})},
	{method: http.MethodGet, path: "/api/graph/edges", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/graph/edges", access: accessPublic, ok: http.StatusCreated,
		body: func(f *authzFixture) any {
			return map[string]any{"edge_type": "matrix", "from_node_id": f.ids["node"], "to_node_id": f.ids["other-node"]}
		}},
	{method: http.MethodPost, path: "/api/graph/nodes", access: accessPublic, ok: http.StatusCreated,
		body: fixedBody(map[string]any{"node_type": "matrix", "payload": map[string]any{}})},
	{method: http.MethodGet, path: "/api/graph/nodes/{node_id}", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"node_id": "node"}},
	{method: http.MethodGet, path: "/api/graph/nodes/{node_id}/edges", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"node_id": "node"}},
	{method: http.MethodGet, path: "/api/health/coherence", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/health/persistence", access: accessPublic, ok: http.StatusOK, adminSees: "targets_shown",
		note: "the key adds where each database lives (`targets_shown: true`)"},
	{method: http.MethodGet, path: "/api/ready", access: accessPublic, ok: http.StatusOK},

	// Portfolio.
	{method: http.MethodGet, path: "/api/ideas", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/ideas", access: accessPublic, ok: http.StatusCreated,
		body: fixedBody(map[string]any{"name": "Matrix probe"})},
	{method: http.MethodGet, path: "/api/ideas/progress", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/ideas/right-sizing", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/ideas/right-sizing/apply", access: accessAdmin, ok: http.StatusOK,
		body: func(f *authzFixture) any { return splitRequest(f, false) },
		// A dry run comes first: the real split changes its idea.
		openWhen: "a dry run (the default)", openOK: http.StatusOK,
		openBody: func(f *authzFixture) any { return splitRequest(f, true) }},
	{method: http.MethodGet, path: "/api/ideas/right-sizing/history", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodGet, path: "/api/ideas/storage", access: accessPublic, ok: http.StatusOK, adminSees: "targets_shown",
		note: "the key adds where the database lives (`targets_shown: true`)"},
	{method: http.MethodGet, path: "/api/ideas/tags", access: accessPublic, ok: http.StatusOK},
	{method: http.MethodPost, path: "/api/ideas/{idea_id}/advance", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"idea_id": "advance-idea"}},
	{method: http.MethodPost, path: "/api/ideas/{idea_id}/stage", access: accessAdmin, ok: http.StatusOK,
		params: map[string]string{"idea_id": "stage-idea"}, body: fixedBody(map[string]any{"stage": "testing"})},
	{method: http.MethodGet, path: "/api/ideas/{id}", access: accessPublic, ok: http.StatusOK, params: map[string]string{"id": "idea"}},
	{method: http.MethodPatch, path: "/api/ideas/{id}", access: accessPublic, ok: http.StatusOK, params: map[string]string{"id": "idea"},
		body: fixedBody(map[string]any{"description": "classified by the matrix"})},
	{method: http.MethodGet, path: "/api/ideas/{id}/questions", access: accessPublic, ok: http.StatusOK,
		params: map[string]string{"id": "idea"}},
	{method: http.MethodPost, path: "/api/ideas/{id}/questions", access: accessPublic, ok: http.StatusCreated,
		params: map[string]string{"id": "idea"}, body: fixedBody(map[string]any{"question": "Who may do what?"})},
	{method: http.MethodPut, path: "/api/ideas/{id}/tags", access: accessPublic, ok: http.StatusOK, params: map[string]string{"id": "idea"},
		body: fixedBody(map[string]any{"tags": []string{"matrix"}})},
}

// githubDelivery is a shaped push delivery (a new commit each time),
// signed with secret in X-Hub-Signature-256 unless secret is "".
func githubDelivery(f *authzFixture, secret string) (any, []string) {
	body := fmt.Appendf(nil, `{"contributor_email":"matrix@example.com","repository":"matrix/probe","commit_hash":"%040x","cost_amount":1}`, f.seq())
	if secret == "" {
		return body, nil
	}
	return body, []string{"X-Hub-Signature-256: " + sign256(secret, body)}
}

// freezeRequest is an emergency freeze signed with secret, or without a
// signature when secret is "".
func freezeRequest(_ *authzFixture, secret string) (any, []string) {
	const reason = "the matrix probes the freeze"
	body := map[string]any{"signer_id": authzSigner, "reason": reason}
	if secret != "" {
		body["signature"] = creditSign(secret, reason)
	}
	return body, nil
}

func freeze(t *testing.T, f *authzFixture) {
	t.Helper()
	body, _ := freezeRequest(f, authzSignerSecret)
	requireStatus(t, http.StatusOK, request(t, http.MethodPost, f.sys.URL("/api/incidents/freeze"), body))
}

func unfreeze(t *testing.T, f *authzFixture) {
	t.Helper()
	requireStatus(t, http.StatusOK, request(t, http.MethodPost, f.sys.URL("/api/incidents/unfreeze"), map[string]any{}, adminHeader))
}

// splitRequest splits the fixture's split idea into one named child.
func splitRequest(f *authzFixture, dryRun bool) map[string]any {
	return map[string]any{"suggestion_type": "split", "idea_id": f.ids["split-idea"],
		"proposed_children": []any{map[string]any{"name": "Matrix part"}}, "dry_run": dryRun}
}

// authzFixture is the data the routes act on: two contributors (the
// owner, with CC staked, and another) and a resource of every kind.
type authzFixture struct {
	sys          *allinonetest.System
	owner, other creditUser
	ownerHandle  string
	// ids are the resources path parameters are filled with, by name.
	ids map[string]string
	n   int
}

// seq counts up, so that each write is a new one.
func (f *authzFixture) seq() int {
	f.n++
	return f.n
}

func (f *authzFixture) next(prefix string) string { return fmt.Sprintf("%s-%d", prefix, f.seq()) }

func newAuthzFixture(t *testing.T, sys *allinonetest.System) *authzFixture {
	t.Helper()
	f := &authzFixture{sys: sys, ownerHandle: "matrix_owner", ids: map[string]string{}}
	f.owner = creditRegister(t, sys, f.ownerHandle)
	f.other = creditRegister(t, sys, "matrix_other")
	f.ids["owner"] = f.owner.ID
	for name, title := range map[string]string{"idea": "Matrix idea", "advance-idea": "Advance me", "stage-idea": "Stage me", "split-idea": "Split me"} {
		f.ids[name] = creditIdea(t, sys, title)
	}
	requireStatus(t, http.StatusCreated, creditDeposit(t, sys, f.owner.ID, 100, "matrix-setup"))
	requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
		map[string]any{"contributor_id": f.owner.ID, "idea_id": f.ids["idea"], "amount_cc": 50}, f.owner.auth()))

	f.ids["asset"] = ledgerAsset(t, sys, "CODE")["id"].(string)
	c := ledgerContribute(t, sys, map[string]any{"contributor_id": f.owner.ID, "asset_id": f.ids["asset"], "cost_amount": 2})
	requireStatus(t, http.StatusCreated, c)
	f.ids["contribution"] = c.JSON["id"].(string)
	d := request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": f.ids["asset"], "value_amount": 10})
	requireStatus(t, http.StatusCreated, d)
	f.ids["distribution"] = d.JSON["id"].(string)

	f.ids["task"] = createAgentTask(t, sys, map[string]any{"direction": "set up the matrix", "task_type": "spec"})["id"].(string)
	f.ids["node"] = mustNode(t, sys, "matrix", "node-a")
	f.ids["other-node"] = mustNode(t, sys, "matrix", "node-b")
	return f
}

// pathParam is a parameter of a route's path template.
var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// url fills the route's path parameters with the fixture's resources.
func (f *authzFixture) url(t *testing.T, rt authzRoute) string {
	t.Helper()
	path := pathParam.ReplaceAllStringFunc(rt.path, func(p string) string {
		id, ok := f.ids[rt.params[strings.Trim(p, "{}")]]
		require.True(t, ok, "%s: no resource for %s", rt.key(), p)
		return id
	})
	return f.sys.URL(path)
}

func (f *authzFixture) send(t *testing.T, rt authzRoute, body func(*authzFixture) any, headers ...string) response {
	t.Helper()
	var b any
	if body != nil {
		b = body(f)
	}
	return request(t, rt.method, f.url(t, rt), b, headers...)
}

// ownerData is what a refusal must not show of the owner: the handle, the
// token, the balances and the owner's resources the request did not name.
func (f *authzFixture) ownerData(t *testing.T) []string {
	t.Helper()
	out := []string{f.ownerHandle, f.owner.Token, f.ids["contribution"], f.ids["distribution"]}
	b := creditBalances(t, f.sys, f.owner.ID)
	for _, figure := range []float64{b.Available, b.Staked} {
		out = append(out, strconv.FormatFloat(figure, 'f', -1, 64))
	}
	return out
}

// state is what a refused request must leave as it was: the audit chain,
// the portfolio, the tasks, the assets and distributions, the economy, and
// the owner's positions and history.
func (f *authzFixture) state(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for _, path := range []string{
		"/api/audit?limit=1", "/api/ideas?limit=500", "/api/agent/tasks/count", "/api/assets",
		"/api/assets/" + f.ids["asset"] + "/distributions", "/api/cc/supply", "/api/incidents",
		"/api/contributors/" + f.owner.ID + "/investments", "/api/contributors/" + f.owner.ID + "/investment-history",
	} {
		r := request(t, http.MethodGet, f.sys.URL(path), nil)
		requireStatus(t, http.StatusOK, r)
		fmt.Fprintf(&b, "%s\n%s\n", path, r.Raw)
	}
	return b.String()
}

// requireRefused checks a refusal: its status, and a body that says why
// and nothing more.
func requireRefused(t *testing.T, want int, r response, ownerData []string) {
	t.Helper()
	requireStatus(t, want, r)
	require.Equal(t, []string{"detail"}, keysOf(r.JSON), "a refusal carries its detail only: %s", r.Raw)
	for _, d := range ownerData {
		require.NotContains(t, string(r.Raw), d, "a refusal shows nothing of the owner")
	}
}

// checkRoute sends the route its requests with no, wrong and right
// credentials, and checks each answer.
func checkRoute(t *testing.T, f *authzFixture, rt authzRoute) {
	if rt.prepare != nil {
		rt.prepare(t, f)
	}
	switch rt.access {
	case accessPublic:
		for _, headers := range [][]string{nil, strayCredentials} {
			r := f.send(t, rt, rt.body, headers...)
			requireStatus(t, rt.ok, r)
			if rt.adminSees != "" {
				require.Equal(t, false, r.JSON[rt.adminSees], "without the key: the public view")
			}
		}
		if rt.adminSees != "" {
			r := f.send(t, rt, rt.body, adminHeader)
			requireStatus(t, rt.ok, r)
			require.Equal(t, true, r.JSON[rt.adminSees], "the administrator sees more")
		}

	case accessSigned:
		before, data := f.state(t), f.ownerData(t)
		for _, attempt := range []struct {
			secret string
			want   int
		}{{"", rt.unsigned}, {wrongSecret, rt.forged}} {
			body, headers := rt.signedCall(f, attempt.secret)
			r := request(t, rt.method, f.url(t, rt), body, headers...)
			if attempt.want == http.StatusUnauthorized || attempt.want == http.StatusForbidden {
				requireRefused(t, attempt.want, r, data)
			} else {
				requireStatus(t, attempt.want, r)
			}
		}
		require.Equal(t, before, f.state(t), "a refused request writes nothing")
		body, headers := rt.signedCall(f, rt.secret)
		requireStatus(t, rt.ok, request(t, rt.method, f.url(t, rt), body, headers...))

	default:
		before, data := f.state(t), f.ownerData(t)
		for _, rf := range refusals[rt.access] {
			requireRefused(t, rf.status, f.send(t, rt, rt.body, rf.headers(f)...), data)
		}
		require.Equal(t, before, f.state(t), "a refused request writes nothing")
		if rt.openBody != nil {
			requireStatus(t, rt.openOK, f.send(t, rt, rt.openBody))
		}
		right := []string{adminHeader}
		if rt.access != accessAdmin {
			right = []string{f.owner.auth()}
		}
		requireStatus(t, rt.ok, f.send(t, rt, rt.body, right...))
	}
	if rt.restore != nil {
		rt.restore(t, f)
	}
}

// repoRoot is the repository's root, seen from this package's directory
// (where go test runs).
var repoRoot = filepath.Join("..", "..", "..")

// openAPIRoutes reads the OpenAPI document the gateway serves and returns
// its routes ("METHOD /path") with the security scheme each declares ("" for
// none).
func openAPIRoutes(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "gateway", "openapi", "foundry.swagger.json"))
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	methods := []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead, http.MethodOptions}
	out := map[string]string{}
	for path, item := range doc.Paths {
		for m, op := range item {
			method := strings.ToUpper(m)
			if !slices.Contains(methods, method) {
				continue // a path-level field, not an operation
			}
			var o struct {
				Security []map[string][]string `json:"security"`
			}
			require.NoError(t, json.Unmarshal(op, &o))
			var schemes []string
			for _, s := range o.Security {
				for name := range s {
					schemes = append(schemes, name)
				}
			}
			slices.Sort(schemes)
			out[method+" "+path] = strings.Join(schemes, ",")
		}
	}
	require.NotEmpty(t, out, "the OpenAPI document lists routes")
	return out
}

// gatewayRoutes returns the routes the gateway's mux serves itself
// ("METHOD /path"), read from its source: a pattern with a method is a
// route; the two without one are the generated /api/ mux (the OpenAPI
// document's routes) and the JSON 404 for everything else.
func gatewayRoutes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "gateway", "*.go"))
	require.NoError(t, err)
	pattern := regexp.MustCompile(`\.Handle(?:Func)?\("([A-Z]+) (/[^"]*)"`)
	var out []string
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		src, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, m := range pattern.FindAllStringSubmatch(string(src), -1) {
			// "/{$}" is the mux's exact "/": the path a client sends.
			out = append(out, m[1]+" "+strings.TrimSuffix(m[2], "{$}"))
		}
	}
	require.NotEmpty(t, out, "the gateway serves routes of its own")
	return out
}

// securityScheme is the OpenAPI security scheme a route of access declares.
var securityScheme = map[access]string{
	accessPublic: "", accessSigned: "", accessSession: "BearerAuth", accessOwner: "BearerAuth", accessAdmin: "ApiKeyAuth",
}

// The matrix in docs/api.md: where it is, its markers, and how a developer
// rewrites it.
var (
	authzDoc             = filepath.Join(repoRoot, "docs", "api.md")
	authzBegin, authzEnd = "<!-- authz-matrix:begin -->", "<!-- authz-matrix:end -->"
	authzUpdateCommand   = "cd services/allinone && " + authzUpdateEnv + "=1 go test -count=1 -run 'TestAuthorizationMatrix/docs' ./e2e/"
)

// authzUpdateEnv set to 1 makes the test rewrite the matrix in docs/api.md
// instead of failing when it differs.
const authzUpdateEnv = "FOUNDRY_UPDATE_DOCS"

// renderMatrix is the Markdown table docs/api.md shows between the markers.
func renderMatrix(routes []authzRoute, documented map[string]string) string {
	rows := slices.Clone(routes)
	slices.SortFunc(rows, func(a, b authzRoute) int {
		if c := strings.Compare(a.path, b.path); c != 0 {
			return c
		}
		return strings.Compare(a.method, b.method)
	})
	var b strings.Builder
	b.WriteString("| Route | Class | Without credential | Wrong credential | Notes |\n|---|---|---|---|---|\n")
	for _, rt := range rows {
		var without, wrong string
		switch rt.access {
		case accessPublic:
			without, wrong = strconv.Itoa(rt.ok), strconv.Itoa(rt.ok)+" (ignored)"
		case accessSigned:
			without, wrong = strconv.Itoa(rt.unsigned), strconv.Itoa(rt.forged)
		default:
			without, wrong = strconv.Itoa(refusals[rt.access][0].status), renderRefusals(refusals[rt.access][1:])
		}
		var notes []string
		if rt.openWhen != "" {
			notes = append(notes, fmt.Sprintf("%s needs no credential (%d)", rt.openWhen, rt.openOK))
		}
		if rt.note != "" {
			notes = append(notes, rt.note)
		}
		if _, ok := documented[rt.key()]; !ok {
			notes = append(notes, "served by the gateway itself (not in the OpenAPI document)")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", rt.key(), rt.access, without, wrong, strings.Join(notes, "; "))
	}
	return b.String()
}

// renderRefusals says which wrong credentials get which status, e.g.
// "401: a wrong key, a session token".
func renderRefusals(rs []refusal) string {
	var codes []int
	what := map[int][]string{}
	for _, r := range rs {
		if _, ok := what[r.status]; !ok {
			codes = append(codes, r.status)
		}
		what[r.status] = append(what[r.status], r.what)
	}
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d: %s", c, strings.Join(what[c], ", "))
	}
	return strings.Join(parts, "; ")
}

// TestAuthorizationMatrix checks every route of the REST surface against
// its class in authzRoutes, on every storage engine: public routes answer
// without a credential and ignore a stray one; guarded routes answer 401
// without one, 401 or 403 (as docs/api.md says) with a wrong one, writing
// nothing and showing nothing of the owner, and succeed with the right one.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	documented := openAPIRoutes(t)

	t.Run("every route is classified once", func(t *testing.T) {
		served := map[string]bool{}
		for key := range documented {
			served[key] = true
		}
		for _, key := range gatewayRoutes(t) {
			served[key] = true
		}
		var problems []string
		classified := map[string]bool{}
		for _, rt := range authzRoutes {
			key := rt.key()
			switch scheme, inDoc := documented[key]; {
			case classified[key]:
				problems = append(problems, key+" is in the matrix twice")
			case !served[key]:
				problems = append(problems, key+" is in the matrix but neither in the OpenAPI document nor served by the gateway: remove it")
			case inDoc && scheme != securityScheme[rt.access]:
				problems = append(problems, fmt.Sprintf("%s is %s in the matrix but declares security %q in the OpenAPI document, not %q",
					key, rt.access, scheme, securityScheme[rt.access]))
			}
			classified[key] = true
		}
		for key := range served {
			if !classified[key] {
				problems = append(problems, key+" is not in the matrix: classify it in authzRoutes (authz_test.go)")
			}
		}
		if len(problems) > 0 {
			slices.Sort(problems)
			t.Fatalf("the authorization matrix and the routes served disagree:\n  %s", strings.Join(problems, "\n  "))
		}
	})

	t.Run("docs/api.md shows the matrix", func(t *testing.T) {
		raw, err := os.ReadFile(authzDoc)
		require.NoError(t, err)
		doc := string(raw)
		begin, end := strings.Index(doc, authzBegin), strings.Index(doc, authzEnd)
		require.True(t, begin >= 0 && end > begin, "%s has no %s ... %s section", authzDoc, authzBegin, authzEnd)
		begin += len(authzBegin)
		want := "\n" + renderMatrix(authzRoutes, documented)
		if doc[begin:end] == want {
			return
		}
		if os.Getenv(authzUpdateEnv) == "1" {
			require.NoError(t, os.WriteFile(authzDoc, []byte(doc[:begin]+want+doc[end:]), 0o644))
			t.Logf("rewrote the authorization matrix in %s", authzDoc)
			return
		}
		t.Errorf("the authorization matrix in docs/api.md is not the one the test checks; rewrite it with\n  %s", authzUpdateCommand)
	})

	_, loopFlags := loopRouting(t)
	flags := append([]string{"-signers=" + authzSigner + ":" + authzSignerSecret, "-github-webhook-secret=" + webhookSecret,
		"-rate-poll-interval=0"}, loopFlags...)
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		f := newAuthzFixture(t, sys)
		for _, rt := range authzRoutes {
			t.Run(rt.key(), func(t *testing.T) { checkRoute(t, f, rt) })
		}
	}, flags...)
}

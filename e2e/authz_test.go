package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/foundryhq/foundry/gateway"
	authzv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// The authorization matrix: every route of the REST surface, sent by every
// kind of caller, with the status each must get. Who may call what is not
// written here: each route is mapped to its RPC (gateway/api.yaml, checked
// against the OpenAPI document's operation ids; the few routes the gateway
// serves itself are mapped in authzGatewayRoutes), the RPC's policy is read
// from its proto option (authz.Policies), and the expected status of each
// caller is computed from that policy (authz.Allowed and authz.Includes on
// the request the test sends, as a proto message) and from the route's own
// rules where docs/api.md describes some beyond the policy (an idea's
// creator, a task's claimer, session-only routes). What this file declares
// per route is only how to call it: a valid request, its status on success,
// and the resources it needs. A route that maps to no policy fails the test;
// docs/api.md shows the same matrix, rendered from it.

// authzPrincipal is one column of the matrix: who sends the request.
type authzPrincipal struct {
	// column names it in the docs' table.
	column string
	// what describes it in failures.
	what string
	kind authz.Kind
	role authz.Role
	// contributor is the fixture's contributor a session belongs to.
	contributor string
	// claimer marks the worker token that claimed the fixture's task.
	claimer bool
	// reason is the detail of a 401 to a credential that does not verify.
	reason string
}

// authzPrincipals are the matrix's columns, in order.
var authzPrincipals = []authzPrincipal{
	{column: "none", what: "no credential", kind: authz.Anonymous},
	{column: "viewer", what: "a viewer token", kind: authz.Token, role: authz.Viewer},
	{column: "self", what: "the contributor's own session", kind: authz.Session, role: authz.Contributor, contributor: "self"},
	{column: "other", what: "another contributor's session", kind: authz.Session, role: authz.Contributor, contributor: "other"},
	{column: "claimer", what: "the worker token that claimed the task", kind: authz.Token, role: authz.Worker, claimer: true},
	{column: "worker", what: "another worker token", kind: authz.Token, role: authz.Worker},
	{column: "operator", what: "an operator token", kind: authz.Token, role: authz.Operator},
	{column: "admin", what: "the administrator key", kind: authz.AdminKey, role: authz.Admin},
	{column: "revoked", what: "a revoked (admin) token", kind: authz.Invalid, reason: "token revoked"},
	{column: "expired", what: "an expired session", kind: authz.Invalid, reason: "session expired"},
}

// authzPublicReads is the matrix system's FOUNDRY_PUBLIC_READS (the
// default): anonymous callers may use what viewers may.
const authzPublicReads = true

// wrongSecret signs what a signed route must refuse.
const wrongSecret = "not-the-secret"

// authzSigner is the emergency-freeze signer the matrix's system knows (a
// signer's secret is at least 32 bytes).
const authzSigner, authzSignerSecret = "ops", "authz-0123456789abcdef0123456789ab"

// authzRoute is how to call one route of the REST surface.
type authzRoute struct {
	// method and path name the route as gateway/api.yaml and the OpenAPI
	// document do, or as the gateway's mux does for the routes it serves
	// itself.
	method, path string
	// requests are the requests the matrix sends: one, or one per
	// condition of the route's policy (a dry run, a paid distribution).
	requests []authzRequest
	// params names the resource each path parameter is filled with.
	params map[string]string
	// fresh makes the resources one cell consumes (an idea to advance, a
	// token to revoke), before each allowed cell and once for the refusals.
	fresh func(t *testing.T, c *authzCell)
	// prepare puts the system where the route can act (an unfreeze needs a
	// freeze) before the refusals and before each allowed cell; restore
	// undoes it, or the route's success (a freeze), after each.
	prepare, restore func(t *testing.T, f *authzFixture)
	// signed routes check an HMAC signature themselves.
	signed *authzSigned
	// adminSees names the boolean field of a read that only the
	// administrator turns true; everyone else gets the public view.
	adminSees string
	// last routes consume the callers' credentials (a logout): they run
	// after every other route.
	last bool
	// note is shown in the docs' Notes column.
	note string
}

func (r *authzRoute) key() string { return r.method + " " + r.path }

// authzRequest is one request of a route.
type authzRequest struct {
	// what names the request in the docs when a route has several.
	what string
	// body is the request body; nil sends none.
	body func(c *authzCell) any
	// query is the request's query string ("full=true"), which the
	// gateway reads into the RPC's request message like the body.
	query string
	// ok is the status of a caller the route serves.
	ok int
	// rules are the route's own rules past its policy.
	rules []authzRule
}

// authzRule is a rule a route applies past its method's policy.
type authzRule struct {
	// note explains it in the docs.
	note string
	// status is what the route answers p, when the rule refuses it; 0 when
	// it does not.
	status func(p authzPrincipal) int
}

// The routes' own rules, as docs/api.md states them.
var (
	// authzRuleIdeaCreator: a contributor changes only the ideas it created; the
	// matrix's idea ("self-idea") is self's.
	authzRuleIdeaCreator = authzRule{"a contributor changes only the ideas it created (the idea is self's)", func(p authzPrincipal) int {
		if p.role == authz.Contributor && p.contributor != "self" {
			return http.StatusForbidden
		}
		return 0
	}}
	// authzRuleNoStage: stages move by operators, never by a contributor.
	authzRuleNoStage = authzRule{"a contributor may not set a stage", func(p authzPrincipal) int {
		if p.role == authz.Contributor {
			return http.StatusForbidden
		}
		return 0
	}}
	// authzRuleOperatorsJudge: an idea's manifestation and review status are
	// operators' judgements, never its creator's.
	authzRuleOperatorsJudge = authzRule{"manifestation_status and review_status are set by operators", func(p authzPrincipal) int {
		if p.role == authz.Contributor {
			return http.StatusForbidden
		}
		return 0
	}}
	// authzRuleTaskClaimer: a worker reports only on the task it claimed.
	authzRuleTaskClaimer = authzRule{"a worker reports only on the task it claimed (the task is claimer's)", func(p authzPrincipal) int {
		if !authz.Includes(p.role, authz.Operator) && !p.claimer {
			return http.StatusForbidden
		}
		return 0
	}}
	// authzRuleSessionOnly: the route acts on the caller's session; anything else
	// is no session.
	authzRuleSessionOnly = authzRule{"a session only: anything else is 401", func(p authzPrincipal) int {
		if p.kind != authz.Session {
			return http.StatusUnauthorized
		}
		return 0
	}}
	// authzRuleVerified: the route says who the credential is, so one that does
	// not verify is a 401 although the route is public.
	authzRuleVerified = authzRule{"a credential that does not verify is 401", func(p authzPrincipal) int {
		if p.kind == authz.Invalid {
			return http.StatusUnauthorized
		}
		return 0
	}}
)

// authzSigned is how a signed route signs its request.
type authzSigned struct {
	// sign returns body signed with secret.
	sign func(body any, secret string) (any, []string)
	// secret is the system's; unsigned and forged are the statuses without
	// a signature and with a wrong one.
	secret           string
	unsigned, forged int
	note             string
}

// authzFreshTask creates a pending task for one cell to act on.
func authzFreshTask(t *testing.T, c *authzCell) {
	c.fresh["fresh-task"] = createAgentTask(t, c.f.sys, map[string]any{"direction": "probe the matrix", "task_type": "verify"})["id"].(string)
}

// one is a route's single request.
func authzOne(ok int, body func(c *authzCell) any, rules ...authzRule) []authzRequest {
	return []authzRequest{{ok: ok, body: body, rules: rules}}
}

// fixed is a body that is the same on every request.
func authzFixed(body map[string]any) func(*authzCell) any {
	return func(*authzCell) any { return body }
}

// authzRoutes is how to call every route. Every route of gateway/api.yaml,
// of the OpenAPI document and of the gateway's own mux must be here, once.
var authzRoutes = []*authzRoute{
	{method: http.MethodGet, path: "/", requests: authzOne(http.StatusOK, nil),
		note: "the dashboard ([dashboard.md](dashboard.md)); it sends the credential signed in to it"},
	{method: http.MethodGet, path: "/ui/", requests: authzOne(http.StatusFound, nil),
		note: "the dashboard's assets are `/ui/<file>`; the bare prefix redirects to `/`"},

	// Agent.
	{method: http.MethodGet, path: "/api/agent/diagnostics-completeness", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/agent/loop", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/agent/loop/run-once", requests: []authzRequest{
		{ok: http.StatusOK, body: authzFixed(map[string]any{})},
		{what: "with `dry_run: true`", ok: http.StatusOK, body: authzFixed(map[string]any{"dry_run": true})},
	}},
	{method: http.MethodGet, path: "/api/agent/metrics", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/agent/metrics/daily", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/agent/pipeline-status", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/agent/prompt-ab/stats", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/agent/prompts", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/agent/prompts", requests: authzOne(http.StatusCreated,
		authzFixed(map[string]any{"name": "matrix", "task_type": "verify", "text": "Verify {{direction}}"}))},
	{method: http.MethodGet, path: "/api/agent/prompts/{name}", params: map[string]string{"name": "prompt"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/agent/tasks", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/agent/tasks",
		requests: authzOne(http.StatusCreated, authzFixed(map[string]any{"direction": "probe the matrix", "task_type": "spec"}))},
	{method: http.MethodGet, path: "/api/agent/tasks/attention", requests: authzOne(http.StatusOK, nil)},
	// No task of the type is pending: a claim answers 200 with no task.
	{method: http.MethodPost, path: "/api/agent/tasks/claim",
		requests: authzOne(http.StatusOK, authzFixed(map[string]any{"worker_id": "matrix", "task_types": []string{"verify"}}))},
	{method: http.MethodGet, path: "/api/agent/tasks/count", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/agent/tasks/{id}", params: map[string]string{"id": "task"}, requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPatch, path: "/api/agent/tasks/{id}", params: map[string]string{"id": "task"},
		requests: authzOne(http.StatusOK, authzFixed(map[string]any{"progress_pct": 10, "worker_id": "matrix-claimer"}), authzRuleTaskClaimer)},
	{method: http.MethodPost, path: "/api/agent/tasks/{id}/cancel", params: map[string]string{"id": "fresh-task"},
		requests: authzOne(http.StatusOK, authzFixed(map[string]any{"reason": "probe the matrix"})), fresh: authzFreshTask},
	{method: http.MethodPost, path: "/api/agent/tasks/{id}/retry", params: map[string]string{"id": "fresh-task"},
		requests: authzOne(http.StatusOK, authzFixed(map[string]any{})), note: "the task retried is a cancelled one",
		fresh: func(t *testing.T, c *authzCell) {
			authzFreshTask(t, c)
			r := request(t, http.MethodPost, c.f.sys.URL("/api/agent/tasks/"+c.fresh["fresh-task"]+"/cancel"), map[string]any{})
			requireStatus(t, http.StatusOK, r)
		}},
	{method: http.MethodPost, path: "/api/agent/tasks/retry",
		requests: authzOne(http.StatusOK, authzFixed(map[string]any{"status": "discarded", "task_type": "verify"}))},

	// Ledger: assets, contributions, distributions.
	{method: http.MethodGet, path: "/api/assets", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/assets", requests: authzOne(http.StatusCreated, authzFixed(map[string]any{"type": "DATA", "name": "matrix asset"}))},
	{method: http.MethodGet, path: "/api/assets/{asset_id}/contributions", params: map[string]string{"asset_id": "asset"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/assets/{asset_id}/distributions", params: map[string]string{"asset_id": "asset"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/assets/{id}", params: map[string]string{"id": "asset"}, requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/contributions", requests: authzOne(http.StatusCreated, func(c *authzCell) any {
		return map[string]any{"contributor_id": c.id("self"), "asset_id": c.id("asset"), "cost_amount": 1}
	})},
	{method: http.MethodPost, path: "/api/contributions/github", requests: authzOne(http.StatusCreated, authzDelivery),
		signed: &authzSigned{sign: authzSignDelivery, secret: webhookSecret, unsigned: http.StatusUnauthorized, forged: http.StatusUnauthorized,
			note: "`X-Hub-Signature-256` under `FOUNDRY_GITHUB_WEBHOOK_SECRET`; with no secret every delivery is 401 unless unsigned ones are allowed"}},
	{method: http.MethodPost, path: "/api/webhooks/impact", requests: authzOne(http.StatusCreated, func(c *authzCell) any {
		return fmt.Appendf(nil, `{"idea_id":%q,"quantity":1,"unit":"requests","evidence":"matrix","reference":%q}`, c.id("idea"), c.f.next("hook"))
	}), signed: &authzSigned{sign: authzSignDelivery, secret: impactSecret, unsigned: http.StatusUnauthorized, forged: http.StatusUnauthorized,
		note: "`X-Hub-Signature-256` under `FOUNDRY_IMPACT_WEBHOOK_SECRET`; with no secret every delivery is 401"}},
	{method: http.MethodGet, path: "/api/contributions/{id}", params: map[string]string{"id": "contribution"}, requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/contributions/{id}/review", params: map[string]string{"id": "claim"},
		requests: authzOne(http.StatusOK, authzFixed(map[string]any{"verdict": "accept", "reason": "matrix"})),
		fresh: func(t *testing.T, c *authzCell) {
			r := request(t, http.MethodPost, c.f.sys.URL("/api/contributions"), map[string]any{"contributor_id": c.id("self"),
				"asset_id": c.id("asset"), "cost_amount": 1}, c.f.creds["self"])
			requireStatus(t, http.StatusCreated, r)
			c.fresh["claim"] = r.JSON["id"].(string)
		}},
	{method: http.MethodGet, path: "/api/contributions", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/contributors", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/contributors/{contributor_id}/contributions", params: map[string]string{"contributor_id": "self"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/distributions", requests: []authzRequest{
		{what: "with `pay_cc: true`", ok: http.StatusCreated, body: func(c *authzCell) any {
			return map[string]any{"asset_id": c.id("asset"), "value_amount": 1, "pay_cc": true}
		}},
		{what: "without `pay_cc`", ok: http.StatusCreated, body: func(c *authzCell) any {
			return map[string]any{"asset_id": c.id("asset"), "value_amount": 1}
		}},
	}},
	{method: http.MethodGet, path: "/api/distributions/{id}", params: map[string]string{"id": "distribution"}, requests: authzOne(http.StatusOK, nil)},

	// Ledger: the credit economy.
	{method: http.MethodGet, path: "/api/audit", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/audit/checkpoint", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/audit/consistency", requests: []authzRequest{{ok: http.StatusOK, query: "from=1"}}},
	{method: http.MethodGet, path: "/api/audit/key-changes", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/audit/entries/{seq}/proof", params: map[string]string{"seq": "audit-seq"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/audit/repair", requests: authzOne(http.StatusOK, authzFixed(map[string]any{}))},
	{method: http.MethodGet, path: "/api/audit/verifier-key", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/audit/verify", requests: []authzRequest{
		{ok: http.StatusOK},
		{what: "with `?full=true`", ok: http.StatusOK, query: "full=true"},
	}},
	{method: http.MethodGet, path: "/api/cc/balances/{contributor_id}", params: map[string]string{"contributor_id": "self"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/cc/deposit", requests: authzOne(http.StatusCreated, func(c *authzCell) any {
		return map[string]any{"contributor_id": c.id("self"), "amount_usd": 1, "reference": c.f.next("deposit")}
	})},
	{method: http.MethodGet, path: "/api/cc/exchange-rate", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/cc/oracle/readings", requests: authzOne(http.StatusOK, authzFixed(map[string]any{"cc_per_usd": 100}))},
	{method: http.MethodPost, path: "/api/cc/stake", requests: authzStakeRequests(true)},
	{method: http.MethodGet, path: "/api/cc/supply", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/cc/supply/history", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/cc/unstake", requests: authzOne(http.StatusOK, func(c *authzCell) any {
		return map[string]any{"contributor_id": c.id("self"), "idea_id": c.id("idea"), "amount_cc": 1}
	})},
	{method: http.MethodPost, path: "/api/cc/withdraw", requests: authzOne(http.StatusOK, func(c *authzCell) any {
		return map[string]any{"contributor_id": c.id("self"), "amount_cc": 1}
	})},
	{method: http.MethodGet, path: "/api/contributors/{id}/investment-history", params: map[string]string{"id": "self"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/contributors/{id}/investments", params: map[string]string{"id": "self"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/contributors/{id}/pledges", params: map[string]string{"id": "self"},
		requests: authzOne(http.StatusCreated, func(c *authzCell) any { return map[string]any{"idea_id": c.id("idea"), "hours_pledged": 1} })},
	{method: http.MethodGet, path: "/api/ideas/{idea_id}/impact", params: map[string]string{"idea_id": "idea"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/ideas/{idea_id}/impact", params: map[string]string{"idea_id": "idea"},
		requests: []authzRequest{
			{what: "`kind: usage`", ok: http.StatusCreated, body: func(c *authzCell) any {
				return map[string]any{"kind": "usage", "quantity": 1, "unit": "requests", "evidence": "matrix", "reference": c.f.next("usage")}
			}},
			{what: "`kind: revenue`", ok: http.StatusCreated, body: func(c *authzCell) any {
				return map[string]any{"kind": "revenue", "amount_usd": 1, "evidence": "matrix", "reference": c.f.next("revenue")}
			}},
		}},
	{method: http.MethodGet, path: "/api/ideas/{idea_id}/invest-preview", params: map[string]string{"idea_id": "idea"},
		requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/ideas/{idea_id}/stake", params: map[string]string{"idea_id": "idea"},
		requests: authzStakeRequests(false)},

	// Ledger: incidents.
	{method: http.MethodGet, path: "/api/incidents", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/incidents/freeze", requests: authzOne(http.StatusOK, authzFreezeBody),
		signed: &authzSigned{sign: authzSignFreeze, secret: authzSignerSecret, unsigned: http.StatusUnprocessableEntity, forged: http.StatusForbidden,
			note: "`signature` = HMAC-SHA256 of the signer, `issued_at`, `nonce` and `reason` under a `FOUNDRY_SIGNERS` secret " +
				"([ledger.md](ledger.md#emergency-freeze-and-the-economys-modes)); an `issued_at` more than 5 minutes off " +
				"or a reused `nonce` is 403; no signature is a missing field (422)"},
		restore: authzEnsureUnfrozen},
	{method: http.MethodGet, path: "/api/incidents/status", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/incidents/unfreeze", requests: authzOne(http.StatusOK, authzFixed(map[string]any{})),
		prepare: authzEnsureFrozen, restore: authzEnsureUnfrozen},

	// Ledger: onboarding and credentials.
	{method: http.MethodPost, path: "/api/onboarding/register",
		requests: authzOne(http.StatusCreated, func(c *authzCell) any { return map[string]any{"handle": c.f.next("matrix")} })},
	{method: http.MethodGet, path: "/api/onboarding/session", requests: authzOne(http.StatusOK, nil, authzRuleSessionOnly)},
	{method: http.MethodPost, path: "/api/onboarding/upgrade", requests: authzOne(http.StatusNotImplemented, nil), note: "always 501"},
	{method: http.MethodPost, path: "/api/onboarding/logout", requests: authzOne(http.StatusOK, nil, authzRuleSessionOnly), last: true,
		note: "revokes the session (the matrix sends it last)"},
	{method: http.MethodGet, path: "/api/whoami", requests: authzOne(http.StatusOK, nil, authzRuleVerified)},
	{method: http.MethodPost, path: "/api/tokens", requests: authzOne(http.StatusCreated, func(c *authzCell) any {
		return map[string]any{"name": c.f.next("matrix"), "role": "viewer"}
	})},
	{method: http.MethodGet, path: "/api/tokens", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodDelete, path: "/api/tokens/{id}", params: map[string]string{"id": "token"}, requests: authzOne(http.StatusOK, nil),
		fresh: func(t *testing.T, c *authzCell) {
			c.fresh["token"] = authzCreateToken(t, c.f.sys, c.f.next("doomed"), "viewer").ID
		}},

	// Gateway: documents.
	{method: http.MethodGet, path: "/api/docs", requests: authzOne(http.StatusMovedPermanently, nil), note: "redirects to `/api/docs/`"},
	{method: http.MethodGet, path: "/api/docs/", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/openapi.json", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/openapi-v2.json", requests: authzOne(http.StatusOK, nil)},

	// Ops.
	{method: http.MethodGet, path: "/api/automation/usage", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/automation/usage/snapshots", requests: authzOne(http.StatusCreated,
		authzFixed(map[string]any{"provider": "openai", "metrics": []any{map[string]any{"name": "requests", "value": 1}}}))},
	{method: http.MethodGet, path: "/api/graph/edges", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/graph/edges", requests: authzOne(http.StatusCreated, func(c *authzCell) any {
		return map[string]any{"edge_type": c.f.next("matrix"), "from_node_id": c.id("node"), "to_node_id": c.id("other-node")}
	})},
	{method: http.MethodPost, path: "/api/graph/nodes", requests: authzOne(http.StatusCreated, authzFixed(map[string]any{"node_type": "matrix", "payload": map[string]any{}}))},
	{method: http.MethodGet, path: "/api/graph/nodes/{node_id}", params: map[string]string{"node_id": "node"}, requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/graph/nodes/{node_id}/edges", params: map[string]string{"node_id": "node"}, requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/health/coherence", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/health/persistence", requests: authzOne(http.StatusOK, nil), adminSees: "targets_shown",
		note: "the administrator also sees where each database lives (`targets_shown: true`)"},
	{method: http.MethodGet, path: "/api/ready", requests: authzOne(http.StatusOK, nil)},

	// Portfolio.
	{method: http.MethodGet, path: "/api/ideas", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/ideas", requests: []authzRequest{
		{ok: http.StatusCreated, body: func(c *authzCell) any { return map[string]any{"name": c.f.next("Matrix probe")} }},
		{what: "with a `stage`", ok: http.StatusCreated, rules: []authzRule{authzRuleNoStage},
			body: func(c *authzCell) any { return map[string]any{"name": c.f.next("Matrix probe"), "stage": "specced"} }},
	}},
	{method: http.MethodGet, path: "/api/ideas/progress", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/ideas/right-sizing", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/ideas/right-sizing/apply", requests: []authzRequest{
		{what: "as a dry run (the default)", ok: http.StatusOK, body: func(c *authzCell) any { return authzSplit(c, nil) }},
		{what: "with `dry_run: false`", ok: http.StatusOK, body: func(c *authzCell) any { return authzSplit(c, false) }},
	}, fresh: func(t *testing.T, c *authzCell) { c.fresh["split-idea"] = creditIdea(t, c.f.sys, c.f.next("Split me")) }},
	{method: http.MethodGet, path: "/api/ideas/right-sizing/history", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/ideas/stage-times", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/ideas/storage", requests: authzOne(http.StatusOK, nil), adminSees: "targets_shown",
		note: "the administrator also sees where the database lives (`targets_shown: true`)"},
	{method: http.MethodGet, path: "/api/ideas/tags", requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/ideas/{idea_id}/advance", params: map[string]string{"idea_id": "fresh-idea"},
		requests: authzOne(http.StatusOK, nil), fresh: authzFreshIdea},
	{method: http.MethodPost, path: "/api/ideas/{idea_id}/stage", params: map[string]string{"idea_id": "fresh-idea"},
		requests: authzOne(http.StatusOK, authzFixed(map[string]any{"stage": "testing"})), fresh: authzFreshIdea},
	{method: http.MethodGet, path: "/api/ideas/{id}", params: map[string]string{"id": "idea"}, requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/ideas/{id}/stages", params: map[string]string{"id": "idea"}, requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodGet, path: "/api/ideas/{id}/revisions", params: map[string]string{"id": "idea"}, requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPatch, path: "/api/ideas/{id}", params: map[string]string{"id": "self-idea"}, requests: []authzRequest{
		{ok: http.StatusOK, body: authzFixed(map[string]any{"description": "edited by the matrix"}), rules: []authzRule{authzRuleIdeaCreator}},
		{what: "with a `stage`", ok: http.StatusOK, body: authzFixed(map[string]any{"stage": "specced"}), rules: []authzRule{authzRuleIdeaCreator, authzRuleNoStage}},
		{what: "with values, while the idea awaits review", ok: http.StatusOK,
			body: authzFixed(map[string]any{"potential_value": 1e9, "confidence": 1, "estimated_cost": 0}), rules: []authzRule{authzRuleIdeaCreator}},
		{what: "with a `manifestation_status`", ok: http.StatusOK, body: authzFixed(map[string]any{"manifestation_status": "partial"}),
			rules: []authzRule{authzRuleIdeaCreator, authzRuleOperatorsJudge}},
		// pending, so that the fixture stays a contributor's idea awaiting
		// review for the cells after this one.
		{what: "with a `review_status`", ok: http.StatusOK, body: authzFixed(map[string]any{"review_status": "pending"}),
			rules: []authzRule{authzRuleIdeaCreator, authzRuleOperatorsJudge}},
	}},
	{method: http.MethodGet, path: "/api/ideas/{id}/questions", params: map[string]string{"id": "self-idea"}, requests: authzOne(http.StatusOK, nil)},
	{method: http.MethodPost, path: "/api/ideas/{id}/questions", params: map[string]string{"id": "self-idea"},
		requests: authzOne(http.StatusCreated, authzFixed(map[string]any{"question": "Who may do what?"}))},
	{method: http.MethodPut, path: "/api/ideas/{id}/tags", params: map[string]string{"id": "self-idea"},
		requests: authzOne(http.StatusOK, authzFixed(map[string]any{"tags": []string{"matrix"}}), authzRuleIdeaCreator)},
}

// authzGatewayRoutes are the routes the gateway's mux serves itself, with
// the RPC each calls ("" for the gateway's own pages, which call none and
// need no credential).
var authzGatewayRoutes = map[string]string{
	"GET /":                          "",
	"GET /ui/":                       "",
	"GET /api/docs":                  "",
	"GET /api/docs/":                 "",
	"GET /api/openapi.json":          "",
	"GET /api/openapi-v2.json":       "",
	"GET /api/ready":                 "foundry.ops.v1.OpsService.Ready",
	"POST /api/contributions/github": "foundry.ledger.v1.LedgerService.RecordGithubDelivery",
	"POST /api/webhooks/impact":      "foundry.ledger.v1.LedgerService.RecordImpactDelivery",
	"GET /api/audit/checkpoint":      "foundry.ledger.v1.LedgerService.GetAuditCheckpoint",
	"GET /api/audit/verifier-key":    "foundry.ledger.v1.LedgerService.GetAuditVerifierKey",
}

// authzStakeRequests are a stake's two requests: a real one (the contributor's
// own) and a dry run (a read). The /api/cc/stake form names the idea in the
// body, the /api/ideas/{idea_id}/stake form in the path.
func authzStakeRequests(ideaInBody bool) []authzRequest {
	body := func(dryRun bool) func(c *authzCell) any {
		return func(c *authzCell) any {
			b := map[string]any{"contributor_id": c.id("self"), "amount_cc": 1}
			if ideaInBody {
				b["idea_id"] = c.id("idea")
			}
			if dryRun {
				b["dry_run"] = true
			}
			return b
		}
	}
	return []authzRequest{
		{ok: http.StatusCreated, body: body(false)},
		{what: "with `dry_run: true`", ok: http.StatusOK, body: body(true)},
	}
}

// authzDelivery is a shaped push delivery, a new commit each time.
func authzDelivery(c *authzCell) any {
	return fmt.Appendf(nil, `{"contributor_email":"matrix@example.com","repository":"matrix/probe","commit_hash":"%040x","cost_amount":1}`,
		c.f.seq())
}

// authzSignDelivery signs a delivery in X-Hub-Signature-256 ("" leaves it
// unsigned).
func authzSignDelivery(body any, secret string) (any, []string) {
	if secret == "" {
		return body, nil
	}
	return body, []string{"X-Hub-Signature-256: " + sign256(secret, body.([]byte))}
}

const authzFreezeReason = "the matrix probes the freeze"

func authzFreezeBody(*authzCell) any {
	return map[string]any{"signer_id": authzSigner, "reason": authzFreezeReason}
}

// authzSignFreeze signs the freeze's signer and reason with secret, issued
// now with a new nonce, so that no request of the matrix is a replay of
// another (403); "" leaves the signature out, and only it.
func authzSignFreeze(body any, secret string) (any, []string) {
	b := body.(map[string]any)
	signed := signedFreeze(secret, b["signer_id"].(string), b["reason"].(string))
	if secret == "" {
		delete(signed, "signature")
	}
	return signed, nil
}

// frozen reports whether the economy is frozen.
func authzFrozen(t *testing.T, f *authzFixture) bool {
	t.Helper()
	r := request(t, http.MethodGet, f.sys.URL("/api/incidents/status"), nil)
	requireStatus(t, http.StatusOK, r)
	return r.JSON["frozen"] == true
}

func authzEnsureFrozen(t *testing.T, f *authzFixture) {
	t.Helper()
	if !authzFrozen(t, f) {
		body, _ := authzSignFreeze(authzFreezeBody(nil), authzSignerSecret)
		requireStatus(t, http.StatusOK, request(t, http.MethodPost, f.sys.URL("/api/incidents/freeze"), body))
	}
}

func authzEnsureUnfrozen(t *testing.T, f *authzFixture) {
	t.Helper()
	if authzFrozen(t, f) {
		requireStatus(t, http.StatusOK, request(t, http.MethodPost, f.sys.URL("/api/incidents/unfreeze"), map[string]any{}, adminHeader))
	}
}

// authzSplit splits the cell's idea into one named child; dryRun nil
// leaves dry_run out (a dry run, the default).
func authzSplit(c *authzCell, dryRun any) map[string]any {
	b := map[string]any{"suggestion_type": "split", "idea_id": c.id("split-idea"),
		"proposed_children": []any{map[string]any{"name": "Matrix part"}}}
	if dryRun != nil {
		b["dry_run"] = dryRun
	}
	return b
}

// authzFreshIdea is an idea for one cell to move.
func authzFreshIdea(t *testing.T, c *authzCell) {
	c.fresh["fresh-idea"] = creditIdea(t, c.f.sys, c.f.next("Move me"))
}

// authzToken is an API token POST /api/tokens issued.
type authzToken struct{ ID, Token string }

func (k authzToken) auth() string { return "Authorization: Bearer " + k.Token }

// authzCreateToken issues an API token for role with the administrator key.
func authzCreateToken(t *testing.T, sys *allinonetest.System, name, role string) authzToken {
	t.Helper()
	r := request(t, http.MethodPost, sys.URL("/api/tokens"), map[string]any{"name": name, "role": role}, adminHeader)
	requireStatus(t, http.StatusCreated, r)
	tok, _ := r.JSON["api_token"].(map[string]any)
	require.NotNil(t, tok, "body: %s", r.Raw)
	return authzToken{ID: tok["id"].(string), Token: r.JSON["token"].(string)}
}

// authzFixture is what the routes act on and who calls them: two
// contributors (self, with CC staked and an idea of its own, and other),
// API tokens for a viewer, two workers (one of which claimed the task) and
// an operator, the administrator key, a revoked token, an expired session,
// and a resource of every kind.
type authzFixture struct {
	// sys is nil when the fixture only renders the docs: the ids are then
	// placeholders.
	sys *allinonetest.System
	// ids are the resources path parameters and bodies name, by name.
	ids map[string]string
	// creds are the principals' credential headers, by column.
	creds map[string]string
	// selfHandle is self's handle, which a refusal must not show.
	selfHandle string
	n          int
}

// seq counts up, so that each write is a new one.
func (f *authzFixture) seq() int {
	f.n++
	return f.n
}

func (f *authzFixture) next(prefix string) string { return fmt.Sprintf("%s-%d", prefix, f.seq()) }

// authzCell is one request's context: the fixture and the resources made
// for it.
type authzCell struct {
	f     *authzFixture
	fresh map[string]string
}

// id is the resource called name.
func (c *authzCell) id(name string) string {
	if id, ok := c.fresh[name]; ok {
		return id
	}
	if id, ok := c.f.ids[name]; ok {
		return id
	}
	if c.f.sys == nil {
		return "<" + name + ">"
	}
	panic(fmt.Sprintf("the matrix's fixture has no resource %q", name))
}

// authzDocsFixture stands for the fixture when only the docs are rendered.
func authzDocsFixture() *authzFixture {
	return &authzFixture{ids: map[string]string{}, creds: map[string]string{}}
}

// authzSessionTTL is the session lifetime of the system that registers the
// expired session: over before any request uses it.
const authzSessionTTL = time.Millisecond

// newAuthzFixture starts the matrix's system on a fresh storage of engine
// and makes the fixture. The expired session comes from a first run of the
// system with a session lifetime of a millisecond, stopped before the
// matrix's own (default lifetime) starts on the same storage: every other
// session lives, and nothing waits.
func newAuthzFixture(t *testing.T, engine database.Engine, flags []string) *authzFixture {
	t.Helper()
	storage := allinonetest.NewStorage(t, engine)
	first := allinonetest.Start(t, storage, "-session-ttl="+authzSessionTTL.String())
	expired := creditRegister(t, first, "matrix_expired")
	first.Stop()
	sys := allinonetest.Start(t, storage, flags...)

	f := &authzFixture{sys: sys, ids: map[string]string{}, creds: map[string]string{}, selfHandle: "matrix_self"}
	self := creditRegister(t, sys, f.selfHandle)
	other := creditRegister(t, sys, "matrix_other")
	f.ids["self"], f.ids["other"] = self.ID, other.ID
	tokens := map[string]authzToken{}
	for column, role := range map[string]string{"viewer": "viewer", "claimer": "worker", "worker": "worker", "operator": "operator", "revoked": "admin"} {
		tokens[column] = authzCreateToken(t, sys, "matrix-"+column, role)
	}
	requireStatus(t, http.StatusOK, request(t, http.MethodDelete, sys.URL("/api/tokens/"+tokens["revoked"].ID), nil, adminHeader))
	f.creds = map[string]string{
		"none": anonymous, "viewer": tokens["viewer"].auth(), "self": self.auth(), "other": other.auth(),
		"claimer": tokens["claimer"].auth(), "worker": tokens["worker"].auth(), "operator": tokens["operator"].auth(),
		"admin": adminHeader, "revoked": tokens["revoked"].auth(), "expired": expired.auth(),
	}
	// Each principal is who the matrix says it is.
	for _, p := range authzPrincipals {
		r := request(t, http.MethodGet, sys.URL("/api/whoami"), nil, f.creds[p.column])
		if p.kind == authz.Invalid {
			requireStatus(t, http.StatusUnauthorized, r)
			require.Equal(t, p.reason, r.JSON["detail"], "%s: %s", p.column, r.Raw)
			continue
		}
		requireStatus(t, http.StatusOK, r)
		require.Equal(t, string(p.kind), r.JSON["kind"], "%s: %s", p.column, r.Raw)
		require.Equal(t, authz.RoleName(p.role), r.JSON["role"], "%s: %s", p.column, r.Raw)
	}

	f.ids["idea"] = creditIdea(t, sys, "Matrix idea")
	r := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"name": "Self's idea"}, self.auth())
	requireStatus(t, http.StatusCreated, r)
	f.ids["self-idea"] = r.JSON["id"].(string)
	requireStatus(t, http.StatusCreated, creditDeposit(t, sys, self.ID, 100, "matrix-setup"))
	requireStatus(t, http.StatusCreated, request(t, http.MethodPost, sys.URL("/api/cc/stake"),
		map[string]any{"contributor_id": self.ID, "idea_id": f.ids["idea"], "amount_cc": 50}, self.auth()))

	f.ids["asset"] = ledgerAsset(t, sys, "CODE")["id"].(string)
	c := ledgerContribute(t, sys, map[string]any{"contributor_id": self.ID, "asset_id": f.ids["asset"], "cost_amount": 2})
	requireStatus(t, http.StatusCreated, c)
	f.ids["contribution"] = c.JSON["id"].(string)
	d := request(t, http.MethodPost, sys.URL("/api/distributions"), map[string]any{"asset_id": f.ids["asset"], "value_amount": 10})
	requireStatus(t, http.StatusCreated, d)
	f.ids["distribution"] = d.JSON["id"].(string)

	// The claimer's task: the only one of its type, claimed for a day.
	f.ids["task"] = createAgentTask(t, sys, map[string]any{"direction": "set up the matrix", "task_type": "review"})["id"].(string)
	setup := request(t, http.MethodPost, sys.URL("/api/agent/prompts"), map[string]any{"name": "matrix-fixture", "task_type": "deploy",
		"text": "Deploy {{direction}}"})
	requireStatus(t, http.StatusCreated, setup)
	f.ids["prompt"] = "matrix-fixture"
	claim := request(t, http.MethodPost, sys.URL("/api/agent/tasks/claim"),
		map[string]any{"worker_id": "matrix-claimer", "task_types": []string{"review"}, "lease_seconds": 86400}, f.creds["claimer"])
	requireStatus(t, http.StatusOK, claim)
	task, _ := claim.JSON["task"].(map[string]any)
	require.NotNil(t, task, "the claimer claimed a task: %s", claim.Raw)
	require.Equal(t, f.ids["task"], task["id"], "the claimer claimed the matrix's task")

	f.ids["node"] = mustNode(t, sys, "matrix", "node-a")
	f.ids["other-node"] = mustNode(t, sys, "matrix", "node-b")
	// The audit entry every proof is asked for: the setup deposit's,
	// sequenced.
	waitSequenced(t, sys)
	f.ids["audit-seq"] = "1"
	return f
}

// authzRow is one row of the matrix: a request of a route, the RPC behind
// it and that RPC's policy.
type authzRow struct {
	route *authzRoute
	req   authzRequest
	// selector is the RPC ("foundry.ledger.v1.LedgerService.Stake"); "" for
	// the gateway's own pages.
	selector string
	policy   *authzv1.Policy
	// documented is whether the OpenAPI document lists the route.
	documented bool
}

func (r authzRow) name() string {
	if r.req.what == "" {
		return r.route.key()
	}
	return r.route.key() + " " + r.req.what
}

// pathParam is a parameter of a route's path template.
var pathParam = regexp.MustCompile(`\{[a-z_]+\}`)

// params are the row's path parameters' values in c.
func (r authzRow) params(t *testing.T, c *authzCell) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, p := range pathParam.FindAllString(r.route.path, -1) {
		name := strings.Trim(p, "{}")
		resource, ok := r.route.params[name]
		require.True(t, ok, "%s: no resource for %s", r.route.key(), p)
		out[name] = c.id(resource)
	}
	return out
}

func (r authzRow) body(c *authzCell) any {
	if r.req.body == nil {
		return nil
	}
	return r.req.body(c)
}

// message is the request as the RPC receives it: the body, the path
// parameters and the query, in the method's request message.
func (r authzRow) message(t *testing.T, body any, params map[string]string) proto.Message {
	t.Helper()
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(r.selector))
	require.NoError(t, err, "%s: find %s", r.name(), r.selector)
	md, ok := d.(protoreflect.MethodDescriptor)
	require.True(t, ok, "%s is no method", r.selector)
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
	require.NoError(t, err)
	msg := mt.New().Interface()
	if body != nil {
		if _, raw := body.([]byte); !raw { // a raw body (the webhook's) is a field of its own
			b, err := json.Marshal(body)
			require.NoError(t, err)
			require.NoError(t, protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(b, msg), "%s: the body as %s", r.name(), md.Input().FullName())
		}
	}
	for name, value := range params {
		authzSetField(t, r, msg, name, value)
	}
	query, err := url.ParseQuery(r.req.query)
	require.NoError(t, err, "%s: query %q", r.name(), r.req.query)
	for name, values := range query {
		require.Len(t, values, 1, "%s: query parameter %s", r.name(), name)
		authzSetField(t, r, msg, name, values[0])
	}
	return msg
}

// authzSetField sets the field name of msg to value, as the gateway reads
// a path or query parameter: a string, a number or a boolean. A number
// the docs' fixture only names ("<audit-seq>") is left unset: no policy
// depends on one.
func authzSetField(t *testing.T, r authzRow, msg proto.Message, name, value string) {
	t.Helper()
	fd := msg.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(name))
	require.NotNil(t, fd, "%s: %s is no field of %s", r.name(), name, msg.ProtoReflect().Descriptor().FullName())
	var v protoreflect.Value
	switch fd.Kind() {
	case protoreflect.StringKind:
		v = protoreflect.ValueOfString(value)
	case protoreflect.BoolKind:
		b, err := strconv.ParseBool(value)
		require.NoError(t, err, "%s: %s=%q", r.name(), name, value)
		v = protoreflect.ValueOfBool(b)
	case protoreflect.Int32Kind:
		if strings.HasPrefix(value, "<") {
			return
		}
		n, err := strconv.ParseInt(value, 10, 32)
		require.NoError(t, err, "%s: %s=%q", r.name(), name, value)
		v = protoreflect.ValueOfInt32(int32(n))
	case protoreflect.Int64Kind:
		if strings.HasPrefix(value, "<") {
			return
		}
		n, err := strconv.ParseInt(value, 10, 64)
		require.NoError(t, err, "%s: %s=%q", r.name(), name, value)
		v = protoreflect.ValueOfInt64(n)
	default:
		t.Fatalf("%s: %s is a %s field, which the matrix does not fill", r.name(), name, fd.Kind())
	}
	msg.ProtoReflect().Set(fd, v)
}

// allowed is the roles the row's request needs: the policy's, with its
// conditions applied to the request.
func (r authzRow) allowed(t *testing.T, c *authzCell) ([]authz.Role, proto.Message) {
	t.Helper()
	if r.policy == nil {
		return []authz.Role{authz.Public}, nil
	}
	msg := r.message(t, r.body(c), r.params(t, c))
	return authz.Allowed(r.policy, msg), msg
}

// expect is the status p must get, from the policy as docs/api.md states
// it and the route's own rules: a public request serves anyone; a
// credential that does not verify is a 401, and no credential is one where
// the request needs more than a viewer (reads are public); a valid
// credential without an allowed role is a 403, and so is a contributor
// naming another contributor in the policy's self field.
func (r authzRow) expect(t *testing.T, c *authzCell, p authzPrincipal) int {
	t.Helper()
	allow, msg := r.allowed(t, c)
	if !slices.Contains(allow, authz.Public) {
		switch {
		case p.kind == authz.Invalid:
			return http.StatusUnauthorized
		case p.kind == authz.Anonymous:
			if !authzPublicReads || !slices.Contains(allow, authz.Viewer) {
				return http.StatusUnauthorized
			}
		case !slices.ContainsFunc(allow, func(want authz.Role) bool { return authz.Includes(p.role, want) }):
			return http.StatusForbidden
		case p.role == authz.Contributor && r.policy.GetSelf() != "":
			fd := msg.ProtoReflect().Descriptor().Fields().ByName(protoreflect.Name(r.policy.GetSelf()))
			require.NotNil(t, fd, "%s: the policy's self field %q", r.name(), r.policy.GetSelf())
			if named := msg.ProtoReflect().Get(fd).String(); named != "" && named != c.id(p.contributor) {
				return http.StatusForbidden
			}
		}
	}
	for _, rule := range r.req.rules {
		if s := rule.status(p); s != 0 {
			return s
		}
	}
	return r.req.ok
}

// roles describes what the row's request needs, for the docs.
func (r authzRow) roles(t *testing.T, c *authzCell) string {
	t.Helper()
	if r.policy == nil {
		return "public (no RPC)"
	}
	allow, _ := r.allowed(t, c)
	names := make([]string, len(allow))
	for i, role := range allow {
		names[i] = authz.RoleName(role)
		if role == authz.Contributor && r.policy.GetSelf() != "" {
			names[i] += " (own `" + r.policy.GetSelf() + "`)"
		}
	}
	return strings.Join(names, " or ")
}

// repoRoot is the repository's root, seen from this package's directory
// (where go test runs).
var repoRoot = ".."

// authzAPIYAMLRoutes reads the REST mapping (gateway/api.yaml): each route
// ("METHOD /path") with the selector of its RPC, additional bindings
// included.
func authzAPIYAMLRoutes(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "gateway", "api.yaml"))
	require.NoError(t, err)
	selector := regexp.MustCompile(`^\s*-?\s*selector:\s*(\S+)\s*$`)
	binding := regexp.MustCompile(`^\s*-?\s*(get|post|put|patch|delete):\s*"?([^"\s]+)"?\s*$`)
	out := map[string]string{}
	current := ""
	for line := range strings.SplitSeq(string(raw), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if m := selector.FindStringSubmatch(line); m != nil {
			current = m[1]
			continue
		}
		if m := binding.FindStringSubmatch(line); m != nil {
			require.NotEmpty(t, current, "gateway/api.yaml: %q before any selector", line)
			key := strings.ToUpper(m[1]) + " " + m[2]
			require.NotContains(t, out, key, "gateway/api.yaml maps %s twice", key)
			out[key] = current
		}
	}
	require.NotEmpty(t, out, "gateway/api.yaml maps routes")
	return out
}

// authzServedDocumentRoutes are the routes ("METHOD /path") of the OpenAPI
// document the gateway serves: the generated ones and those the gateway
// serves by hand and documents itself.
func authzServedDocumentRoutes(t *testing.T) map[string]bool {
	t.Helper()
	raw, err := gateway.OpenAPI()
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	out := map[string]bool{}
	for path, item := range doc.Paths {
		for m := range item {
			out[strings.ToUpper(m)+" "+path] = true
		}
	}
	return out
}

// authzOpenAPIRoutes reads the OpenAPI document generated from the protos
// and gateway/api.yaml and returns its routes ("METHOD /path") with their
// operation ids.
func authzOpenAPIRoutes(t *testing.T) map[string]string {
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
				OperationID string `json:"operationId"`
			}
			require.NoError(t, json.Unmarshal(op, &o))
			out[method+" "+path] = o.OperationID
		}
	}
	require.NotEmpty(t, out, "the OpenAPI document lists routes")
	return out
}

// authzGatewayMux returns the routes the gateway's mux serves itself
// ("METHOD /path"), read from its source: a pattern with a method is a
// route; the two without one are the generated /api/ mux (the OpenAPI
// document's routes) and the JSON 404 for everything else.
func authzGatewayMux(t *testing.T) []string {
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

// authzOperationID is the OpenAPI operation id protoc-gen-openapiv2 gives a
// selector's RPC ("LedgerService_Stake"; an additional binding adds a
// number).
func authzOperationID(selector string) string {
	parts := strings.Split(selector, ".")
	if len(parts) < 2 {
		return selector
	}
	return parts[len(parts)-2] + "_" + parts[len(parts)-1]
}

// authzFullMethod is a selector as gRPC names the method
// ("/foundry.ledger.v1.LedgerService/Stake").
func authzFullMethod(selector string) string {
	i := strings.LastIndex(selector, ".")
	return "/" + selector[:i] + "/" + selector[i+1:]
}

// authzRows maps every served route to its RPC and policy and returns the
// matrix's rows, in the docs' order, with what does not map.
func authzRows(t *testing.T) (rows []authzRow, problems []string) {
	t.Helper()
	policies, err := authz.Policies()
	require.NoError(t, err, "every RPC declares a policy")
	mapped := authzAPIYAMLRoutes(t)
	documented := authzOpenAPIRoutes(t)
	servedDoc := authzServedDocumentRoutes(t)

	served := map[string]string{}
	for key, selector := range mapped {
		served[key] = selector
	}
	for key, op := range documented {
		selector, ok := mapped[key]
		switch {
		case !ok:
			problems = append(problems, key+" is in the OpenAPI document but not in gateway/api.yaml")
		case strings.TrimRight(op, "0123456789") != authzOperationID(selector):
			problems = append(problems, fmt.Sprintf("%s is %s in the OpenAPI document but %s in gateway/api.yaml", key, op, selector))
		}
	}
	for _, key := range authzGatewayMux(t) {
		selector, known := authzGatewayRoutes[key]
		switch {
		case !known:
			problems = append(problems, key+" is served by the gateway itself but maps to no RPC: add it to authzGatewayRoutes (authz_test.go)")
			continue
		case mapped[key] != "" && mapped[key] != selector:
			problems = append(problems, fmt.Sprintf("%s calls %s in authzGatewayRoutes but %s in gateway/api.yaml", key, selector, mapped[key]))
		}
		served[key] = selector
	}
	for key := range authzGatewayRoutes {
		if _, ok := served[key]; !ok {
			problems = append(problems, key+" is in authzGatewayRoutes but the gateway does not serve it: remove it")
		}
	}

	routes := map[string]*authzRoute{}
	for _, rt := range authzRoutes {
		if _, dup := routes[rt.key()]; dup {
			problems = append(problems, rt.key()+" is in authzRoutes twice")
		}
		routes[rt.key()] = rt
		if _, ok := served[rt.key()]; !ok {
			problems = append(problems, rt.key()+" is in authzRoutes but not served (neither gateway/api.yaml nor the gateway's mux): remove it")
		}
	}
	for key, selector := range served {
		rt, ok := routes[key]
		if !ok {
			problems = append(problems, key+" is served but the matrix does not call it: add it to authzRoutes (authz_test.go)")
			continue
		}
		var pol *authzv1.Policy
		if selector != "" {
			pol = policies[authzFullMethod(selector)]
			switch {
			case pol == nil:
				problems = append(problems, fmt.Sprintf("%s calls %s, which declares no role (foundry.authz.v1.policy)", key, selector))
				continue
			case slices.Contains(pol.GetAllow(), authz.Service):
				problems = append(problems, fmt.Sprintf("%s calls %s, an internal (service-only) RPC", key, selector))
				continue
			}
		}
		inDoc := servedDoc[key]
		for _, req := range rt.requests {
			rows = append(rows, authzRow{route: rt, req: req, selector: selector, policy: pol, documented: inDoc})
		}
	}
	slices.SortStableFunc(rows, func(a, b authzRow) int {
		if c := strings.Compare(a.route.path, b.route.path); c != 0 {
			return c
		}
		return strings.Compare(a.route.method, b.route.method)
	})
	slices.Sort(problems)
	return rows, problems
}

// The matrix in docs/api.md: where it is, its markers, and how a developer
// rewrites it.
var (
	authzDoc             = filepath.Join(repoRoot, "docs", "api.md")
	authzBegin, authzEnd = "<!-- authz-matrix:begin -->", "<!-- authz-matrix:end -->"
	authzUpdateCommand   = authzUpdateEnv + "=1 go test -count=1 -run 'TestAuthorizationMatrix/docs' ./e2e/"
)

// authzUpdateEnv set to 1 makes the test rewrite the matrix in docs/api.md
// instead of failing when it differs.
const authzUpdateEnv = "FOUNDRY_UPDATE_DOCS"

// authzRender is the Markdown table docs/api.md shows between the
// markers: per row, the RPC, the roles its policy allows and the status of
// each principal, computed against f.
func authzRender(t *testing.T, rows []authzRow, f *authzFixture) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("| Route | RPC | Roles |")
	sep := "|---|---|---|"
	for _, p := range authzPrincipals {
		b.WriteString(" " + p.column + " |")
		sep += "---|"
	}
	b.WriteString(" Notes |\n" + sep + "---|\n")
	for _, row := range rows {
		c := &authzCell{f: f, fresh: map[string]string{}}
		route := "`" + row.route.key() + "`"
		if row.req.what != "" {
			route += " " + row.req.what
		}
		rpc := "(gateway)"
		if row.selector != "" {
			rpc = "`" + row.selector[strings.LastIndex(row.selector[:strings.LastIndex(row.selector, ".")], ".")+1:] + "`"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |", route, rpc, row.roles(t, c))
		for _, p := range authzPrincipals {
			fmt.Fprintf(&b, " %d |", row.expect(t, c, p))
		}
		var notes []string
		for _, rule := range row.req.rules {
			notes = append(notes, rule.note)
		}
		if s := row.route.signed; s != nil {
			notes = append(notes, fmt.Sprintf("%s; unsigned %d, wrongly signed %d", s.note, s.unsigned, s.forged))
		}
		if row.route.note != "" {
			notes = append(notes, row.route.note)
		}
		if !row.documented {
			notes = append(notes, "served by the gateway itself (not in the OpenAPI document)")
		}
		fmt.Fprintf(&b, " %s |\n", strings.Join(notes, "; "))
	}
	return b.String()
}

// selfData is what a refusal must not show of self: the handle, the
// session token, the balances and the resources the request did not name.
func (f *authzFixture) selfData(t *testing.T) []string {
	t.Helper()
	token := strings.TrimPrefix(f.creds["self"], "Authorization: Bearer ")
	out := []string{f.selfHandle, token, f.ids["contribution"], f.ids["distribution"]}
	b := creditBalances(t, f.sys, f.ids["self"])
	for _, figure := range []float64{b.Available, b.Staked} {
		out = append(out, strconv.FormatFloat(figure, 'f', -1, 64))
	}
	return out
}

// state is what a refused request must leave as it was: the audit chain,
// the portfolio and self's idea's questions, the tasks and the claimed one,
// the assets, contributions and distributions, the economy and its
// incidents, self's positions and history, the graph and the API tokens.
func (f *authzFixture) state(t *testing.T) string {
	t.Helper()
	// A movement's audit entries reach the log (and investment history's
	// audit_seq) when the sequencer integrates them, after it committed:
	// the state is read once none waits, so what an earlier request wrote
	// is not taken for what a refused one did.
	waitSequenced(t, f.sys)
	var b strings.Builder
	for _, path := range []string{
		"/api/audit?limit=1", "/api/ideas?limit=500", "/api/ideas/" + f.ids["self-idea"] + "/questions",
		"/api/agent/tasks/count", "/api/agent/tasks/" + f.ids["task"], "/api/assets",
		"/api/assets/" + f.ids["asset"] + "/contributions", "/api/assets/" + f.ids["asset"] + "/distributions",
		"/api/cc/supply", "/api/incidents", "/api/contributors/" + f.ids["self"] + "/investments",
		"/api/contributors/" + f.ids["self"] + "/investment-history", "/api/graph/edges", "/api/tokens",
	} {
		r := request(t, http.MethodGet, f.sys.URL(path), nil, adminHeader)
		requireStatus(t, http.StatusOK, r)
		fmt.Fprintf(&b, "%s\n%s\n", path, r.Raw)
	}
	return b.String()
}

// send sends the row's request in c with credential; a signed route's
// request is signed with secret ("" for none).
func (f *authzFixture) send(t *testing.T, row authzRow, c *authzCell, credential, secret string) response {
	t.Helper()
	path := row.route.path
	for name, value := range row.params(t, c) {
		path = strings.ReplaceAll(path, "{"+name+"}", value)
	}
	if row.req.query != "" {
		path += "?" + row.req.query
	}
	body := row.body(c)
	headers := []string{credential}
	if s := row.route.signed; s != nil {
		var extra []string
		body, extra = s.sign(body, secret)
		headers = append(headers, extra...)
	}
	return request(t, row.route.method, f.sys.URL(path), body, headers...)
}

// authzRefusalProblems checks a refusal's body: the detail alone, showing
// nothing of self.
func authzRefusalProblems(r response, selfData []string) []string {
	var out []string
	if keys := keysOf(r.JSON); !slices.Equal(keys, []string{"detail"}) {
		out = append(out, fmt.Sprintf("a refusal carries its detail only, not %v: %s", keys, r.Raw))
	}
	if r.Header.Get("Content-Type") != "application/json" {
		out = append(out, "a refusal is JSON, not "+r.Header.Get("Content-Type"))
	}
	for _, d := range selfData {
		if d != "" && strings.Contains(string(r.Raw), d) {
			out = append(out, fmt.Sprintf("a refusal shows nothing of the contributor (%q): %s", d, r.Raw))
		}
	}
	return out
}

func authzRefused(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// authzCheckRow sends the row's request as every principal and checks each
// status against the expected one: first the refusals (and a signed
// route's unsigned and forged requests), which must write nothing, then
// each principal the route serves, on resources of its own.
func authzCheckRow(t *testing.T, f *authzFixture, row authzRow) {
	rt := row.route
	newCell := func() *authzCell {
		c := &authzCell{f: f, fresh: map[string]string{}}
		if rt.fresh != nil {
			rt.fresh(t, c)
		}
		return c
	}
	check := func(what string, want int, r response, selfData []string, reason string) {
		t.Helper()
		if r.Status != want {
			t.Errorf("%s as %s: want %d, got %d: %s", row.name(), what, want, r.Status, r.Raw)
			return
		}
		if want == http.StatusUnauthorized && reason != "" && r.JSON["detail"] != reason {
			t.Errorf("%s as %s: a 401 says why (%q): %s", row.name(), what, reason, r.Raw)
		}
		if selfData != nil {
			for _, problem := range authzRefusalProblems(r, selfData) {
				t.Errorf("%s as %s: %s", row.name(), what, problem)
			}
		}
	}

	c := newCell()
	var refusedBy, servedBy []authzPrincipal
	docs := &authzCell{f: authzDocsFixture(), fresh: map[string]string{}}
	for _, p := range authzPrincipals {
		// The statuses checked are the ones the docs show.
		require.Equal(t, row.expect(t, docs, p), row.expect(t, c, p), "%s as %s: the expected status depends on the fixture's ids", row.name(), p.what)
		if authzRefused(row.expect(t, c, p)) {
			refusedBy = append(refusedBy, p)
		} else {
			servedBy = append(servedBy, p)
		}
	}
	if len(refusedBy) > 0 || rt.signed != nil {
		if rt.prepare != nil {
			rt.prepare(t, f)
		}
		write := rt.method != http.MethodGet
		var before string
		if write {
			before = f.state(t)
		}
		data := f.selfData(t)
		for _, p := range refusedBy {
			check(p.what, row.expect(t, c, p), f.send(t, row, c, f.creds[p.column], rt.signedSecret()), data, p.reason)
		}
		if s := rt.signed; s != nil {
			for _, attempt := range []struct {
				what, secret string
				want         int
			}{{"an unsigned request", "", s.unsigned}, {"a wrongly signed request", wrongSecret, s.forged}} {
				var d []string
				if authzRefused(attempt.want) {
					d = data
				}
				check(attempt.what, attempt.want, f.send(t, row, c, anonymous, attempt.secret), d, "")
			}
		}
		if write {
			require.Equal(t, before, f.state(t), "%s: a refused request writes nothing", row.name())
		}
		if rt.restore != nil {
			rt.restore(t, f)
		}
	}
	for i, p := range servedBy {
		if i > 0 || len(refusedBy) > 0 || rt.signed != nil {
			c = newCell()
		}
		if rt.prepare != nil {
			rt.prepare(t, f)
		}
		want := row.expect(t, c, p)
		r := f.send(t, row, c, f.creds[p.column], rt.signedSecret())
		check(p.what, want, r, nil, p.reason)
		if r.Status == want && rt.adminSees != "" {
			if got := r.JSON[rt.adminSees]; got != (p.role == authz.Admin) {
				t.Errorf("%s as %s: %s is %v: only the administrator sees more", row.name(), p.what, rt.adminSees, got)
			}
		}
		if rt.restore != nil {
			rt.restore(t, f)
		}
	}
}

// signedSecret is the secret a signed route's requests are signed with.
func (r *authzRoute) signedSecret() string {
	if r.signed == nil {
		return ""
	}
	return r.signed.secret
}

// TestAuthorizationMatrix sends every route of the REST surface as every
// kind of caller, on every storage engine, and checks each status against
// the one its RPC's policy (and the route's own rules) call for: a refusal
// is a 401 or 403 that writes nothing and shows nothing but its detail; a
// caller the route serves succeeds. docs/api.md shows the same matrix.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	rows, problems := authzRows(t)

	t.Run("every route maps to a policy", func(t *testing.T) {
		if len(problems) > 0 {
			t.Fatalf("routes and policies disagree:\n  %s", strings.Join(problems, "\n  "))
		}
	})

	t.Run("docs", func(t *testing.T) {
		raw, err := os.ReadFile(authzDoc)
		require.NoError(t, err)
		doc := string(raw)
		begin, end := strings.Index(doc, authzBegin), strings.Index(doc, authzEnd)
		require.True(t, begin >= 0 && end > begin, "%s has no %s ... %s section", authzDoc, authzBegin, authzEnd)
		begin += len(authzBegin)
		want := "\n" + authzRender(t, rows, authzDocsFixture())
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
		"-impact-webhook-secret=" + impactSecret,
		"-rate-poll-interval=0"}, loopFlags...)
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		f := newAuthzFixture(t, engine, flags)
		ordered := slices.Clone(rows)
		slices.SortStableFunc(ordered, func(a, b authzRow) int {
			switch {
			case a.route.last == b.route.last:
				return 0
			case a.route.last:
				return 1
			}
			return -1
		})
		for _, row := range ordered {
			t.Run(row.name(), func(t *testing.T) { authzCheckRow(t, f, row) })
		}
	})
}

package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// The HTTP fuzzer reads the OpenAPI document the gateway serves and, for
// every operation in it (plus the GitHub webhook, a raw route the document
// does not describe), sends requests built from the operation's schema:
// plausible ones first, then mutated ones (boundary numbers, wrong types,
// hostile unicode, deep nesting, duplicated and unknown keys, malformed JSON,
// bodies at and over the cap, wrong content types, garbage path and query
// parameters), with no credentials, a contributor's session token, the
// administrator key, the credential the operation needs (the contributor's
// session for its own CC, the administrator key for the rest) or garbage
// ones (both headers at once among them). Every answer must be a 2xx or a 4xx
// (a 5xx means bad input reached a bug; the contract's one 501 and
// net/http's redirect of a path with dot segments aside), arrive within
// fuzzTimeout(), and, when a 4xx, carry the {"detail": ...} error body of
// docs/api.md. Afterwards the system must still be ready and its ledger
// coherent. docs/testing.md describes it for its users.

const (
	fuzzSeedEnv = "FOUNDRY_FUZZ_SEED"
	fuzzNEnv    = "FOUNDRY_FUZZ_N"
	// fuzzDefaultSeed fixes the requests of an ordinary run, so a failure
	// found by `go test` is found again by the next one.
	fuzzDefaultSeed uint64 = 20260611
	// fuzzDefaultN random requests per operation keep a run of both engines
	// well under a minute on two cores; FOUNDRY_FUZZ_N raises it by hand.
	fuzzDefaultN = 25
	// fuzzBodyCap is the gateway's default body cap (FOUNDRY_MAX_BODY_BYTES).
	fuzzBodyCap = 1 << 20
	// fuzzReportsPerKind bounds the failures printed in full per operation
	// and kind of failure; the rest are only counted.
	fuzzReportsPerKind = 3
	// fuzzSigner and its secret (at least 32 bytes, or the ledger does not
	// start) may sign an emergency freeze.
	fuzzSigner       = "fuzz"
	fuzzSignerSecret = "fuzz-secret-0123456789abcdef01234"
)

func TestHTTPFuzz(t *testing.T) {
	t.Parallel()
	seed, n := fuzzSettings(t)
	t.Logf("HTTP fuzz: seed %d (%s to change it), %d random requests per operation (%s)", seed, fuzzSeedEnv, n, fuzzNEnv)
	// Real loop passes run a small script instead of waiting an hour for a
	// worker; a signer makes freeze requests reach signature checking.
	_, loopFlags := loopRouting(t)
	flags := append(slices.Clone(loopFlags), "-github-allow-unsigned=true", "-signers="+fuzzSigner+":"+fuzzSignerSecret, "-rate-poll-interval=0")
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		start := time.Now()
		f := newFuzzer(t, sys, seed, n)
		ops := f.operations()
		f.seedFixtures()
		// A logout revokes the fuzz contributor's session, which every
		// operation after it would then send in vain: it goes last.
		slices.SortStableFunc(ops, func(a, b fuzzOp) int {
			return cmpBool(endsSession(a), endsSession(b))
		})
		for _, op := range ops {
			f.fuzz(op)
		}
		f.report()
		f.requireHealthy()
		t.Logf("HTTP fuzz: %d operations, %d requests in %s; statuses %v; slowest %s: %s",
			len(ops), f.sent, time.Since(start).Round(time.Millisecond), f.statusSummary(),
			f.slowest.Round(time.Millisecond), f.slowestLabel)
		var neverOK []string
		for _, op := range ops {
			if f.succeeded[op.Label] == 0 {
				neverOK = append(neverOK, op.Label)
			}
		}
		t.Logf("HTTP fuzz: operations that never answered 2xx: %v", neverOK)
	}, flags...)
}

// fuzzTimeout is the longest one answer may take: beyond it the request
// counts as a hang. The race detector slows the system some tenfold (a
// body of 1 MiB then takes seconds to decode), so it gets the gateway's own
// request timeout, past which a request would be a 504 anyway.
func fuzzTimeout() time.Duration {
	if raceDetector() {
		return 30 * time.Second
	}
	return 10 * time.Second
}

// raceDetector reports whether the test binary was built with -race.
func raceDetector() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// fuzzSettings reads the seed and the per-operation count from the
// environment, or their defaults.
func fuzzSettings(t *testing.T) (seed uint64, n int) {
	seed, n = fuzzDefaultSeed, fuzzDefaultN
	if s := os.Getenv(fuzzSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 0, 64)
		require.NoError(t, err, "%s", fuzzSeedEnv)
		seed = v
	}
	if s := os.Getenv(fuzzNEnv); s != "" {
		v, err := strconv.Atoi(s)
		require.NoError(t, err, "%s", fuzzNEnv)
		require.Positive(t, v, "%s", fuzzNEnv)
		n = v
	}
	return seed, n
}

// fuzzSchema is the part of a swagger 2.0 schema the fuzzer reads.
type fuzzSchema struct {
	Ref         string                 `json:"$ref"`
	Type        string                 `json:"type"`
	Format      string                 `json:"format"`
	Description string                 `json:"description"`
	Properties  map[string]*fuzzSchema `json:"properties"`
	Items       *fuzzSchema            `json:"items"`
}

// fuzzParam is a path or query parameter.
type fuzzParam struct {
	Name   string      `json:"name"`
	In     string      `json:"in"`
	Type   string      `json:"type"`
	Format string      `json:"format"`
	Items  *fuzzSchema `json:"items"`
	Schema *fuzzSchema `json:"schema"`
}

// fuzzOp is one operation to fuzz.
type fuzzOp struct {
	Method string
	// Path is the template, e.g. /api/ideas/{id}.
	Path  string
	Query []fuzzParam
	// Body is the request body's schema; nil when the operation reads none.
	Body *fuzzSchema
	// Response is the schema of its 200 answer; nil when the document
	// gives none.
	Response *fuzzSchema
	// Webhook marks the GitHub webhook, which also reads X-GitHub-* headers.
	Webhook bool
	// Label names the operation in reports.
	Label string
}

// fuzzMember is one member of a JSON object as sent: raw JSON, so a body can
// hold what encoding/json would never write (duplicated keys, invalid UTF-8,
// lone surrogates, 10 000 levels of nesting).
type fuzzMember struct {
	Key   string
	Value []byte
}

// fuzzRequest is one request as sent, kept whole for the failure report.
type fuzzRequest struct {
	Method string
	// URI is the request target exactly as written on the request line.
	URI    string
	Header http.Header
	Body   []byte
	// Chunked sends the body without a Content-Length.
	Chunked bool
	// Mutation says what was done to the request, for the report.
	Mutation string
}

type fuzzer struct {
	t    *testing.T
	sys  *allinonetest.System
	seed uint64
	n    int

	client *http.Client
	defs   map[string]*fuzzSchema
	// enums are the values the document lists for a field name anywhere
	// ("type is one of CODE, MODEL, ..."), for request fields that do not
	// list them themselves.
	enums map[string][]string
	// ids holds real ids by kind (idea, contributor, asset, ...), so
	// plausible requests reach the code behind the lookups.
	ids         map[string][]string
	token       string // the fuzz contributor's session token
	contributor string // and its id

	sent     int
	statuses map[int]int
	failures map[string]int // by operation and kind of failure
	// succeeded counts the 2xx answers by operation: an operation that
	// never succeeds is fuzzed only at its validation.
	succeeded map[string]int
	// slowest is the longest answer and the request that took it.
	slowest      time.Duration
	slowestLabel string
}

func newFuzzer(t *testing.T, sys *allinonetest.System, seed uint64, n int) *fuzzer {
	return &fuzzer{
		t: t, sys: sys, seed: seed, n: n,
		client: &http.Client{
			Timeout: fuzzTimeout(),
			// A redirect is an answer to check, not to follow.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		ids:       map[string][]string{},
		statuses:  map[int]int{},
		failures:  map[string]int{},
		succeeded: map[string]int{},
	}
}

// operations loads the OpenAPI document the gateway serves (its Swagger 2.0
// version) and lists its operations, sorted, plus the GitHub webhook.
func (f *fuzzer) operations() []fuzzOp {
	t := f.t
	r := request(t, http.MethodGet, f.sys.URL("/api/openapi-v2.json"), nil) // its definitions, as Swagger 2.0 names them
	requireStatus(t, http.StatusOK, r)
	var doc struct {
		Paths       map[string]map[string]json.RawMessage `json:"paths"`
		Definitions map[string]*fuzzSchema                `json:"definitions"`
	}
	require.NoError(t, json.Unmarshal(r.Raw, &doc))
	f.defs = doc.Definitions
	f.enums = map[string][]string{}
	for _, defName := range slices.Sorted(maps.Keys(doc.Definitions)) {
		props := doc.Definitions[defName].Properties
		for _, name := range slices.Sorted(maps.Keys(props)) {
			if values := enumOf(props[name].Description); values != nil && f.enums[name] == nil {
				f.enums[name] = values
			}
		}
	}
	var ops []fuzzOp
	for path, methods := range doc.Paths {
		for method, raw := range methods {
			method = strings.ToUpper(method)
			if !slices.Contains([]string{"GET", "POST", "PUT", "PATCH", "DELETE"}, method) {
				continue
			}
			var spec struct {
				Parameters []fuzzParam `json:"parameters"`
				Responses  map[string]struct {
					Schema *fuzzSchema `json:"schema"`
				} `json:"responses"`
			}
			require.NoError(t, json.Unmarshal(raw, &spec), "%s %s", method, path)
			op := fuzzOp{Method: method, Path: path, Label: method + " " + path, Response: spec.Responses["200"].Schema}
			for _, p := range spec.Parameters {
				switch p.In {
				case "query":
					op.Query = append(op.Query, p)
				case "body":
					op.Body = p.Schema
				}
			}
			ops = append(ops, op)
		}
	}
	require.NotEmpty(t, ops, "the OpenAPI document lists operations")
	sort.Slice(ops, func(i, j int) bool { return ops[i].Label < ops[j].Label })
	str := &fuzzSchema{Type: "string"}
	strs := &fuzzSchema{Type: "array", Items: str}
	obj := func(props map[string]*fuzzSchema) *fuzzSchema { return &fuzzSchema{Type: "object", Properties: props} }
	// The webhook reads either GitHub's push payload or the shaped body of
	// docs/ledger.md; both are fuzzed.
	ops = append(ops,
		fuzzOp{Method: "POST", Path: "/api/contributions/github", Webhook: true, Label: "POST /api/contributions/github (shaped body)",
			Body: obj(map[string]*fuzzSchema{
				"contributor_email": str, "repository": str, "commit_hash": str,
				"cost_amount": {Type: "number"}, "metadata": {Type: "object"},
			})},
		fuzzOp{Method: "POST", Path: "/api/contributions/github", Webhook: true, Label: "POST /api/contributions/github (push payload)",
			Body: obj(map[string]*fuzzSchema{
				"ref":        str,
				"repository": obj(map[string]*fuzzSchema{"full_name": str}),
				"pusher":     obj(map[string]*fuzzSchema{"name": str}),
				"sender":     obj(map[string]*fuzzSchema{"login": str}),
				"head_commit": obj(map[string]*fuzzSchema{"id": str, "distinct": {Type: "boolean"},
					"added": strs, "removed": strs, "modified": strs}),
				"commits": {Type: "array", Items: obj(map[string]*fuzzSchema{
					"id": str, "distinct": {Type: "boolean"}, "added": strs, "removed": strs, "modified": strs,
					"author": obj(map[string]*fuzzSchema{"username": str}),
				})},
			})},
	)
	return ops
}

// seedFixtures creates one of each resource, so that plausible requests
// find what they name: a contributor with CC (whose token the fuzzer sends),
// an idea with the contributor's stake and one the contributor created (so
// its session may edit it), an asset with a contribution, a task, two graph
// nodes and an API token.
func (f *fuzzer) seedFixtures() {
	t := f.t
	admin := "X-API-Key: " + allinonetest.AdminKey
	reg := request(t, http.MethodPost, f.sys.URL("/api/onboarding/register"), map[string]any{"handle": "fuzz-contributor"})
	requireStatus(t, http.StatusCreated, reg)
	f.contributor, f.token = reg.JSON["contributor_id"].(string), reg.JSON["session_token"].(string)
	f.remember("contributor", f.contributor)
	created := func(path string, body any, kind string, headers ...string) string {
		r := request(t, http.MethodPost, f.sys.URL(path), body, headers...)
		requireStatus(t, http.StatusCreated, r)
		id, _ := r.JSON["id"].(string)
		f.remember(kind, id)
		return id
	}
	idea := created("/api/ideas", map[string]any{"name": "Fuzz target", "potential_value": 100, "estimated_cost": 10, "tags": []string{"fuzz"}}, "idea")
	asset := created("/api/assets", map[string]any{"type": "CODE", "name": "fuzz/repo"}, "asset")
	created("/api/contributions", map[string]any{"contributor_id": f.contributor, "asset_id": asset, "cost_amount": 2}, "contribution")
	created("/api/distributions", map[string]any{"asset_id": asset, "value_amount": 10}, "distribution", admin)
	created("/api/agent/tasks", map[string]any{"direction": "fuzz the API", "task_type": "spec", "context": map[string]any{"idea_id": idea}}, "task")
	created("/api/graph/nodes", map[string]any{"node_type": "fuzz", "payload": map[string]any{}}, "node")
	created("/api/graph/nodes", map[string]any{"node_type": "fuzz", "payload": map[string]any{"n": 2}}, "node")
	created("/api/ideas", map[string]any{"name": "The fuzz contributor's idea", "potential_value": 10}, "idea", "Authorization: Bearer "+f.token)
	tok := request(t, http.MethodPost, f.sys.URL("/api/tokens"), map[string]any{"name": "fuzz-fixture", "role": "viewer"}, admin)
	requireStatus(t, http.StatusCreated, tok)
	f.remember("token", tok.JSON["api_token"].(map[string]any)["id"].(string))
	requireStatus(t, http.StatusCreated, request(t, http.MethodPost, f.sys.URL("/api/cc/deposit"),
		map[string]any{"contributor_id": f.contributor, "amount_usd": 1000, "reference": "fuzz"}, admin))
	requireStatus(t, http.StatusCreated, request(t, http.MethodPost, f.sys.URL("/api/cc/stake"),
		map[string]any{"contributor_id": f.contributor, "idea_id": idea, "amount_cc": 100}, "Authorization: Bearer "+f.token))
}

// remember adds a real id of a kind; the fixture's (the first) and the
// newest few are kept.
func (f *fuzzer) remember(kind, id string) {
	if id == "" || slices.Contains(f.ids[kind], id) {
		return
	}
	f.ids[kind] = append(f.ids[kind], id)
	if len(f.ids[kind]) > 16 {
		f.ids[kind] = slices.Delete(f.ids[kind], 1, 2)
	}
}

// createdKind is the kind of resource a successful POST to path creates.
var createdKind = map[string]string{
	"/api/ideas": "idea", "/api/assets": "asset", "/api/contributions": "contribution",
	"/api/distributions": "distribution", "/api/agent/tasks": "task", "/api/graph/nodes": "node",
}

// fuzz sends an operation's fixed cases and then f.n random requests. Each
// operation has its own random source derived from the seed and its label,
// so adding an operation does not change the requests of the others.
func (f *fuzzer) fuzz(op fuzzOp) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(op.Label))
	g := &fuzzGen{f: f, op: op, r: rand.New(rand.NewPCG(f.seed, h.Sum64()))}
	for _, req := range g.fixedCases() {
		f.send(op, req)
	}
	for range f.n {
		f.send(op, g.random())
	}
}

// send sends one request and checks its answer.
func (f *fuzzer) send(op fuzzOp, fr fuzzRequest) {
	f.sent++
	var body io.Reader
	if fr.Body != nil {
		body = bytes.NewReader(fr.Body)
		if fr.Chunked {
			body = io.MultiReader(body) // a reader of unknown length
		}
	}
	req, err := http.NewRequest(fr.Method, f.sys.BaseURL+"/", body)
	require.NoError(f.t, err)
	// The request target is written as built, never re-escaped or cleaned.
	path, query, _ := strings.Cut(fr.URI, "?")
	req.URL.Opaque, req.URL.RawQuery = path, query
	for name, values := range fr.Header {
		req.Header[name] = values
	}
	start := time.Now()
	resp, err := f.client.Do(req)
	if err != nil {
		f.fail(op, "no answer", fr, fmt.Sprintf("after %s: %v", time.Since(start).Round(time.Millisecond), err))
		return
	}
	raw, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		f.fail(op, "unreadable answer", fr, err.Error())
		return
	}
	f.statuses[resp.StatusCode]++
	if elapsed := time.Since(start); elapsed > f.slowest {
		f.slowest, f.slowestLabel = elapsed, fr.Method+" "+truncate([]byte(fr.URI), 80)+" ("+fr.Mutation+")"
	}
	if resp.StatusCode < 300 {
		f.succeeded[op.Label]++
	}
	if problem := fuzzVerdict(op, fr, resp, raw); problem != "" {
		f.fail(op, problem, fr, fmt.Sprintf("%d %s\n  body: %s", resp.StatusCode, resp.Header.Get("Content-Type"), truncate(raw, 600)))
		return
	}
	if resp.StatusCode < 300 && op.Response != nil && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		var out any
		if json.Unmarshal(raw, &out) == nil {
			if field := f.nonNumber(op.Response, out, ""); field != "" {
				f.fail(op, "a number field that is not a JSON number", fr, fmt.Sprintf("%d: %s\n  body: %s", resp.StatusCode, field, truncate(raw, 600)))
				return
			}
		}
	}
	if resp.StatusCode == http.StatusCreated && fr.Method == http.MethodPost {
		var out map[string]any
		if json.Unmarshal(raw, &out) == nil {
			if kind := createdKind[op.Path]; kind != "" {
				id, _ := out["id"].(string)
				f.remember(kind, id)
			}
			if id, ok := out["contributor_id"].(string); ok && op.Path == "/api/onboarding/register" {
				f.remember("contributor", id)
			}
			if tok, ok := out["api_token"].(map[string]any); ok && op.Path == "/api/tokens" {
				id, _ := tok["id"].(string)
				f.remember("token", id)
			}
		}
	}
}

// nonNumber is the path of the first field of an answer v that its schema
// s types as a number but that holds anything other than a JSON number or
// null ("Infinity" as a string, the issue's); "" when there is none.
func (f *fuzzer) nonNumber(s *fuzzSchema, v any, path string) string {
	for i := 0; s != nil && s.Ref != "" && i < 8; i++ {
		s = f.defs[strings.TrimPrefix(s.Ref, "#/definitions/")]
	}
	if s == nil || v == nil {
		return ""
	}
	switch {
	case s.Type == "number" || s.Type == "integer":
		if _, ok := v.(float64); !ok {
			return path
		}
	case s.Type == "array":
		items, _ := v.([]any)
		for i, item := range items {
			if bad := f.nonNumber(s.Items, item, fmt.Sprintf("%s[%d]", path, i)); bad != "" {
				return bad
			}
		}
	case s.Properties != nil:
		fields, _ := v.(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			if bad := f.nonNumber(s.Properties[name], fields[name], path+"."+name); bad != "" {
				return bad
			}
		}
	}
	return ""
}

// parserText matches what Go's parsers write into their errors, which a
// 4xx detail must never carry (the issue's: strconv.ParseInt: parsing
// "1x", proto: (line 1:39): invalid value for double field): a detail is
// a sentence naming the field and what it must be.
var parserText = regexp.MustCompile(`strconv\.|proto: |\(line \d+:\d+\)|json: |invalid character|unexpected EOF|syntax error`)

// fuzzVerdict says what is wrong with an answer, or "" when nothing is.
func fuzzVerdict(op fuzzOp, fr fuzzRequest, resp *http.Response, raw []byte) string {
	code := resp.StatusCode
	switch {
	case code == http.StatusNotImplemented && op.Path == "/api/onboarding/upgrade":
		// The one 501 of the contract (docs/api.md).
	case code >= 500:
		return fmt.Sprintf("status %d", code)
	case code >= 300 && code < 400:
		if !cleaningRedirect(fr.URI, resp) {
			return fmt.Sprintf("status %d", code)
		}
	case code >= 400:
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			return "4xx without a JSON body"
		}
		var body struct {
			Detail *string `json:"detail"`
		}
		if err := json.Unmarshal(raw, &body); err != nil || body.Detail == nil || strings.TrimSpace(*body.Detail) == "" {
			return "4xx without a detail"
		}
		if parserText.MatchString(*body.Detail) {
			return "4xx detail with a parser's text"
		}
	case code >= 200:
		if len(raw) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && !json.Valid(raw) {
			return "2xx with invalid JSON"
		}
	default:
		return fmt.Sprintf("status %d", code)
	}
	return ""
}

// cleaningRedirect reports whether an answer is net/http's redirect of a
// path with dot or empty segments to its clean form: the dot-segment
// removal of RFC 3986, which clients do before sending anyway, so the
// redirect is an answer and the clean path is what is then served.
func cleaningRedirect(uri string, resp *http.Response) bool {
	rawPath, _, _ := strings.Cut(uri, "?")
	p, err := url.PathUnescape(rawPath)
	if err != nil {
		return false
	}
	clean := path.Clean(p)
	if strings.HasSuffix(p, "/") && clean != "/" {
		clean += "/"
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	// The mux may add a slash: /api/ideas/.. is /api, served as /api/.
	return err == nil && clean != p && (loc.Path == clean || loc.Path == clean+"/")
}

// fail reports a failing request in full, as long as few of its kind have
// been, so it can be sent again by hand.
func (f *fuzzer) fail(op fuzzOp, problem string, fr fuzzRequest, answer string) {
	f.t.Helper()
	key := op.Label + ": " + problem
	f.failures[key]++
	if f.failures[key] > fuzzReportsPerKind {
		return
	}
	var hdr []string
	for name, values := range fr.Header {
		for _, v := range values {
			hdr = append(hdr, fmt.Sprintf("%s: %q", name, v))
		}
	}
	sort.Strings(hdr)
	f.t.Errorf("%s\n  request: %s %s (%s)\n  headers: %s\n  body (%d bytes): %s\n  answer: %s",
		key, fr.Method, truncate([]byte(fr.URI), 300), fr.Mutation, strings.Join(hdr, "; "), len(fr.Body), truncate(fr.Body, 600), answer)
}

// report sums up the failures that were only counted.
func (f *fuzzer) report() {
	keys := make([]string, 0, len(f.failures))
	for k := range f.failures {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if n := f.failures[k]; n > fuzzReportsPerKind {
			f.t.Errorf("%s: %d failing requests in all (the first %d shown)", k, n, fuzzReportsPerKind)
		}
	}
}

func (f *fuzzer) statusSummary() string {
	codes := make([]int, 0, len(f.statuses))
	for c := range f.statuses {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := make([]string, len(codes))
	for i, c := range codes {
		parts[i] = fmt.Sprintf("%d×%d", c, f.statuses[c])
	}
	return strings.Join(parts, " ")
}

// requireHealthy checks that the system survived: ready, the audit chain
// sound, every cached balance equal to its journal, the fuzz contributor's
// balances not negative, and a plain write still accepted.
func (f *fuzzer) requireHealthy() {
	t := f.t
	requireStatus(t, http.StatusOK, request(t, http.MethodGet, f.sys.URL("/api/ready"), nil))
	v := request(t, http.MethodGet, f.sys.URL("/api/audit/verify"), nil)
	requireStatus(t, http.StatusOK, v)
	require.Equal(t, true, v.JSON["valid"], "audit chain after the fuzz: %s", v.Raw)
	c := request(t, http.MethodGet, f.sys.URL("/api/health/coherence"), nil)
	requireStatus(t, http.StatusOK, c)
	require.Equal(t, true, c.JSON["audit_chain_valid"], "coherence after the fuzz: %s", c.Raw)
	require.Empty(t, c.JSON["mismatched_accounts"], "coherence after the fuzz: %s", c.Raw)
	b := request(t, http.MethodGet, f.sys.URL("/api/cc/balances/"+f.contributor), nil)
	requireStatus(t, http.StatusOK, b)
	for _, field := range []string{"available_cc", "staked_cc", "cooling_cc"} {
		n, ok := b.JSON[field].(float64)
		require.True(t, ok && n >= 0, "%s after the fuzz: %s", field, b.Raw)
	}
	requireStatus(t, http.StatusCreated, request(t, http.MethodPost, f.sys.URL("/api/ideas"), map[string]any{"name": "after the fuzz"}))
}

// fuzzGen builds the requests of one operation.
type fuzzGen struct {
	f  *fuzzer
	op fuzzOp
	r  *rand.Rand
}

func (g *fuzzGen) pick(n int) int { return g.r.IntN(n) }

func (g *fuzzGen) chance(p float64) bool { return g.r.Float64() < p }

func pickOne[T any](g *fuzzGen, xs []T) T { return xs[g.r.IntN(len(xs))] }

// resolve follows a schema's $ref.
func (g *fuzzGen) resolve(s *fuzzSchema) *fuzzSchema {
	for i := 0; s != nil && s.Ref != "" && i < 8; i++ {
		s = g.f.defs[strings.TrimPrefix(s.Ref, "#/definitions/")]
	}
	if s == nil {
		return &fuzzSchema{}
	}
	return s
}

// fixedCases are sent once per operation: each boundary of the body, the
// path and the query, so every operation meets every one of them whatever
// the random draw.
func (g *fuzzGen) fixedCases() []fuzzRequest {
	var out []fuzzRequest
	if strings.Contains(g.op.Path, "{") {
		for _, seg := range fuzzPathGarbage {
			req := g.base("path parameter " + strconv.Quote(seg))
			req.URI = g.pathWith(func(string) string { return seg }) + g.query(false)
			out = append(out, req)
		}
	}
	for _, q := range fuzzRawQueries {
		req := g.base("query " + strconv.Quote(q))
		req.URI = g.path(false) + "?" + q
		out = append(out, req)
	}
	for _, method := range []string{http.MethodDelete, http.MethodOptions, "FUZZ"} {
		if method != g.op.Method {
			req := g.base("method " + method)
			req.Method = method
			out = append(out, req)
		}
	}
	if g.op.Body == nil {
		// A body where none is read must not matter.
		req := g.base("unexpected body")
		req.Body = []byte(`{"unexpected":true}`)
		req.Header.Set("Content-Type", "application/json")
		out = append(out, req)
		return out
	}
	for _, c := range append(g.bodyCases(), g.fieldCases()...) {
		req := g.base(c.name)
		req.Body = c.body
		if c.contentType != "" {
			req.Header.Set("Content-Type", c.contentType)
		}
		out = append(out, req)
	}
	// Without a Content-Length the cap is found while reading.
	for _, body := range [][]byte{encodeObject(g.validMembers()), g.padded(fuzzBodyCap-1, "x"), g.padded(fuzzBodyCap+1000, "x")} {
		req := g.base(fmt.Sprintf("chunked body of %d bytes", len(body)))
		req.Body, req.Chunked = body, true
		req.Header.Set("Content-Type", "application/json")
		out = append(out, req)
	}
	return out
}

type fuzzBody struct {
	name        string
	body        []byte
	contentType string
}

// fieldCases set one top-level field at a time to each boundary of its
// type, the others plausible: a body otherwise valid gets past the
// validation of the rest, so the boundary reaches the code behind it.
func (g *fuzzGen) fieldCases() []fuzzBody {
	var out []fuzzBody
	for _, key := range g.propertyNames() {
		var values []string
		switch g.resolve(g.props()[key]).Type {
		case "number", "integer":
			values = fuzzFieldNumbers
		case "string":
			values = slices.Clone(fuzzFieldStrings)
			if strings.HasSuffix(key, "_id") {
				values = append(values, string(encodeJSON(strings.ToUpper(g.id(idKind(key))))))
			}
		case "array":
			values = fuzzFieldArrays
		case "object":
			values = fuzzFieldObjects
		}
		for _, v := range values {
			body := encodeObject(setMember(g.validMembers(), key, []byte(v)))
			out = append(out, fuzzBody{"field " + key + " = " + truncate([]byte(v), 40), body, "application/json"})
		}
	}
	return out
}

// fuzzFieldNumbers are the numbers every number field meets: signs, the
// smallest steps, the edges of int32, exact float64 integers and float64.
var fuzzFieldNumbers = []string{
	"-1", "0", "-0", "0.000001", "0.0000001", "1e-300", "5e-324", "1.5", "2147483648", "9007199254740993",
	"1e15", "1e20", "1e308", "1.7976931348623157e308", "-1e308",
}

// fuzzFieldStrings are the strings every string field meets, as raw JSON.
var fuzzFieldStrings = []string{
	`""`, `" "`, `"\n\t"`, `"a\u0000b"`, "\"\xff\"", `"\ud800"`, `"😀\u202eevil"`,
	string(encodeJSON(strings.Repeat("a", 257))), string(encodeJSON(strings.Repeat("é", 5000))),
	string(encodeJSON(strings.Repeat("😀", 20000))), string(encodeJSON("e" + strings.Repeat("\u0301", 300))),
	`"../../etc/passwd"`, `"' OR 1=1 --"`, `"{{direction}} $(id)"`, `"00000000-0000-0000-0000-000000000000"`,
}

// fuzzFieldArrays are the arrays every array field meets: empty, holding a
// null, an empty string, an object, 10 000 equal strings or objects, and
// 1 000 distinct strings.
var fuzzFieldArrays = []string{
	"[]", "[null]", `[""]`, `[{"a":1}]`,
	"[" + strings.Repeat(`"a",`, 9999) + `"a"]`, "[" + strings.Repeat(`{},`, 9999) + `{}]`,
	func() string {
		items := make([]string, 1000)
		for i := range items {
			items[i] = strconv.Quote("item-" + strconv.Itoa(i))
		}
		return "[" + strings.Join(items, ",") + "]"
	}(),
}

// fuzzFieldObjects are the objects every free-form field meets.
var fuzzFieldObjects = []string{
	"{}", `{"a":null}`, `{"":""}`, `{"a":[1,{"b":"c"}],"n":1e308}`,
	func() string {
		members := make([]fuzzMember, 1000)
		for i := range members {
			members[i] = fuzzMember{"k" + strconv.Itoa(i), []byte(strconv.Itoa(i))}
		}
		return string(encodeObject(members))
	}(),
}

// bodyCases are the body boundaries every body operation meets.
func (g *fuzzGen) bodyCases() []fuzzBody {
	const ct = "application/json"
	valid := g.validMembers()
	withAll := func(value func(s *fuzzSchema) []byte) []byte {
		members := slices.Clone(valid)
		for _, key := range g.propertyNames() {
			members = setMember(members, key, value(g.resolve(g.props()[key])))
		}
		return encodeObject(members)
	}
	near, over := g.padded(fuzzBodyCap-1, "x"), g.padded(fuzzBodyCap+1000, "x")
	cases := []fuzzBody{
		{"valid", encodeObject(valid), ct},
		{"empty body with a JSON type", []byte{}, ct},
		{"empty body without a type", []byte{}, ""},
		{"blank body", []byte(" \n\t "), ct},
		{"null body", []byte("null"), ct},
		{"array body", []byte(`[` + string(encodeObject(valid)) + `]`), ct},
		{"string body", []byte(`"x"`), ct},
		{"number body", []byte(`1e308`), ct},
		{"empty object", []byte(`{}`), ct},
		{"truncated JSON", truncateJSON(encodeObject(valid)), ct},
		{"two JSON values", append(encodeObject(valid), []byte(`{}`)...), ct},
		{"trailing comma", []byte(`{"a":1,}`), ct},
		{"single quotes", []byte(`{'a':1}`), ct},
		{"byte order mark", append([]byte("\xef\xbb\xbf"), encodeObject(valid)...), ct},
		{"NaN literal", []byte(`{"x":NaN}`), ct},
		{"10 000 nested arrays", nestedArrays(10000), ct},
		{"10 000 nested objects", nestedObjects(10000), ct},
		{"unknown field", encodeObject(append(slices.Clone(valid), fuzzMember{"not_a_field", []byte(`1`)})), ct},
		{"duplicated keys", encodeObject(duplicateKeys(valid)), ct},
		{"every field null", withAll(func(*fuzzSchema) []byte { return []byte("null") }), ct},
		{"every field -1", withAll(func(*fuzzSchema) []byte { return []byte("-1") }), ct},
		{"every field 0", withAll(func(*fuzzSchema) []byte { return []byte("0") }), ct},
		{"every field max int64", withAll(func(*fuzzSchema) []byte { return []byte("9223372036854775807") }), ct},
		{"every field 1e308", withAll(func(*fuzzSchema) []byte { return []byte("1e308") }), ct},
		{"every field a wrong type", withAll(wrongType), ct},
		{"every field 1 000 nested arrays", withAll(func(*fuzzSchema) []byte { return nestedArrays(1000) }), ct},
		{"NUL in every string", withAll(g.stringOr(`"a\u0000b"`)), ct},
		{"invalid UTF-8 in every string", withAll(g.stringOr("\"a\xff\xfeb\"")), ct},
		{"lone surrogate in every string", withAll(g.stringOr(`"\ud800"`)), ct},
		{"NUL in every free-form object", withAll(func(s *fuzzSchema) []byte {
			if s.Type == "object" && len(s.Properties) == 0 {
				return []byte(`{"k":"a\u0000b","n":{"\u0000":1}}`)
			}
			return nil
		}), ct},
		{"emoji and RTL in every string", withAll(g.stringOr(string(encodeJSON("😀\u202eevil\u202c e\u0301\u0301\u0301 مرحبا")))), ct},
		{"body just under the cap", near, ct},
		{"body over the cap", over, ct},
		{"emoji body just under the cap", g.padded(fuzzBodyCap-1, "😀"), ct},
		{"text/plain", encodeObject(valid), "text/plain"},
		{"form", []byte("a=1&b=2"), "application/x-www-form-urlencoded"},
		{"multipart", []byte("--x\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--x--\r\n"), "multipart/form-data; boundary=x"},
		{"JSON without a type", encodeObject(valid), ""},
		{"malformed type", encodeObject(valid), "application/json;;;=="},
		{"UTF-16 charset", encodeObject(valid), "application/json; charset=utf-16"},
		{"+json type", encodeObject(valid), "application/merge-patch+json"},
	}
	return cases
}

// stringOr returns raw for string fields and a plausible value for the
// others, so one field's type error does not hide the strings' handling.
func (g *fuzzGen) stringOr(raw string) func(s *fuzzSchema) []byte {
	return func(s *fuzzSchema) []byte {
		if s.Type == "string" {
			return []byte(raw)
		}
		return nil
	}
}

// padded is a plausible body grown to size bytes by a string field (or an
// unknown one when the body has no string field) filled with unit.
func (g *fuzzGen) padded(size int, unit string) []byte {
	members := g.validMembers()
	key := "padding"
	for _, k := range g.propertyNames() {
		if g.resolve(g.props()[k]).Type == "string" {
			key = k
			break
		}
	}
	members = setMember(members, key, []byte(`""`))
	room := size - len(encodeObject(members))
	fill := strings.Repeat(unit, max(0, room/len(unit)))
	fill += strings.Repeat("x", max(0, room-len(fill)))
	return encodeObject(setMember(members, key, []byte(`"`+fill+`"`)))
}

func (g *fuzzGen) props() map[string]*fuzzSchema { return g.resolve(g.op.Body).Properties }

// propertyNames are the body's top-level fields, sorted.
func (g *fuzzGen) propertyNames() []string { return slices.Sorted(maps.Keys(g.props())) }

// base is a request with plausible path and query, random credentials and
// random extra headers.
func (g *fuzzGen) base(mutation string) fuzzRequest {
	req := fuzzRequest{Method: g.op.Method, Header: http.Header{}, Mutation: mutation}
	req.URI = g.path(false) + g.query(false)
	g.credentials(req.Header)
	g.extraHeaders(req.Header)
	return req
}

// random is one random request: path, query, headers and body each
// plausible or mutated.
func (g *fuzzGen) random() fuzzRequest {
	garbagePath, garbageQuery := g.chance(0.25), g.chance(0.25)
	req := g.base("random")
	req.URI = g.path(garbagePath) + g.query(garbageQuery)
	var notes []string
	if garbagePath {
		notes = append(notes, "garbage path")
	}
	if garbageQuery {
		notes = append(notes, "garbage query")
	}
	if g.op.Body != nil {
		body, contentType, note := g.randomBody()
		req.Body = body
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if note == "valid body" && g.chance(0.7) {
			// A plausible body mostly comes with the credential the
			// operation needs, so it gets past authorization to the code
			// behind it.
			g.authorize(req.Header)
		}
		notes = append(notes, note)
	} else if g.op.Method != http.MethodGet && g.chance(0.2) {
		req.Body, _ = g.mutatedBody(nil)
		req.Header.Set("Content-Type", "application/json")
		notes = append(notes, "body on a body-less action")
	}
	req.Mutation = "random: " + strings.Join(notes, ", ")
	return req
}

// randomBody is a plausible body (a fifth of the time) or a mutated one.
func (g *fuzzGen) randomBody() (body []byte, contentType, note string) {
	contentType = "application/json"
	switch n := g.pick(20); {
	case n < 4:
		return encodeObject(g.validMembers()), contentType, "valid body"
	case n == 4:
		contentType = pickOne(g, []string{"", "text/plain", "application/xml", "application/jsonx", "application/x-www-form-urlencoded", "application/json; charset=latin1", "APPLICATION/JSON"})
		return encodeObject(g.validMembers()), contentType, "content type " + strconv.Quote(contentType)
	case n == 5:
		return pickOne(g, fuzzMalformed), contentType, "malformed JSON"
	default:
		body, note := g.mutatedBody(g.op.Body)
		return body, contentType, note
	}
}

// mutatedBody is a plausible body with one to three mutations.
func (g *fuzzGen) mutatedBody(schema *fuzzSchema) ([]byte, string) {
	var members []fuzzMember
	if schema != nil {
		members = g.validMembers()
	}
	var notes []string
	for range 1 + g.pick(3) {
		names := g.propertyNames()
		if schema == nil {
			names = nil
		}
		switch n := g.pick(10); {
		case n < 6 && len(names) > 0:
			key := pickOne(g, names)
			members = setMember(members, key, g.nastyValue(g.resolve(g.props()[key])))
			notes = append(notes, "field "+key)
		case n < 7 && len(names) > 0:
			key := pickOne(g, names)
			members = setMember(members, key, g.nested(g.resolve(g.props()[key]), g.nastyValue(&fuzzSchema{})))
			notes = append(notes, "inside field "+key)
		case n < 8:
			members = append(members, fuzzMember{pickOne(g, fuzzUnknownKeys), g.nastyValue(&fuzzSchema{})})
			notes = append(notes, "unknown field")
		case n < 9 && len(members) > 0:
			members = duplicateKeys(members)
			notes = append(notes, "duplicated key")
		default:
			if len(members) > 0 {
				i := g.pick(len(members))
				members = slices.Delete(members, i, i+1)
			}
			notes = append(notes, "field dropped")
		}
	}
	return encodeObject(members), "mutated body: " + strings.Join(notes, ", ")
}

// nested puts a value where a field's schema has room for one: in an array
// element or an object's member, else in the field itself.
func (g *fuzzGen) nested(s *fuzzSchema, value []byte) []byte {
	switch s.Type {
	case "array":
		return []byte("[" + string(g.validValue("item", g.resolve(s.Items), 1)) + "," + string(value) + "]")
	case "object":
		members := []fuzzMember{{pickOne(g, fuzzUnknownKeys), value}}
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			members = append(members, fuzzMember{k, g.validValue(k, g.resolve(s.Properties[k]), 1)})
		}
		return encodeObject(members)
	}
	return value
}

// validMembers is a plausible body: most fields, each with a value that
// passes validation more often than not.
func (g *fuzzGen) validMembers() []fuzzMember {
	var out []fuzzMember
	for _, k := range g.propertyNames() {
		if g.chance(0.85) {
			out = append(out, fuzzMember{k, g.validValue(k, g.resolve(g.props()[k]), 0)})
		}
	}
	if g.op.Path == "/api/incidents/freeze" && g.chance(0.3) {
		// Now and then a freeze the test's signer really signed, issued now
		// with a new nonce, so that the frozen economy and the unfreeze
		// after it are fuzzed too.
		freeze := signedFreeze(fuzzSignerSecret, fuzzSigner, fmt.Sprintf("fuzz drill %d", g.r.Uint32()))
		for _, k := range []string{"signer_id", "issued_at", "nonce", "reason", "signature"} {
			out = setMember(out, k, encodeJSON(freeze[k]))
		}
	}
	return out
}

// fuzzEnumRE finds the values a description lists ("one of a, b, c").
var (
	fuzzEnumRE   = regexp.MustCompile(`one of ([^.;]+)`)
	fuzzEnumWord = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

func enumOf(description string) []string {
	m := fuzzEnumRE.FindStringSubmatch(description)
	if m == nil {
		return nil
	}
	var out []string
	for part := range strings.SplitSeq(m[1], ",") {
		part = strings.TrimSpace(part)
		if !fuzzEnumWord.MatchString(part) {
			break
		}
		out = append(out, part)
	}
	if len(out) < 2 {
		return nil
	}
	return out
}

// validValue is a plausible JSON value for a field.
func (g *fuzzGen) validValue(name string, s *fuzzSchema, depth int) []byte {
	if name == "tags" {
		return encodeJSON(pickOne(g, [][]string{{}, {"fuzz"}, {"alpha", "beta"}}))
	}
	switch s.Type {
	case "object":
		if len(s.Properties) == 0 {
			return encodeJSON(pickOne(g, []map[string]any{{}, {"k": "v"}, {"idea_id": g.id("idea"), "files_changed": 3}, {"has_tests": true, "n": 1.5}}))
		}
		if depth > 3 {
			return []byte("{}")
		}
		var members []fuzzMember
		for _, k := range slices.Sorted(maps.Keys(s.Properties)) {
			if g.chance(0.8) {
				members = append(members, fuzzMember{k, g.validValue(k, g.resolve(s.Properties[k]), depth+1)})
			}
		}
		return encodeObject(members)
	case "array":
		if depth > 3 {
			return []byte("[]")
		}
		var items []string
		for range g.pick(3) {
			items = append(items, string(g.validValue(name, g.resolve(s.Items), depth+1)))
		}
		return []byte("[" + strings.Join(items, ",") + "]")
	case "boolean":
		return encodeJSON(g.chance(0.5))
	case "integer":
		return encodeJSON(g.pick(100) + 1)
	case "number":
		switch {
		case strings.Contains(name, "confidence"), strings.Contains(name, "risk"), name == "weight":
			return encodeJSON(float64(g.pick(101)) / 100)
		case strings.Contains(name, "pct"):
			return encodeJSON(g.pick(101))
		case name == "cc_per_usd":
			// At or above the fixed 100, so CC stays fully backed and
			// withdrawals keep being fuzzed past the backing check.
			return encodeJSON(100 + g.pick(6))
		}
		return encodeJSON(float64(g.pick(10000)) / 100)
	}
	if s.Format == "int64" {
		return encodeJSON(strconv.Itoa(g.pick(1000)))
	}
	return encodeJSON(g.validString(name, s))
}

// validString is a plausible string for a field, by its name.
func (g *fuzzGen) validString(name string, s *fuzzSchema) string {
	if values := enumOf(s.Description); values != nil {
		return pickOne(g, values)
	}
	if values := g.f.enums[name]; values != nil {
		return pickOne(g, values)
	}
	switch {
	case name == "id" && g.op.Path == "/api/ideas":
		return uuid.NewString()
	case name == "id":
		return fmt.Sprintf("%040x", g.r.Uint64()) // a commit id
	case strings.HasSuffix(name, "_id") && name != "external_id" && name != "signer_id" && name != "worker_id":
		return g.id(idKind(name))
	case name == "handle":
		return fmt.Sprintf("fuzz-%d", g.r.Uint32())
	case strings.Contains(name, "email"):
		return fmt.Sprintf("dev%d@example.com", g.pick(5))
	case name == "repository", name == "full_name":
		return fmt.Sprintf("fuzz/repo-%d", g.pick(3))
	case name == "commit_hash":
		return fmt.Sprintf("%x", g.r.Uint64())
	case strings.HasSuffix(name, "_at"):
		return time.Now().UTC().Add(-time.Duration(g.pick(1000)) * time.Hour).Format(time.RFC3339)
	case name == "signature":
		return fmt.Sprintf("%016x%016x%016x%016x", g.r.Uint64(), g.r.Uint64(), g.r.Uint64(), g.r.Uint64())
	case name == "signer_id":
		return pickOne(g, []string{"fuzz", "nobody"})
	case name == "provider":
		return pickOne(g, []string{"openai", "claude", "other"})
	case name == "direction":
		return pickOne(g, []string{"outgoing", "incoming", "both", "improve the docs"})
	case name == "role":
		return pickOne(g, []string{"viewer", "worker", "operator", "admin", "contributor", "root"})
	case name == "ttl":
		return pickOne(g, []string{"", "720h", "30d", "90m", "0s", "-1h", "3651d", "forever"})
	case name == "suggestion_type":
		return pickOne(g, []string{"split", "merge"})
	case name == "action":
		return pickOne(g, []string{"apply", "accept", "split", "merge"})
	case name == "ref":
		return pickOne(g, []string{"refs/heads/main", "refs/tags/v1"})
	case name == "name" || name == "login" || name == "username":
		return pickOne(g, []string{"codertocat", "Fuzz idea", "ada"})
	case strings.HasSuffix(name, "ed"): // added, removed, modified
		return pickOne(g, []string{"README.md", "src/main_test.go", "docs/a.md", "x.go"})
	}
	return pickOne(g, []string{"fuzz", "a plain value", "pending", "merge", "spec", "other"})
}

// idKind is the kind of resource a field or parameter names.
func idKind(name string) string {
	name = strings.TrimSuffix(name, "_id")
	for _, kind := range []string{"idea", "contributor", "asset", "contribution", "distribution", "task", "node", "token"} {
		if strings.HasSuffix(name, kind) {
			return kind
		}
	}
	return "idea"
}

// id is a real id of a kind most of the time (the fixture's often, and for
// a contributor mostly the one whose token the fuzzer holds), else one
// nobody has.
func (g *fuzzGen) id(kind string) string {
	if kind == "contributor" && g.chance(0.6) {
		return g.f.contributor
	}
	ids := g.f.ids[kind]
	switch {
	case len(ids) == 0 || g.chance(0.15):
	case g.chance(0.4):
		return ids[0] // the fixture: the contributor's stake is on it
	default:
		return pickOne(g, ids)
	}
	return uuid.NewString()
}

// pathKind is the kind of resource a path parameter names: by its name,
// or for a bare {id} by the collection before it.
func pathKind(path, param string) string {
	if param != "id" {
		return idKind(param)
	}
	before, _, _ := strings.Cut(path, "/{id}")
	collection := before[strings.LastIndex(before, "/")+1:]
	return idKind(strings.TrimSuffix(collection, "s"))
}

// fuzzPathParam finds the parameters of a path template.
var fuzzPathParam = regexp.MustCompile(`\{([^}]+)\}`)

// path is the operation's path with plausible parameters, or garbage ones.
func (g *fuzzGen) path(garbage bool) string {
	return g.pathWith(func(param string) string {
		if garbage {
			return g.garbageSegment()
		}
		return url.PathEscape(g.id(pathKind(g.op.Path, param)))
	})
}

// pathWith fills each parameter of the template with segment(name), which
// is written as is (already escaped).
func (g *fuzzGen) pathWith(segment func(param string) string) string {
	return fuzzPathParam.ReplaceAllStringFunc(g.op.Path, func(m string) string {
		return segment(strings.Trim(m, "{}"))
	})
}

// fuzzPathGarbage are path segments as written on the request line:
// dot segments, escapes of separators and NUL, overlong UTF-8, numbers,
// unknown and malformed UUIDs, unicode and a long segment.
var fuzzPathGarbage = []string{
	"..", ".", "%2e%2e", "..%2F..%2Fetc%2Fpasswd", "a%2Fb", "%252F", "%00", "a%00b", "%c0%ae", "%ff%fe",
	"-1", "0", "9223372036854775808", "1e308", "NaN", "null",
	uuid.Nil.String(), "00000000-0000-0000-0000-00000000000g", "ffffffff-ffff-ffff-ffff-ffffffffffff",
	url.PathEscape("😀"), url.PathEscape("\u202eevil"), url.PathEscape("e\u0301\u0301"), url.PathEscape("' OR '1'='1"),
	url.PathEscape(" "), strings.Repeat("a", 8000),
}

// garbageSegment is a garbage path segment: one of the fixed ones, or a
// random escaped string.
func (g *fuzzGen) garbageSegment() string {
	if g.chance(0.5) {
		return pickOne(g, fuzzPathGarbage)
	}
	if g.chance(0.3) {
		return url.PathEscape(strings.ToUpper(g.id(pathKind(g.op.Path, "id")))) // a real id, upper case
	}
	return url.PathEscape(g.randomString())
}

// fuzzRawQueries are query strings as written on the request line.
var fuzzRawQueries = []string{
	"%zz", "limit=%", "&&&", "=", "limit=1&limit=2", "limit=-1", "limit=0", "limit=2147483648",
	"offset=-9223372036854775809", "limit=1e3", "limit=0x10", "offset=" + strings.Repeat("9", 400),
	"dry_run", "dry_run=maybe", "dry_run=true&dry_run=false", "tags=" + url.QueryEscape("😀") + "&tags=",
	"unknown=1", "a[b]=1", "status=%ff", "tags=%c0%ae", "edge_type=%ed%a0%80", "direction=%ff&limit=1", "limit=%00", "direction=" + url.QueryEscape("\u202e"), "window_days=-1", "days=99999999999",
}

// query is the operation's query string: its parameters plausible or
// garbage, sometimes with an unknown one.
func (g *fuzzGen) query(garbage bool) string {
	q := url.Values{}
	for _, p := range g.op.Query {
		if !g.chance(0.5) {
			continue
		}
		n := 1
		if g.chance(0.1) {
			n = 2 // a repeated parameter
		}
		for range n {
			if garbage && g.chance(0.6) {
				q.Add(p.Name, g.garbageQueryValue())
			} else {
				q.Add(p.Name, g.validQueryValue(p))
			}
		}
	}
	if garbage && g.chance(0.3) {
		q.Add(pickOne(g, fuzzUnknownKeys), g.garbageQueryValue())
	}
	if len(q) == 0 {
		if garbage && g.chance(0.3) {
			return "?" + pickOne(g, fuzzRawQueries)
		}
		return ""
	}
	return "?" + q.Encode()
}

func (g *fuzzGen) validQueryValue(p fuzzParam) string {
	switch p.Type {
	case "integer":
		return strconv.Itoa(g.pick(60))
	case "boolean":
		return strconv.FormatBool(g.chance(0.5))
	}
	switch {
	case strings.HasSuffix(p.Name, "_id"):
		return g.id(idKind(p.Name))
	case p.Name == "direction":
		return pickOne(g, []string{"outgoing", "incoming", "both", "out", "in"})
	case p.Name == "status":
		return pickOne(g, []string{"pending", "running", "completed", "failed"})
	case p.Name == "task_type":
		return pickOne(g, []string{"spec", "impl", "test", "review"})
	}
	return pickOne(g, []string{"fuzz", "alpha"})
}

func (g *fuzzGen) garbageQueryValue() string {
	return pickOne(g, []string{
		"", "-1", "0", "-2147483649", "2147483648", "9223372036854775808", "1e308", "NaN", "1.5", "true", "yes",
		"\x00", "\xff\xfe", "😀", "\u202e", strings.Repeat("z", 5000), "' OR '1'='1", uuid.NewString(), g.randomString(),
	})
}

// credentials sets no credentials, the fuzz contributor's token, the
// administrator key, the credential the operation needs (authorize), or
// garbage ones: both headers at once (a 401 wherever a credential counts),
// or one with a value that does not verify (non-ASCII bytes among them,
// which gRPC metadata cannot carry as they are).
func (g *fuzzGen) credentials(h http.Header) {
	switch n := g.pick(10); {
	case n < 2:
	case n < 4:
		h.Set("Authorization", "Bearer "+g.f.token)
	case n < 6:
		h.Set("X-API-Key", allinonetest.AdminKey)
	case n < 8:
		g.authorize(h)
	case n < 9 && g.chance(0.3):
		h.Set("Authorization", "Bearer "+g.f.token)
		h.Set("X-API-Key", allinonetest.AdminKey)
	default:
		h.Set(pickOne(g, []string{"Authorization", "X-API-Key"}), pickOne(g, []string{
			"Bearer", "Bearer ", "Bearer " + strings.Repeat("0", 64), "bearer " + g.f.token, "Basic Zm9vOmJhcg==",
			"Bearer " + g.f.token + " extra", "café", "Bearer 😀", allinonetest.AdminKey + "x", strings.Repeat("k", 4000),
		}))
	}
}

// fuzzOwnCC are the operations only a contributor's own session may
// make: they move its CC (docs/api.md, "Authentication and roles").
var fuzzOwnCC = []string{
	"POST /api/cc/stake", "POST /api/cc/unstake", "POST /api/cc/withdraw",
	"POST /api/contributors/{id}/pledges", "POST /api/ideas/{idea_id}/stake",
}

// fuzzSessionOps are the operations about the session itself.
var fuzzSessionOps = []string{"GET /api/onboarding/session", "POST /api/onboarding/logout"}

// fuzzEitherOps are the operations a contributor may make as well as an
// operator (for itself, or on the ideas it created).
var fuzzEitherOps = []string{
	"POST /api/contributions", "POST /api/ideas", "PATCH /api/ideas/{id}", "PUT /api/ideas/{id}/tags",
	"POST /api/ideas/{id}/questions",
}

// authorize sets the one credential the operation needs: the fuzz
// contributor's session for its own CC and its session, either it or the
// administrator key where a contributor may act too, the administrator
// key (which holds every other role) elsewhere.
func (g *fuzzGen) authorize(h http.Header) {
	h.Del("Authorization")
	h.Del("X-API-Key")
	label := g.op.Method + " " + g.op.Path
	if slices.Contains(fuzzOwnCC, label) || slices.Contains(fuzzSessionOps, label) ||
		(slices.Contains(fuzzEitherOps, label) && g.chance(0.3)) {
		h.Set("Authorization", "Bearer "+g.f.token)
		return
	}
	h.Set("X-API-Key", allinonetest.AdminKey)
}

// endsSession reports whether an operation revokes the session it is sent
// with.
func endsSession(op fuzzOp) bool {
	return op.Method == http.MethodPost && op.Path == "/api/onboarding/logout"
}

// cmpBool orders false before true.
func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// extraHeaders adds, now and then, an idempotency key, a request id, a
// trace context or GitHub headers, plausible or not.
func (g *fuzzGen) extraHeaders(h http.Header) {
	if g.chance(0.2) {
		h.Set("Idempotency-Key", pickOne(g, []string{"fuzz-1", "fuzz-2", uuid.NewString(), "", strings.Repeat("i", 1000), "clé", "a b"}))
	}
	if g.chance(0.1) {
		h.Set("X-Request-Id", pickOne(g, []string{"fuzz", strings.Repeat("r", 500), "a\tb", "ré", "a/b"}))
	}
	if g.chance(0.05) {
		h.Set("Traceparent", pickOne(g, []string{"00-zz-zz-01", "00-" + strings.Repeat("0", 32) + "-" + strings.Repeat("0", 16) + "-01", "garbage"}))
	}
	if g.op.Webhook {
		if g.chance(0.85) {
			h.Set("X-GitHub-Event", pickOne(g, []string{"push", "push", "push", "ping", "issues", "", "PUSH", "😀"}))
		}
		if g.chance(0.6) {
			h.Set("X-GitHub-Delivery", pickOne(g, []string{uuid.NewString(), "fuzz-delivery", strings.Repeat("d", 201), "dé", "a\tb"}))
		}
		if g.chance(0.1) {
			h.Set("X-Hub-Signature-256", pickOne(g, []string{"sha256=00", "sha256=" + strings.Repeat("ab", 32), "sha1=00", "garbage"}))
		}
	}
}

// fuzzUnknownKeys are keys no body has: plain ones, a prototype-pollution
// probe, an empty key and unicode.
var fuzzUnknownKeys = []string{"not_a_field", "__proto__", "", "😀", "id\u0000", "Name", "NAME", "limit"}

// fuzzMalformed are bodies that are not JSON.
var fuzzMalformed = [][]byte{
	[]byte("{"), []byte("}"), []byte(`{"a"`), []byte(`{"a":}`), []byte(`{"a":1`), []byte(`{"a" 1}`), []byte(`{a:1}`),
	[]byte(`{"a":1}}`), []byte(`{"a":01}`), []byte(`{"a":.5}`), []byte(`{"a":+1}`), []byte(`{"a":0x10}`),
	[]byte(`{"a":Infinity}`), []byte(`{"a":undefined}`), []byte(`{"a":"\x"}`), []byte(`{"a":"` + "\n" + `"}`),
	[]byte(`/* comment */ {}`), []byte("\x00\x00\x00"), []byte("\xff\xfe{\x00}\x00"), []byte(`{"a":"\u12"}`),
	[]byte(strings.Repeat("[", 5000)), []byte(strings.Repeat(`{"a":`, 5000)), []byte("<xml/>"),
}

// nastyValue is a value meant to break a field of schema s: a boundary
// number, a wrong type, a hostile string, or deep nesting.
func (g *fuzzGen) nastyValue(s *fuzzSchema) []byte {
	switch g.pick(6) {
	case 0:
		return []byte(pickOne(g, fuzzNumbers))
	case 1:
		return wrongType(s)
	case 2:
		return []byte(pickOne(g, fuzzRawStrings))
	case 3:
		return encodeJSON(g.randomString())
	case 4:
		return pickOne(g, [][]byte{
			[]byte("true"), []byte("null"), []byte("[]"), []byte("{}"), []byte(`[1,"a",null,{}]`), []byte(`{"a":{"b":[1]}}`),
			[]byte(`{"":""}`), []byte(`[[[]]]`), []byte(`"string"`), []byte(`{"__proto__":{"admin":true}}`),
		})
	default:
		depth := pickOne(g, []int{64, 512, 2048, 5000, 10000})
		if g.chance(0.5) {
			return nestedObjects(depth)
		}
		return nestedArrays(depth)
	}
}

// fuzzNumbers are numbers at the edges: of int32, int64 and uint64, of
// float64 (largest, smallest, beyond), negative zero and long mantissas.
var fuzzNumbers = []string{
	"0", "-0", "-1", "1", "0.5", "-0.000001", "0.0000001", "1.0000001", "3.14159265358979323846264338327950288",
	"2147483647", "2147483648", "-2147483649", "4294967296", "9007199254740993",
	"9223372036854775807", "-9223372036854775808", "9223372036854775808", "18446744073709551616",
	"1e15", "1e20", "1e308", "-1e308", "1.7976931348623157e308", "5e-324", "1e-400", "1e400", "-1e400",
	"123456789012345678901234567890", "1E2", "0e0", "999999999999.999999",
}

// fuzzRawStrings are JSON strings as written, including what encoding/json
// would never write: lone surrogates and invalid UTF-8.
var fuzzRawStrings = []string{
	`""`, `" "`, `"\t\n\r"`, `"\u0000"`, `"a\u0000b"`, `"\ud800"`, `"\udc00\ud800"`, "\"\xff\xfe\"", "\"\xc0\xae\"",
	"\"\xed\xa0\x80\"", `"\u202eevil\u202c"`, `"\ufeff"`, `"\u200b\u200c\u200d"`, `"null"`, `"NaN"`, `"Infinity"`,
	`"1e308"`, `"-1"`, `"0x10"`, `"true"`, `"../../etc/passwd"`, `"' OR '1'='1"`, `"\"; DROP TABLE ideas; --"`,
	`"<script>alert(1)</script>"`, `"%s%s%n"`, `"{{model}}"`, `"$(touch /tmp/fuzz)"`, `"\\"`,
	`"2024-02-30T25:61:61Z"`, `"0001-01-01T00:00:00Z"`, `"9999-12-31T23:59:59Z"`, `"10000-01-01T00:00:00Z"`,
	`"00000000-0000-0000-0000-000000000000"`, `"FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF"`,
}

// fuzzUnicode are strings of scripts and code points that trip string
// handling: emoji with joiners, right-to-left and combining marks, the
// largest code point, scripts whose case mapping changes length.
var fuzzUnicode = []string{
	"😀🚀👩‍👩‍👧‍👦", "\u202eevil\u202c", "مرحبا بالعالم", "שלום", "e" + strings.Repeat("\u0301", 100), "\u200b\ufeff",
	"\ufffd", "𝕱𝖔𝖚𝖓𝖉𝖗𝖞", "Ω≈ç√∫", "ᚠᛇᚻ", "\U0010ffff", "日本語テキスト", "ǅİıẞ", "ﷺ", "\x7f",
}

// randomString is a random string: unicode, long, or random code points.
func (g *fuzzGen) randomString() string {
	switch g.pick(5) {
	case 0:
		return pickOne(g, fuzzUnicode)
	case 1:
		return strings.Repeat(pickOne(g, []string{"a", "😀", "e\u0301", "\u0000"}), pickOne(g, []int{41, 256, 4097, 65536}))
	case 2:
		return strings.Repeat(pickOne(g, fuzzUnicode), 1+g.pick(50))
	default:
		var b strings.Builder
		for range 1 + g.pick(40) {
			b.WriteRune(rune(g.pick(0x10ffff)))
		}
		return b.String()
	}
}

// wrongType is a value of another JSON type than the schema's.
func wrongType(s *fuzzSchema) []byte {
	switch s.Type {
	case "string":
		return []byte(`{"a":"b"}`)
	case "number", "integer":
		return []byte(`"12"`)
	case "boolean":
		return []byte(`"true"`)
	case "array":
		return []byte(`{"0":"a"}`)
	case "object":
		return []byte(`["a"]`)
	}
	return []byte(`[{"a":[]}]`)
}

// setMember sets key to value (raw JSON; nil removes it), keeping the
// other members' order.
func setMember(members []fuzzMember, key string, value []byte) []fuzzMember {
	out := make([]fuzzMember, 0, len(members)+1)
	for _, m := range members {
		if m.Key != key {
			out = append(out, m)
		}
	}
	if value == nil {
		// A field whose value is not set keeps its plausible one.
		for _, m := range members {
			if m.Key == key {
				out = append(out, m)
			}
		}
		return out
	}
	return append(out, fuzzMember{key, value})
}

// duplicateKeys repeats each member with another value after it: a JSON
// parser keeps one of the two, and which one it keeps must not matter.
func duplicateKeys(members []fuzzMember) []fuzzMember {
	out := slices.Clone(members)
	for _, m := range members {
		out = append(out, fuzzMember{m.Key, []byte(`null`)})
	}
	if len(members) == 0 {
		out = append(out, fuzzMember{"a", []byte("1")}, fuzzMember{"a", []byte("2")})
	}
	return out
}

// encodeObject writes members as a JSON object, as they are.
func encodeObject(members []fuzzMember) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(encodeJSON(m.Key))
		b.WriteByte(':')
		b.Write(m.Value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// encodeJSON is v as JSON, with <, > and & left as they are.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only plain values are encoded
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func nestedArrays(depth int) []byte {
	return []byte(strings.Repeat("[", depth) + strings.Repeat("]", depth))
}

func nestedObjects(depth int) []byte {
	return []byte(strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth))
}

// truncateJSON cuts a body in the middle.
func truncateJSON(b []byte) []byte {
	if len(b) < 2 {
		return []byte("{")
	}
	return b[:len(b)/2]
}

// truncate quotes b for a report, cut to at most n bytes.
func truncate(b []byte, n int) string {
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:n])) + fmt.Sprintf("… (%d more bytes)", len(b)-n)
}

// TestHTTPFuzzRegressions pins the bugs the fuzzer found, each with the
// requests that showed it and their siblings.
func TestHTTPFuzzRegressions(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		idea := createIdea(t, sys, map[string]any{"name": "Regression"})["id"].(string)
		node := request(t, http.MethodPost, sys.URL("/api/graph/nodes"), map[string]any{"node_type": "n", "payload": map[string]any{}})
		requireStatus(t, http.StatusCreated, node)

		t.Run("a path that is not UTF-8 or holds NUL names nothing", func(t *testing.T) {
			// Was a 500: gRPC refused to send the id, and Postgres a NUL.
			for _, path := range []string{"/api/ideas/%ff%fe", "/api/ideas/%c0%ae/questions", "/api/assets/%00",
				"/api/cc/balances/a%00b", "/api/graph/nodes/%ff"} {
				requireStatus(t, http.StatusNotFound, request(t, http.MethodGet, sys.URL(path), nil))
			}
			r := request(t, http.MethodPost, sys.URL("/api/ideas/%ff/advance"), nil, adminHeader)
			requireStatus(t, http.StatusNotFound, r)
		})

		t.Run("a query value that is not UTF-8 or holds NUL is a 422 naming it", func(t *testing.T) {
			for path, field := range map[string]string{
				"/api/agent/tasks?status=%ff":                                           "status",
				"/api/graph/edges?edge_type=%ed%a0%80":                                  "edge_type",
				"/api/ideas?tags=ok&tags=a%00b":                                         "tags",
				"/api/graph/nodes/" + node.JSON["id"].(string) + "/edges?direction=%c0": "direction",
			} {
				r := request(t, http.MethodGet, sys.URL(path), nil)
				requireStatus(t, http.StatusUnprocessableEntity, r)
				requireFieldError(t, r, field)
			}
		})

		t.Run("a body nested deeper than 64 levels is a 422", func(t *testing.T) {
			// Was a 500 at 4 000 levels (3 000 passed): the gRPC server refused the
			// message as nested past protobuf's limit.
			deep := string(nestedObjects(4000))
			for path, body := range map[string]string{
				"/api/graph/nodes":   `{"node_type":"n","payload":` + deep + `}`,
				"/api/agent/tasks":   `{"direction":"d","task_type":"spec","context":` + deep + `}`,
				"/api/contributions": `{"contributor_id":"c","asset_id":"a","cost_amount":1,"metadata":` + deep + `}`,
			} {
				r := request(t, http.MethodPost, sys.URL(path), body, adminHeader)
				requireStatus(t, http.StatusUnprocessableEntity, r)
			}
			// The body and 63 levels inside it is the most a body may nest.
			r := request(t, http.MethodPost, sys.URL("/api/graph/nodes"),
				`{"node_type":"n","payload":`+string(nestedObjects(63))+`}`)
			requireStatus(t, http.StatusCreated, r)
			r = request(t, http.MethodPost, sys.URL("/api/graph/nodes"),
				`{"node_type":"n","payload":`+string(nestedObjects(64))+`}`)
			requireStatus(t, http.StatusUnprocessableEntity, r)
			require.Contains(t, r.JSON["detail"], "nested deeper than 64 levels")
		})

		t.Run("a NUL in a body string is a 422", func(t *testing.T) {
			// Was a 500 on Postgres, whose text and jsonb cannot hold U+0000.
			for path, body := range map[string]string{
				"/api/ideas/" + idea + "/questions": `{"question":"a\u0000b"}`,
				"/api/graph/nodes":                  `{"node_type":"a\u0000b","payload":{}}`,
				"/api/distributions":                `{"asset_id":"a\u0000b","value_amount":1}`,
				"/api/agent/tasks":                  `{"direction":"d","task_type":"spec","context":{"k":["a\u0000b"]}}`,
				"/api/ideas":                        `{"name":"n","description":"\u0000"}`,
			} {
				r := request(t, http.MethodPost, sys.URL(path), body, adminHeader)
				requireStatus(t, http.StatusUnprocessableEntity, r)
				require.Contains(t, r.JSON["detail"], "NUL", "%s", path)
			}
			r := request(t, http.MethodPost, sys.URL("/api/graph/nodes"), `{"node_type":"n","payload":{"a\u0000":1}}`)
			requireStatus(t, http.StatusUnprocessableEntity, r)
		})

		t.Run("an error quoting a 1 MiB id quotes 4 KiB of it", func(t *testing.T) {
			// Took seconds (13 s under the race detector): the whole id came
			// back as the gRPC status message, percent-encoded at each hop.
			huge := strings.Repeat("😀", (fuzzBodyCap-200)/4)
			for path, body := range map[string]string{
				"/api/cc/stake":      `{"contributor_id":"c","amount_cc":1,"dry_run":true,"idea_id":"` + huge + `"}`,
				"/api/distributions": `{"value_amount":1,"asset_id":"` + huge + `"}`,
			} {
				r := request(t, http.MethodPost, sys.URL(path), body, adminHeader)
				requireStatus(t, http.StatusNotFound, r)
				detail := r.JSON["detail"].(string)
				require.LessOrEqual(t, len(detail), 4096+len("…"), "%s", path)
				require.True(t, strings.HasSuffix(detail, "😀…"), "%s: cut at a character: %.40q", path, detail)
			}
		})

		t.Run("10 000 invalid elements are refused at once", func(t *testing.T) {
			// Took over 10 s: each element's error copied the whole detail
			// built so far.
			for path, body := range map[string]string{
				"/api/automation/usage/snapshots": `{"provider":"openai","metrics":[` + strings.Repeat(`{},`, 9999) + `{}]}`,
				"/api/agent/tasks/claim":          `{"worker_id":"w","task_types":[` + strings.Repeat(`"a",`, 9999) + `"a"]}`,
			} {
				start := time.Now()
				r := request(t, http.MethodPost, sys.URL(path), body)
				requireStatus(t, http.StatusUnprocessableEntity, r)
				require.Less(t, time.Since(start), fuzzTimeout(), "%s", path)
			}
		})
	})
}

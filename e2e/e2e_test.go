// Package e2e_test drives Foundry from the outside: real HTTP through the
// gateway and real gRPC, on every storage engine available.
package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

// client does not follow redirects: a test checks the status each route
// answers itself (the docs redirects among them).
var client = &http.Client{
	Timeout:       30 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// response is a decoded HTTP response.
type response struct {
	Status int
	Header http.Header
	Raw    []byte
	// JSON is the body decoded as a JSON object (nil when it is not one).
	JSON map[string]any
}

// TestMain lets the package run Foundry as processes of their own
// (allinonetest.Proc): the test binary, run again, becomes Foundry.
func TestMain(m *testing.M) { allinonetest.Main(m) }

// startFoundry runs all of Foundry as a process of its own on storage, with
// env added to its environment, logging at info (tests read its request
// lines) and the economy monitor off.
func startFoundry(t *testing.T, storage allinonetest.Storage, env []string, extra ...string) *allinonetest.Proc {
	t.Helper()
	p := allinonetest.NewProc(t, "foundry", "all", storage, append([]string{"-log-level=info", "-monitor-interval=0"}, extra...)...)
	p.WithEnv(env...).Start()
	return p
}

// request sends body (a string is sent as is, anything else as JSON) with
// headers given as "Name: value". A write (any method but GET and HEAD)
// that names no credential goes as the administrator (X-API-Key): most
// tests are about what a write does, not who may make it (the
// authorization tests are; they send anonymous, below, or a credential of
// their own).
func request(t *testing.T, method, url string, body any, headers ...string) response {
	t.Helper()
	if method != http.MethodGet && method != http.MethodHead && !slices.ContainsFunc(headers, namesCredential) {
		headers = append(headers, asAdmin)
	}
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := newRequest(method, url, rd, headers)
	require.NoError(t, err)
	return do(t, req)
}

// do sends req and reads its answer.
func do(t *testing.T, req *http.Request) response {
	t.Helper()
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.JSON)
	validateResponse(t, req, out.Status, out.Header, raw)
	return out
}

// wantPage is the pagination object a list answers for a page of limit at
// offset in a list of total items, has_more saying whether items follow the
// page, on a list that pages by offset alone (next_cursor "").
func wantPage(limit, offset, total int, hasMore bool) map[string]any {
	return map[string]any{"limit": float64(limit), "offset": float64(offset), "total": float64(total), "has_more": hasMore,
		"next_cursor": ""}
}

// withoutCursor is a page of a list that pages by cursor too (the audit
// log, tasks) as wantPage describes it: its next_cursor, which must be
// there exactly when items follow, set aside for the caller.
func withoutCursor(t *testing.T, page map[string]any) (map[string]any, string) {
	t.Helper()
	next, _ := page["next_cursor"].(string)
	require.Equal(t, page["has_more"] == true, next != "", "a cursor exactly when items follow: %v", page)
	out := maps.Clone(page)
	out["next_cursor"] = ""
	return out, next
}

// listPage requires r to be a 200 page of the list called name, in the one
// shape every list of the REST API answers: its items, an array ([] when
// empty, never null or missing), under the list's own name, and a
// pagination object holding exactly limit, offset, total, has_more and
// next_cursor. It returns the items and the pagination.
func listPage(t *testing.T, r response, name string) ([]map[string]any, map[string]any) {
	t.Helper()
	requireStatus(t, http.StatusOK, r)
	require.NotNil(t, r.JSON, "a list is an object, not a bare array: %s", r.Raw)
	raw, ok := r.JSON[name].([]any)
	require.True(t, ok, "the items are an array under %q: %s", name, r.Raw)
	items := make([]map[string]any, len(raw))
	for i, it := range raw {
		items[i], ok = it.(map[string]any)
		require.True(t, ok, "item %d of %q is an object: %s", i, name, r.Raw)
	}
	page, ok := r.JSON["pagination"].(map[string]any)
	require.True(t, ok, "a pagination object beside %q: %s", name, r.Raw)
	require.ElementsMatch(t, []string{"limit", "offset", "total", "has_more", "next_cursor"}, slices.Collect(maps.Keys(page)),
		"the pagination's fields: %s", r.Raw)
	return items, page
}

// Credential headers for request. anonymous sends no credential: it is a
// header Foundry ignores, which only tells request not to add the
// administrator's key. (An empty Authorization header is a 422.)
const (
	asAdmin   = "X-API-Key: " + allinonetest.AdminKey
	anonymous = "X-Test-Anonymous: 1"
)

// namesCredential reports whether h is a credential header, or anonymous.
func namesCredential(h string) bool {
	name, _, _ := strings.Cut(h, ":")
	name = http.CanonicalHeaderKey(strings.TrimSpace(name))
	return name == "Authorization" || name == "X-Api-Key" || h == anonymous
}

// newRequest builds a request with a JSON body (when body is not nil) and
// headers given as "Name: value".
func newRequest(method, url string, body io.Reader, headers []string) (*http.Request, error) {
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return nil, fmt.Errorf("header %q is not Name: value", h)
		}
		req.Header.Set(strings.TrimSpace(name), strings.TrimSpace(value))
	}
	return req, nil
}

// requireStatus checks the status and, for errors, the {"detail"} shape.
func requireStatus(t *testing.T, want int, r response) {
	t.Helper()
	require.Equal(t, want, r.Status, "body: %s", r.Raw)
	if want >= 400 {
		require.Equal(t, "application/json", r.Header.Get("Content-Type"), "body: %s", r.Raw)
		detail, ok := r.JSON["detail"].(string)
		require.True(t, ok, "error body has a string detail: %s", r.Raw)
		require.NotEmpty(t, detail)
	}
}

// auditTarget is anything that serves the REST API: a test system, a
// Foundry process, the chaos test's target.
type auditTarget interface{ URL(path string) string }

// sequencedWithin bounds waitSequenced: the sequencer integrates a
// movement's entries at once after a commit on its replica and otherwise
// within FOUNDRY_AUDIT_SEQUENCE_INTERVAL (200 ms); a ledger that was killed
// holds the sequencer's lease for up to 10 s more.
const sequencedWithin = 60 * time.Second

// waitSequenced polls GET /api/audit/verify until no movement's audit entry
// waits for the sequencer (unsequenced_entries is 0), so that the log (GET
// /api/audit, the checkpoint, investment history's audit_seq) shows every
// movement made before the call, and returns that last answer. A movement
// no longer appends to the log in its own transaction: it queues its
// entries, and the ledger's sequencer integrates them in batches.
func waitSequenced(t *testing.T, sys auditTarget) map[string]any {
	t.Helper()
	deadline := time.Now().Add(sequencedWithin)
	for {
		r := request(t, http.MethodGet, sys.URL("/api/audit/verify"), nil)
		requireStatus(t, http.StatusOK, r)
		n, ok := r.JSON["unsequenced_entries"].(float64)
		require.True(t, ok, "GET /api/audit/verify answers unsequenced_entries: %s", r.Raw)
		if n == 0 {
			return r.JSON
		}
		if time.Now().After(deadline) {
			t.Fatalf("the audit sequencer did not integrate the queue within %s: %v entries still wait, the oldest for %v s: %s",
				sequencedWithin, n, r.JSON["unsequenced_age_seconds"], r.Raw)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// eachEngine runs fn on a fresh system per available storage engine.
func eachEngine(t *testing.T, fn func(t *testing.T, sys *allinonetest.System), extra ...string) {
	t.Helper()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		fn(t, allinonetest.Start(t, allinonetest.NewStorage(t, engine), extra...))
	})
}

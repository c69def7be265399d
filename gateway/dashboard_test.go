package gateway

import (
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
)

// siteHandler is the gateway's root mux without services: the API's
// routing (an empty grpc-gateway mux, so every /api path is unknown), the
// routes the gateway serves itself, and the outermost middleware.
func siteHandler() http.Handler {
	root := http.NewServeMux()
	root.Handle("/api/", newAPIMux(nil)) // no service: nothing is forwarded
	siteRoutes(root)
	return chain(root, requestScope(zap.NewNop(), nil, nil, 0))
}

func get(t *testing.T, h http.Handler, method, target string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// assetRef is how the built page names its script and stylesheet.
var assetRef = regexp.MustCompile(`(?:src|href)="/ui/([^"]+)"`)

// pageAssets returns the asset names index.html refers to.
func pageAssets(t *testing.T, html string) []string {
	t.Helper()
	var names []string
	for _, m := range assetRef.FindAllStringSubmatch(html, -1) {
		names = append(names, m[1])
	}
	return names
}

func TestDashboardPage(t *testing.T) {
	t.Parallel()
	h := siteHandler()
	rec := get(t, h, http.MethodGet, "/")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/html; charset=utf-8", rec.Header().Get("Content-Type"))
	require.Equal(t, "no-cache", rec.Header().Get("Cache-Control"), "a new build's page must be picked up")
	require.Equal(t, dashboardCSP, rec.Header().Get("Content-Security-Policy"))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	body := rec.Body.String()
	require.Contains(t, body, "<title>Foundry</title>")
	require.Contains(t, body, `<div id="app"></div>`)

	// The policy admits no inline script and no eval, and the page needs
	// none: every script is a file of its own origin.
	csp := rec.Header().Get("Content-Security-Policy")
	require.Contains(t, csp, "script-src 'self';")
	require.NotContains(t, csp, "unsafe-inline")
	require.NotContains(t, csp, "unsafe-eval")
	require.Contains(t, csp, "frame-ancestors 'none'")
	scripts := regexp.MustCompile(`(?s)<script([^>]*)>(.*?)</script>`).FindAllStringSubmatch(body, -1)
	require.Len(t, scripts, 1, "the page has one script, the bundle")
	for _, script := range scripts {
		require.Contains(t, script[1], `src="/ui/`, "a script of the page's own origin: %s", script[0])
		require.Empty(t, strings.TrimSpace(script[2]), "no inline script: %s", script[0])
	}
	require.NotContains(t, body, "://", "no external assets")
	require.Len(t, pageAssets(t, body), 3, "the page names its icon, script and stylesheet: %s", body)

	etag := rec.Header().Get("ETag")
	require.Regexp(t, `^"[0-9a-f]{24}"$`, etag)
	again := get(t, h, http.MethodGet, "/", "If-None-Match", etag)
	require.Equal(t, http.StatusNotModified, again.Code, "revalidation by ETag")
	require.Empty(t, again.Body.String())

	head := get(t, h, http.MethodHead, "/")
	require.Equal(t, http.StatusOK, head.Code)
	require.Equal(t, "text/html; charset=utf-8", head.Header().Get("Content-Type"))
	require.Empty(t, head.Body.String())
}

func TestDashboardAssets(t *testing.T) {
	t.Parallel()
	h := siteHandler()
	page := get(t, h, http.MethodGet, "/").Body.String()
	wantType := map[string]string{
		".js":  "text/javascript; charset=utf-8",
		".css": "text/css; charset=utf-8",
		".svg": "image/svg+xml",
	}
	seen := map[string]bool{}
	for _, name := range pageAssets(t, page) {
		ext := name[strings.LastIndex(name, "."):]
		rec := get(t, h, http.MethodGet, dashboardPrefix+name)
		require.Equal(t, http.StatusOK, rec.Code, name)
		require.Equal(t, wantType[ext], rec.Header().Get("Content-Type"), name)
		require.Equal(t, "public, max-age=31536000, immutable", rec.Header().Get("Cache-Control"), name)
		require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"), name)
		require.NotEmpty(t, rec.Body.Bytes(), name)
		seen[ext] = true
	}
	require.Equal(t, map[string]bool{".js": true, ".css": true, ".svg": true}, seen)

	script := pageAssets(t, page)
	js := ""
	for _, name := range script {
		if strings.HasSuffix(name, ".js") {
			js = name
		}
	}
	body := get(t, h, http.MethodGet, dashboardPrefix+js).Body.String()
	require.NotContains(t, body, "eval(", "the CSP forbids eval")
	require.NotContains(t, body, "new Function(", "the CSP forbids eval")
}

// TestDashboardAssetsAreContentHashed: every asset is served as immutable,
// which is right only if its name changes whenever its content does.
func TestDashboardAssetsAreContentHashed(t *testing.T) {
	t.Parallel()
	sub, err := fs.Sub(dashboardFS, "web/dist")
	require.NoError(t, err)
	_, assets, err := loadDashboard(sub)
	require.NoError(t, err)
	require.NotEmpty(t, assets)
	hashed := regexp.MustCompile(`^[a-z0-9_-]+-[A-Za-z0-9_-]{8}\.[a-z0-9]+$`)
	for name := range assets {
		require.Regexp(t, hashed, name, "an asset without a content hash in its name cannot be immutable")
	}
}

func TestDashboardUnknownPathsAreJSON404s(t *testing.T) {
	t.Parallel()
	h := siteHandler()
	for _, tt := range []struct{ method, target string }{
		{http.MethodGet, "/api/nope"},              // the API's routing
		{http.MethodGet, "/api/ideas/x/y/z"},       // likewise
		{http.MethodGet, "/ui/nope.js"},            // no such asset
		{http.MethodGet, "/ui/index.html"},         // the page is at / only
		{http.MethodGet, "/ui/nested/x.js"},        // assets are flat
		{http.MethodGet, "/ideas/123"},             // the page routes by hash: no fallback
		{http.MethodGet, "/elsewhere"},             // any other path
		{http.MethodPost, "/"},                     // the page is read-only
		{http.MethodPost, "/ui/index-abc12345.js"}, // so are its assets
	} {
		rec := get(t, h, tt.method, tt.target)
		require.Equal(t, http.StatusNotFound, rec.Code, "%s %s", tt.method, tt.target)
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"), "%s %s", tt.method, tt.target)
		var body ErrorBody
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), "%s %s: %s", tt.method, tt.target, rec.Body)
		require.Equal(t, "not found", body.Detail, "%s %s", tt.method, tt.target)
		require.Empty(t, rec.Header().Get("Content-Security-Policy"), "only the dashboard's files carry its policy")
	}
}

func TestDashboardBarePrefixRedirectsToThePage(t *testing.T) {
	t.Parallel()
	rec := get(t, siteHandler(), http.MethodGet, dashboardPrefix)
	require.Equal(t, http.StatusFound, rec.Code)
	require.Equal(t, "/", rec.Header().Get("Location"))
}

// TestDashboardBuildBaseMatchesPrefix: the build writes its asset URLs
// with the base in web/vite.config.ts, which must be where they are served.
func TestDashboardBuildBaseMatchesPrefix(t *testing.T) {
	t.Parallel()
	cfg, err := os.ReadFile("web/vite.config.ts")
	require.NoError(t, err)
	require.Contains(t, string(cfg), `base: "`+dashboardPrefix+`"`)
}

package gateway

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

// The dashboard is built from web/src by `make web-build` into web/dist,
// which is committed: the binary carries it, and building Foundry needs no
// Node. index.html is served at / and every other file under /ui/; the page
// routes by URL hash (#/ideas/<id>), so no other path belongs to it and an
// unknown path stays a JSON 404. See docs/dashboard.md.
//
//go:embed web/dist
var dashboardFS embed.FS

// dashboardPrefix is where the dashboard's assets are served; the build's
// base (web/vite.config.ts) must name the same.
const dashboardPrefix = "/ui/"

// dashboardCSP lets the page load its own script, styles and images and
// call its own origin, and nothing else: no inline script, no eval, no
// framing. The API's JSON needs no policy of its own.
const dashboardCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// dashboardFile is one embedded file, ready to serve.
type dashboardFile struct {
	body        []byte
	contentType string
	etag        string
}

// assetTypes are the content types of the files a build writes. An
// explicit table rather than mime.TypeByExtension, which also reads the
// host's mime.types and so could answer differently on another machine.
var assetTypes = map[string]string{
	".js":    "text/javascript; charset=utf-8",
	".css":   "text/css; charset=utf-8",
	".html":  "text/html; charset=utf-8",
	".svg":   "image/svg+xml",
	".png":   "image/png",
	".woff2": "font/woff2",
	".json":  "application/json",
}

// loadDashboard reads the embedded build: the page and its assets by name.
func loadDashboard(fsys fs.FS) (index dashboardFile, assets map[string]dashboardFile, err error) {
	assets = map[string]dashboardFile{}
	err = fs.WalkDir(fsys, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		ct, ok := assetTypes[path.Ext(name)]
		if !ok {
			ct = "application/octet-stream"
		}
		f := dashboardFile{body: body, contentType: ct, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		if name == "index.html" {
			index = f
		} else {
			assets[name] = f
		}
		return nil
	})
	if err == nil && index.body == nil {
		err = fs.ErrNotExist
	}
	return index, assets, err
}

// serveDashboardFile answers with f: conditional requests (If-None-Match
// on the ETag) and HEAD are handled by http.ServeContent.
func serveDashboardFile(w http.ResponseWriter, r *http.Request, name string, f dashboardFile, cacheControl string) {
	h := w.Header()
	h.Set("Content-Type", f.contentType)
	h.Set("Cache-Control", cacheControl)
	h.Set("ETag", f.etag)
	h.Set("Content-Security-Policy", dashboardCSP)
	h.Set("Referrer-Policy", "no-referrer")
	http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
}

// dashboardHandlers returns the handlers of GET / (the page) and of
// GET /ui/ (its assets).
func dashboardHandlers() (page, assets http.Handler) {
	sub, err := fs.Sub(dashboardFS, "web/dist")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	index, files, err := loadDashboard(sub)
	if err != nil {
		panic("gateway: the embedded dashboard build is incomplete: " + err.Error())
	}
	page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The page names its assets by their hashes, so it must be
		// revalidated (cheaply, by ETag) to pick up a new build.
		serveDashboardFile(w, r, "index.html", index, "no-cache")
	})
	assets = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, dashboardPrefix)
		if name == "" {
			// The bare prefix lists nothing: the dashboard is at /.
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		f, ok := files[name]
		if !ok {
			writeJSONError(w, http.StatusNotFound, ErrorBody{Detail: "not found"})
			return
		}
		// Every asset's name carries a hash of its content (the build's
		// naming, checked by TestDashboardAssetsAreContentHashed), so a
		// name never changes meaning and browsers may keep it for good.
		serveDashboardFile(w, r, name, f, "public, max-age=31536000, immutable")
	})
	return page, assets
}

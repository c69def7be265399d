package gateway

import (
	"embed"
	"io/fs"
	"net/http"
	"sync"

	"github.com/foundryhq/foundry/services/platform/authz"
)

// The OpenAPI document is generated from the protos and api.yaml by
// `make generate`; the docs page renders it in the browser with no external
// assets, so it works offline and behind strict networks.
var (
	//go:embed openapi/foundry.swagger.json
	openAPI []byte

	//go:embed docs
	docsFS embed.FS
)

// servedOpenAPI is the document the gateway serves: the generated one with
// the policies' roles (withPolicies), built once.
var servedOpenAPI = sync.OnceValues(func() ([]byte, error) {
	pols, err := authz.Policies()
	if err != nil {
		return nil, err
	}
	return withPolicies(openAPI, pols)
})

func openAPIHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		doc, err := servedOpenAPI()
		if err != nil { // New refused to start with it: unreachable
			writeJSONError(w, http.StatusInternalServerError, ErrorBody{Detail: "internal error"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(doc)
	})
}

func docsHandler() http.Handler {
	sub, err := fs.Sub(docsFS, "docs")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return http.StripPrefix("/api/docs/", http.FileServer(http.FS(sub)))
}

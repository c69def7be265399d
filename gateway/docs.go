package gateway

import (
	"embed"
	"io/fs"
	"net/http"
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

// openAPIHandler serves one version of the document (openapi_doc.go).
func openAPIHandler(version func(documents) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		docs, err := servedDocuments()
		if err != nil { // New refused to start with it: unreachable
			writeJSONError(w, http.StatusInternalServerError, ErrorBody{Detail: "internal error"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(version(docs))
	})
}

func docsHandler() http.Handler {
	sub, err := fs.Sub(docsFS, "docs")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return http.StripPrefix("/api/docs/", http.FileServer(http.FS(sub)))
}

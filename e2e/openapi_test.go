package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/foundryhq/foundry/gateway"
)

// apiDocument is the OpenAPI 3.1 document the gateway serves
// (/api/openapi.json), with a router over its operations.
var apiDocument = sync.OnceValues(func() (routers.Router, error) {
	raw, err := gateway.OpenAPI()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, err
	}
	return legacy.NewRouter(doc)
})

// errorSchema is the body of every failure, for a response to a request
// the document has no operation for (an unknown path, a wrong method).
var errorSchema = sync.OnceValues(func() (*openapi3.Schema, error) {
	raw, err := gateway.OpenAPI()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		return nil, err
	}
	return doc.Components.Schemas["Error"].Value, nil
})

// notAPI are the paths under /api that serve no JSON API: the docs page.
func notAPI(path string) bool { return path == "/api/docs" || strings.HasPrefix(path, "/api/docs/") }

// validateResponse holds every answer the tests get through the gateway to
// the document: its status must be one the operation declares, and its body
// must have exactly the declared fields with their types. An answer to a
// request no operation matches (an unknown route, a wrong method) must be
// an error with the error body. It is what keeps the document true: a
// status, field or type the handlers send and the document does not
// declare fails the test that saw it.
func validateResponse(t *testing.T, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if !strings.HasPrefix(req.URL.Path, "/api/") || notAPI(req.URL.Path) || req.Method == http.MethodHead || req.Method == http.MethodOptions {
		return
	}
	router, err := apiDocument()
	if err != nil {
		t.Fatalf("the OpenAPI document: %v", err)
	}
	route, params, err := router.FindRoute(req)
	if err != nil {
		if status < 400 {
			t.Errorf("%s %s answered %d, but the OpenAPI document has no such operation", req.Method, req.URL.Path, status)
			return
		}
		schema, serr := errorSchema()
		if serr != nil {
			t.Fatalf("the OpenAPI document: %v", serr)
		}
		if verr := validateJSON(schema, body); verr != nil {
			t.Errorf("%s %s answered %d with a body that is no error body: %v\n%s", req.Method, req.URL.Path, status, verr, body)
		}
		return
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		t.Errorf("%s %s answered %d, which the OpenAPI document does not declare:\n%v\nbody: %.2000s", req.Method, req.URL.Path, status, err, body)
	}
}

// validateJSON checks a JSON body against a schema.
func validateJSON(schema *openapi3.Schema, body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return err
	}
	return schema.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

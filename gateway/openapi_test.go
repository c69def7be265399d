package gateway

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	authzv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
	"github.com/foundryhq/foundry/services/platform/authz"
)

// TestOpenAPIRolesComeFromThePolicies: the served document states each
// operation's credentials as the RPC's policy declares them.
func TestOpenAPIRolesComeFromThePolicies(t *testing.T) {
	t.Parallel()
	docs, err := servedDocuments()
	raw := docs.v2
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]map[string]any `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	either := []any{map[string]any{"BearerAuth": []any{}}, map[string]any{"ApiKeyAuth": []any{}}}

	stake := doc.Paths["/api/cc/stake"]["post"]
	require.Equal(t, []any{"contributor"}, stake["x-foundry-roles"])
	require.Equal(t, []any{map[string]any{"field": "dry_run", "roles": []any{"viewer"}}}, stake["x-foundry-conditions"])
	require.Equal(t, "contributor_id", stake["x-foundry-self"])
	require.Equal(t, either, stake["security"])
	require.Equal(t, doc.Paths["/api/ideas/{idea_id}/stake"]["post"]["x-foundry-roles"], stake["x-foundry-roles"], "a second route of one RPC")

	require.Equal(t, []any{"operator"}, doc.Paths["/api/ideas/{idea_id}/advance"]["post"]["x-foundry-roles"])
	require.Equal(t, []any{"admin"}, doc.Paths["/api/tokens"]["post"]["x-foundry-roles"])
	reads := doc.Paths["/api/ideas"]["get"]
	require.Equal(t, []any{"viewer"}, reads["x-foundry-roles"])
	require.Equal(t, append([]any{map[string]any{}}, either...), reads["security"], "a read's credential is optional")
	register := doc.Paths["/api/onboarding/register"]["post"]
	require.Equal(t, []any{}, register["security"])
	require.Equal(t, []any{"public"}, register["x-foundry-roles"])

	for path, ops := range doc.Paths {
		for method, op := range ops {
			require.NotEmpty(t, op["x-foundry-roles"], "%s %s", method, path)
			require.NotNil(t, op["security"], "%s %s", method, path)
		}
	}
}

func TestOpenAPIWithoutAPolicyIsRefused(t *testing.T) {
	t.Parallel()
	doc := []byte(`{"paths": {"/api/x": {"get": {"operationId": "NoService_Nothing"}}}}`)
	_, err := withPolicies(doc, map[string]*authzv1.Policy{"/foundry.x.v1.OtherService/Get": {Allow: []authz.Role{authz.Viewer}}})
	require.EqualError(t, err, "GET /api/x (NoService_Nothing) has no authorization policy")
}

// TestOpenAPIDocumentIsComplete: the served documents declare each
// operation's success statuses and the error body, tag operations by area,
// summarise them in words, describe the routes the gateway serves by hand,
// and are OpenAPI 3.1 and Swagger 2.0.
func TestOpenAPIDocumentIsComplete(t *testing.T) {
	t.Parallel()
	docs, err := servedDocuments()
	require.NoError(t, err)
	var v2 map[string]any
	require.NoError(t, json.Unmarshal(docs.v2, &v2))
	require.Equal(t, "2.0", v2["swagger"])
	ids := operationIDs(v2)
	for id := range successStatuses {
		require.Contains(t, ids, id, "successStatuses names an operation the document has")
	}

	var v3 struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]map[string]struct {
			Summary   string                    `json:"summary"`
			Tags      []string                  `json:"tags"`
			Responses map[string]map[string]any `json:"responses"`
		} `json:"paths"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(docs.v3, &v3))
	require.Equal(t, "3.1.1", v3.OpenAPI)

	statuses := func(path, method string) []string {
		var out []string
		for s := range v3.Paths[path][method].Responses {
			out = append(out, s)
		}
		slices.Sort(out)
		return out
	}
	require.Equal(t, []string{"201", "default"}, statuses("/api/ideas", "post"))
	require.Equal(t, []string{"200", "default"}, statuses("/api/ideas", "get"))
	require.Equal(t, []string{"200", "201", "default"}, statuses("/api/cc/stake", "post"), "a dry run answers 200")
	require.Equal(t, []string{"200", "201", "202", "default"}, statuses("/api/contributions/github", "post"), "a raw route")
	require.Equal(t, "Adds an idea at stage \"none\" unless a stage is given.", v3.Paths["/api/ideas"]["post"].Summary)
	require.Equal(t, []string{"Investment"}, v3.Paths["/api/ideas/{idea_id}/stake"]["post"].Tags)
	require.Equal(t, []string{"Economy"}, v3.Paths["/api/cc/supply"]["get"].Tags)
	require.Equal(t, []string{"Access"}, v3.Paths["/api/onboarding/register"]["post"].Tags)

	idea := v3.Components.Schemas["v1Idea"]
	require.Equal(t, false, idea["additionalProperties"], "an answer has no field but the document's")
	require.Contains(t, idea["required"], "parent_idea_id", "an answer carries every field")
	props := idea["properties"].(map[string]any)
	require.Equal(t, []any{"string", "null"}, props["parent_idea_id"].(map[string]any)["type"], "a wrapper is null when unset")
	require.Equal(t, "string", props["name"].(map[string]any)["type"], "a plain string is never null")
	require.NotContains(t, v3.Components.Schemas["v1CostVector"], "required", "a request sends a cost vector's fields as it likes")

	for path, ops := range v3.Paths {
		for method, op := range ops {
			require.NotEmpty(t, op.Tags, "%s %s", method, path)
			def := op.Responses["default"]["content"].(map[string]any)["application/json"].(map[string]any)["schema"]
			require.Equal(t, map[string]any{"$ref": "#/components/schemas/Error"}, def, "%s %s: every failure is the error body", method, path)
		}
	}
}

// openAPIFile is the served OpenAPI 3.1 document, committed so that what
// reads it without a running gateway (the dashboard's generated types and
// client) reads exactly what is served.
const openAPIFile = "openapi/foundry.openapi.json"

// TestOpenAPIFileIsTheServedDocument fails when the committed 3.1 document
// is not the one the gateway serves; FOUNDRY_UPDATE_DOCS=1 rewrites it
// (make generate does).
func TestOpenAPIFileIsTheServedDocument(t *testing.T) {
	t.Parallel()
	served, err := OpenAPI()
	require.NoError(t, err)
	var pretty bytes.Buffer
	require.NoError(t, json.Indent(&pretty, served, "", "  "))
	pretty.WriteByte('\n')
	if os.Getenv("FOUNDRY_UPDATE_DOCS") == "1" {
		require.NoError(t, os.WriteFile(openAPIFile, pretty.Bytes(), 0o644))
	}
	committed, err := os.ReadFile(openAPIFile)
	require.NoError(t, err)
	require.True(t, bytes.Equal(pretty.Bytes(), committed),
		"gateway/%s is not the document the gateway serves: run make generate (or FOUNDRY_UPDATE_DOCS=1 go test ./gateway -run TestOpenAPIFileIsTheServedDocument) and commit it", openAPIFile)
}

// operationIDs lists a document's operations.
func operationIDs(doc map[string]any) []string {
	var ids []string
	for _, item := range doc["paths"].(map[string]any) {
		for _, o := range item.(map[string]any) {
			if op, ok := o.(map[string]any); ok {
				ids = append(ids, op["operationId"].(string))
			}
		}
	}
	slices.Sort(ids)
	return ids
}

// TestOpenAPITypes64BitIntegersAsIntegers: a 64-bit property or parameter
// is declared an integer, as the gateway renders it; other strings stay.
func TestOpenAPITypes64BitIntegersAsIntegers(t *testing.T) {
	t.Parallel()
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(`{
		"paths": {"/api/x": {"get": {"parameters": [{"name": "seq", "in": "query", "type": "string", "format": "int64"}]}}},
		"definitions": {"v1X": {"properties": {
			"size": {"type": "string", "format": "uint64"},
			"at": {"type": "string", "format": "date-time"},
			"n": {"type": "integer", "format": "int32"},
			"seqs": {"type": "array", "items": {"type": "string", "format": "int64"}}}}}}`), &doc))
	int64Integers(doc)
	got, err := json.Marshal(doc)
	require.NoError(t, err)
	require.JSONEq(t, `{
		"paths": {"/api/x": {"get": {"parameters": [{"name": "seq", "in": "query", "type": "integer", "format": "int64"}]}}},
		"definitions": {"v1X": {"properties": {
			"size": {"type": "integer", "format": "uint64"},
			"at": {"type": "string", "format": "date-time"},
			"n": {"type": "integer", "format": "int32"},
			"seqs": {"type": "array", "items": {"type": "integer", "format": "int64"}}}}}}`, string(got))
}

package gateway

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	authzv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
	"github.com/foundryhq/foundry/services/platform/authz"
)

// TestOpenAPIRolesComeFromThePolicies: the served document states each
// operation's credentials as the RPC's policy declares them.
func TestOpenAPIRolesComeFromThePolicies(t *testing.T) {
	t.Parallel()
	raw, err := servedOpenAPI()
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

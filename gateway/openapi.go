package gateway

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	authzv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
	"github.com/foundryhq/foundry/services/platform/authz"
)

// withPolicies returns the generated OpenAPI document with each operation's
// credentials taken from its RPC's authorization policy, the one table the
// services enforce (so the document cannot drift from it):
//
//   - security: none for public operations; for reads, optional (either
//     credential, or none while public reads are on); otherwise either
//     credential;
//   - x-foundry-roles: the roles that may call, and x-foundry-conditions
//     the roles a boolean field changes them to (dry_run, pay_cc), or a
//     string field of one value (an impact record's kind: revenue);
//   - x-foundry-self: the field a contributor may fill only with its own id.
//
// operationIds are protoc-gen-openapiv2's <Service>_<Method>, with a number
// appended for a method's second route. An operation whose method has no
// policy is an error: a route nobody declared a role for is not served.
func withPolicies(doc []byte, pols map[string]*authzv1.Policy) ([]byte, error) {
	byOperation := make(map[string]*authzv1.Policy, len(pols))
	for method, pol := range pols {
		// "/foundry.ledger.v1.LedgerService/Stake" -> "LedgerService_Stake"
		svc, name, _ := strings.Cut(strings.TrimPrefix(method, "/"), "/")
		byOperation[svc[strings.LastIndex(svc, ".")+1:]+"_"+name] = pol
	}
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("read the OpenAPI document: %w", err)
	}
	paths, _ := d["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		for method, o := range ops {
			op, ok := o.(map[string]any)
			if !ok {
				continue
			}
			id, _ := op["operationId"].(string)
			if strings.HasPrefix(id, "Gateway_") {
				// The gateway's own documents: public, no RPC behind them.
				op["security"], op["x-foundry-roles"] = []any{}, []any{"public"}
				continue
			}
			pol := byOperation[strings.TrimRight(id, "0123456789")]
			if pol == nil {
				return nil, fmt.Errorf("%s %s (%s) has no authorization policy", strings.ToUpper(method), path, id)
			}
			describePolicy(op, pol)
		}
	}
	return json.Marshal(d)
}

// describePolicy sets an operation's security and x-foundry-* fields.
func describePolicy(op map[string]any, pol *authzv1.Policy) {
	either := []any{map[string]any{"BearerAuth": []any{}}, map[string]any{"ApiKeyAuth": []any{}}}
	switch allow := pol.GetAllow(); {
	case slices.Contains(allow, authz.Public):
		op["security"] = []any{}
	case slices.Contains(allow, authz.Viewer):
		op["security"] = append([]any{map[string]any{}}, either...)
	default:
		op["security"] = either
	}
	op["x-foundry-roles"] = roleNames(pol.GetAllow())
	if len(pol.GetWhen()) > 0 {
		var conds []any
		for _, c := range pol.GetWhen() {
			cond := map[string]any{"field": c.GetField(), "roles": roleNames(c.GetAllow())}
			if c.GetEquals() != "" {
				cond["equals"] = c.GetEquals()
			}
			conds = append(conds, cond)
		}
		op["x-foundry-conditions"] = conds
	}
	if pol.GetSelf() != "" {
		op["x-foundry-self"] = pol.GetSelf()
	}
}

func roleNames(roles []authz.Role) []any {
	out := make([]any, len(roles))
	for i, r := range roles {
		out[i] = authz.RoleName(r)
	}
	return out
}

package gateway

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3conv"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/foundryhq/foundry/services/platform/authz"
)

// The gateway serves one API document in two versions, both built once
// from the Swagger 2.0 document protoc-gen-openapiv2 generates (the one
// source, gateway/openapi/foundry.swagger.json):
//
//   - /api/openapi.json, OpenAPI 3.1: what the docs page, the dashboard's
//     types and the e2e tests' response validation read;
//   - /api/openapi-v2.json, Swagger 2.0, for tools that read no later.
//
// The generator knows the protos and the REST mapping but not what the
// gateway does around them, so the gateway completes the document
// (completeV2): the roles of each operation (withPolicies), the success
// statuses the handlers set (successStatuses), the error body every failure
// has, tags by area, plain summaries, and the raw routes the gateway serves
// by hand. kin-openapi converts the result to OpenAPI 3 and upgrades it to
// 3.1 (openapi2conv, openapi3conv), and the fields the JSON renders as null
// when unset are marked nullable from the protos' own descriptors
// (markNullable), so a client generated from the document reads every
// answer. The e2e tests validate every response they get against the 3.1
// document, so a status, field or type it does not declare fails them.

//go:embed openapi_raw.json
var rawRoutesV2 []byte

// documents are the two versions the gateway serves.
type documents struct {
	v2, v3 []byte
}

var servedDocuments = sync.OnceValues(func() (documents, error) {
	pols, err := authz.Policies()
	if err != nil {
		return documents{}, err
	}
	v2, err := withRawRoutes(openAPI)
	if err != nil {
		return documents{}, err
	}
	if v2, err = withPolicies(v2, pols); err != nil {
		return documents{}, err
	}
	if v2, err = completeV2(v2); err != nil {
		return documents{}, err
	}
	v3, err := toV31(v2)
	if err != nil {
		return documents{}, err
	}
	return documents{v2: v2, v3: v3}, nil
})

// OpenAPI returns the OpenAPI 3.1 document the gateway serves at
// /api/openapi.json (the e2e tests validate responses against it).
func OpenAPI() ([]byte, error) {
	d, err := servedDocuments()
	return d.v3, err
}

// successStatuses are the statuses an operation answers on success when
// they are not just 200: the handlers set them (rpcmeta.SetHTTPStatus), and
// the e2e tests' validation fails on a status the document does not list,
// which keeps this table and the handlers in step.
var successStatuses = map[string][]string{
	"PortfolioService_CreateIdea":      {"201"},
	"PortfolioService_AddQuestion":     {"201"},
	"AgentService_CreateTask":          {"201"},
	"AgentService_CreatePrompt":        {"201"},
	"AgentService_RunLoopOnce":         {"200", "202"}, // 202: the pass goes on after the answer
	"LedgerService_Register":           {"201"},
	"LedgerService_CreateToken":        {"201"},
	"LedgerService_Deposit":            {"201", "200"}, // 200: a repeated reference, nothing new
	"LedgerService_Stake":              {"201", "200"}, // 200: a dry run
	"LedgerService_CreatePledge":       {"201"},
	"LedgerService_RecordImpact":       {"201", "200"}, // 200: a repeated reference, nothing new
	"LedgerService_CreateAsset":        {"201"},
	"LedgerService_CreateContribution": {"201"},
	"LedgerService_CreateDistribution": {"201"},
	"OpsService_IngestUsageSnapshot":   {"201"},
	"OpsService_UpsertNode":            {"201", "200"}, // 200: an existing node updated
	"OpsService_CreateEdge":            {"201"},
}

// statusText describes a success status in the document.
var statusText = map[string]string{
	"200": "OK",
	"201": "Created",
	"202": "Accepted: the work goes on after the answer",
}

// area is the tag of an operation, by its path: the document reads as the
// product's areas, not as the gRPC services behind them.
func area(path string) string {
	switch {
	case strings.HasSuffix(path, "/stake") || strings.HasSuffix(path, "/invest-preview") || strings.HasSuffix(path, "/impact") ||
		path == "/api/cc/unstake" ||
		strings.HasSuffix(path, "/investments") || strings.HasSuffix(path, "/investment-history") || strings.HasSuffix(path, "/pledges"):
		return "Investment"
	case path == "/api/ideas/storage":
		return "Ops"
	case strings.HasPrefix(path, "/api/ideas"):
		return "Ideas"
	case strings.HasPrefix(path, "/api/cc/") || strings.HasPrefix(path, "/api/incidents"):
		return "Economy"
	case strings.HasPrefix(path, "/api/audit") || strings.HasPrefix(path, "/api/assets") ||
		strings.HasPrefix(path, "/api/contributions") || strings.HasPrefix(path, "/api/distributions") ||
		strings.HasPrefix(path, "/api/contributors/"):
		return "Ledger"
	case strings.HasPrefix(path, "/api/agent"):
		return "Agent"
	case strings.HasPrefix(path, "/api/graph"):
		return "Graph"
	case strings.HasPrefix(path, "/api/onboarding") || strings.HasPrefix(path, "/api/tokens") || path == "/api/whoami":
		return "Access"
	}
	return "Ops"
}

// areas are the document's tags, in reading order.
var areas = []map[string]any{
	{"name": "Ideas", "description": "The portfolio: ideas ranked by their free-energy score, their stages, tags, questions, progress and right-sizing."},
	{"name": "Investment", "description": "Staking CC on ideas, unstaking (with its cooldown), pledges, each contributor's positions, and an idea's impact records, which grow its stakers' attribution and pay them its revenue."},
	{"name": "Ledger", "description": "Assets, contributions, value distributions, and the hash-chained audit log with its signed checkpoints and proofs."},
	{"name": "Economy", "description": "Deposits and withdrawals, balances, supply and reserve, the exchange rate and its oracle, and the emergency freeze."},
	{"name": "Agent", "description": "The agent task queue, its attention flags and metrics, prompt A/B statistics, failure diagnostics and the pipeline loop."},
	{"name": "Ops", "description": "Readiness, persistence, runtime telemetry, automation usage and the economy monitor's coherence check."},
	{"name": "Graph", "description": "The knowledge graph: nodes and the edges between them."},
	{"name": "Access", "description": "Registering a contributor (trust on first use), sessions, API tokens and who the caller is."},
}

// withRawRoutes adds the routes the gateway serves by hand (openapi_raw.json)
// and the definitions they and every error use.
func withRawRoutes(raw []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var extra map[string]any
	if err := json.Unmarshal(rawRoutesV2, &extra); err != nil {
		return nil, fmt.Errorf("read openapi_raw.json: %w", err)
	}
	paths, _ := doc["paths"].(map[string]any)
	extraPaths, _ := extra["paths"].(map[string]any)
	for path, item := range extraPaths {
		if _, dup := paths[path]; dup {
			return nil, fmt.Errorf("openapi_raw.json: %s is already generated", path)
		}
		paths[path] = item
	}
	defs, _ := doc["definitions"].(map[string]any)
	maps.Copy(defs, extra["definitions"].(map[string]any))
	return json.Marshal(doc)
}

// completeV2 adds to the generated Swagger 2.0 document what the gateway
// knows and the generator does not (see the top of this file).
func completeV2(raw []byte) ([]byte, error) {
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		for method, o := range item.(map[string]any) {
			op, ok := o.(map[string]any)
			if !ok {
				continue
			}
			id, _ := op["operationId"].(string)
			if err := completeResponses(op, strings.TrimRight(id, "0123456789")); err != nil {
				return nil, fmt.Errorf("%s %s: %w", strings.ToUpper(method), path, err)
			}
			op["tags"] = []any{area(path)}
			plainSummary(op, id)
		}
	}
	doc["tags"] = areas
	int64Integers(doc)
	return json.Marshal(doc)
}

// int64Integers types every 64-bit integer, a property or a parameter, as
// the integer the gateway's JSON carries (render_int64.go), where the
// generator types it a string as protojson writes it.
func int64Integers(v any) {
	switch v := v.(type) {
	case map[string]any:
		if f, _ := v["format"].(string); v["type"] == "string" && (f == "int64" || f == "uint64") {
			v["type"] = "integer"
		}
		for _, x := range v {
			int64Integers(x)
		}
	case []any:
		for _, x := range v {
			int64Integers(x)
		}
	}
}

// completeResponses declares the operation's success statuses (the
// generator's 200, renumbered) and the error body every failure has.
func completeResponses(op map[string]any, id string) error {
	responses, _ := op["responses"].(map[string]any)
	ok, found := responses["200"].(map[string]any)
	if !found {
		return fmt.Errorf("no success response")
	}
	delete(responses, "200")
	statuses := successStatuses[id]
	if statuses == nil {
		statuses = []string{"200"}
	}
	for _, s := range statuses {
		r := maps.Clone(ok)
		r["description"] = statusText[s]
		responses[s] = r
	}
	responses["default"] = map[string]any{
		"description": "The request failed: the status says how (docs/api.md#errors), the body says why.",
		"schema":      map[string]any{"$ref": "#/definitions/Error"},
	}
	return nil
}

// plainSummary makes the generator's summary, the RPC's comment ("CreateIdea
// adds an idea …"), read as words ("Adds an idea …"), its first sentence
// only; the rest goes to the description.
func plainSummary(op map[string]any, id string) {
	s, _ := op["summary"].(string)
	_, method, _ := strings.Cut(strings.TrimRight(id, "0123456789"), "_")
	if rest, ok := strings.CutPrefix(s, method+" "); ok && method != "" {
		r, n := utf8.DecodeRuneInString(rest)
		s = string(unicode.ToUpper(r)) + rest[n:]
	}
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ". "); i > 0 {
		more := s[i+2:]
		s = s[:i+1]
		if d, _ := op["description"].(string); d != "" {
			more += "\n\n" + d
		}
		op["description"] = more
	}
	if s != "" {
		op["summary"] = s
	}
}

// toV31 converts the completed Swagger 2.0 document to OpenAPI 3.1.
func toV31(v2 []byte) ([]byte, error) {
	var d2 openapi2.T
	if err := json.Unmarshal(v2, &d2); err != nil {
		return nil, fmt.Errorf("read the Swagger 2.0 document: %w", err)
	}
	d3, err := openapi2conv.ToV3(&d2)
	if err != nil {
		return nil, fmt.Errorf("convert the document to OpenAPI 3: %w", err)
	}
	if err := d3.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the converted OpenAPI 3 document is not valid: %w", err)
	}
	// Upgrade rewrites the schemas into their 3.1 form (nullable becomes a
	// type array) and names the latest 3.x it knows, 3.2; nothing here
	// needs 3.2, and 3.1 is what the docs page and client generators read.
	openapi3conv.Upgrade(d3)
	d3.OpenAPI = "3.1.1"
	errorsAreJSON(d3)
	if err := markNullable(d3); err != nil {
		return nil, err
	}
	if err := d3.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI 3.1 document is not valid: %w", err)
	}
	return d3.MarshalJSON()
}

// markNullable states what the gateway's JSON is, which the generator
// cannot know (protojson with EmitUnpopulated renders every field): a
// property with presence (a message, a wrapper, an optional scalar; no list
// or map) is null when unset, where the generator types a wrapper as its
// plain value and a message as its $ref; a message has no property but its
// fields (additionalProperties false); and an answer carries every one of
// them (required), but for the schemas a request body uses too, whose
// fields a client may leave out. Each schema is found from its message by
// the generator's name for it (schemaMessages).
func markNullable(doc *openapi3.T) error {
	messages := schemaMessages()
	inRequests := requestSchemas(doc)
	for name, ref := range doc.Components.Schemas {
		md, ok := messages[name]
		if !ok || ref.Value == nil {
			continue
		}
		ref.Value.AdditionalProperties = openapi3.AdditionalProperties{Has: new(false)}
		var required []string
		for prop, p := range ref.Value.Properties {
			fd := md.Fields().ByName(protoreflect.Name(prop))
			if fd != nil && fd.ContainingOneof() != nil {
				// An optional scalar or a oneof member: protojson leaves it
				// out when unset (EmitUnpopulated skips oneofs), and it is
				// never null.
				continue
			}
			required = append(required, prop)
			if fd == nil || !fd.HasPresence() || fd.IsList() || fd.IsMap() {
				continue
			}
			ref.Value.Properties[prop] = nullable(p)
		}
		if !inRequests[name] {
			slices.Sort(required)
			ref.Value.Required = required
		}
	}
	return nil
}

// nullable is p, or null.
func nullable(p *openapi3.SchemaRef) *openapi3.SchemaRef {
	if p.Ref != "" {
		return &openapi3.SchemaRef{Value: &openapi3.Schema{AnyOf: openapi3.SchemaRefs{p,
			{Value: &openapi3.Schema{Type: &openapi3.Types{openapi3.TypeNull}}}}}}
	}
	v := *p.Value
	if v.Type != nil && !v.Type.Includes(openapi3.TypeNull) {
		types := append(openapi3.Types{}, *v.Type...)
		types = append(types, openapi3.TypeNull)
		v.Type = &types
	}
	return &openapi3.SchemaRef{Value: &v}
}

// schemaMessages maps the generator's schema names to the public messages
// they stand for: "v1Idea" for foundry.portfolio.v1.Idea, and the package's
// camel-cased name when two packages have a message of one name
// ("foundryLedgerV1Pagination").
func schemaMessages() map[string]protoreflect.MessageDescriptor {
	out := map[string]protoreflect.MessageDescriptor{}
	short := map[string][]protoreflect.MessageDescriptor{}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		pkg := string(fd.Package())
		if !strings.HasPrefix(pkg, "foundry.") || strings.HasPrefix(pkg, "foundry.internal.") {
			return true
		}
		for i := range fd.Messages().Len() {
			md := fd.Messages().Get(i)
			parts := strings.Split(pkg, ".")
			short[parts[len(parts)-1]+string(md.Name())] = append(short[parts[len(parts)-1]+string(md.Name())], md)
			var camel strings.Builder
			for k, p := range parts {
				if k == 0 {
					camel.WriteString(p)
					continue
				}
				camel.WriteString(strings.ToUpper(p[:1]) + p[1:])
			}
			out[camel.String()+string(md.Name())] = md
		}
		return true
	})
	for name, mds := range short {
		if len(mds) == 1 {
			out[name] = mds[0]
		}
	}
	return out
}

// requestSchemas are the component schemas a request body uses, directly
// or through another schema.
func requestSchemas(doc *openapi3.T) map[string]bool {
	seen := map[string]bool{}
	var walk func(*openapi3.SchemaRef)
	walk = func(r *openapi3.SchemaRef) {
		if r == nil {
			return
		}
		if name, ok := strings.CutPrefix(r.Ref, "#/components/schemas/"); ok {
			if seen[name] {
				return
			}
			seen[name] = true
		}
		v := r.Value
		if v == nil {
			return
		}
		for _, p := range v.Properties {
			walk(p)
		}
		walk(v.Items)
		for _, s := range v.AnyOf {
			walk(s)
		}
		if v.AdditionalProperties.Schema != nil {
			walk(v.AdditionalProperties.Schema)
		}
	}
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value == nil {
				continue
			}
			for _, mt := range op.RequestBody.Value.Content {
				walk(mt.Schema)
			}
		}
	}
	return seen
}

// errorsAreJSON makes every operation's error response JSON: the converter
// gives it the operation's own media types, and a text route (the audit
// checkpoint) still fails with the JSON error body.
func errorsAreJSON(doc *openapi3.T) {
	for _, item := range doc.Paths.Map() {
		for _, op := range item.Operations() {
			def := op.Responses.Default()
			if def == nil || def.Value == nil {
				continue
			}
			for mt, c := range def.Value.Content {
				if mt != "application/json" {
					delete(def.Value.Content, mt)
					def.Value.Content["application/json"] = c
				}
			}
		}
	}
}

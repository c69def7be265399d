package cli

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// op is one API operation, named once for both transports: its gRPC method
// and its REST route as gateway/api.yaml maps it.
type op struct {
	// grpc is the full gRPC method name.
	grpc string
	// http is "METHOD /api/path/{field}": path fields come from the
	// request; a GET sends the other fields as the query, any other method
	// as the JSON body (none when no field is left).
	http string
	// out names the response field that is the HTTP body (api.yaml's
	// response_body); empty when the body is the whole response.
	out string
	// text names the response's string field that the REST body is, as
	// plain text rather than JSON (a signed note, a key: formats read byte
	// for byte); empty for a JSON body.
	text string
	// cred is which configured credential the operation prefers.
	cred credential
}

// credential is which configured credential an operation sends. Every
// operation sends one when one is configured: Foundry's roles decide what
// it may do (docs/api.md), and a read with a valid credential is a read.
type credential int

const (
	// credAny sends the token (a session or an API token) when one is
	// set, else the administrator key.
	credAny credential = iota
	// credToken sends only the token: the operation acts for the session's
	// own contributor (its CC), which the administrator key cannot.
	credToken
	// credAdmin sends the administrator key when one is set, else the
	// token (an operator's or admin's API token).
	credAdmin
	// credNone sends no credential: a public operation that acts for
	// nobody yet (registration), which has no use for one.
	credNone
)

// The operations the commands use.
var (
	opListIdeas   = op{grpc: portfoliov1.PortfolioService_ListIdeas_FullMethodName, http: "GET /api/ideas"}
	opGetIdea     = op{grpc: portfoliov1.PortfolioService_GetIdea_FullMethodName, http: "GET /api/ideas/{id}", out: "idea"}
	opCreateIdea  = op{grpc: portfoliov1.PortfolioService_CreateIdea_FullMethodName, http: "POST /api/ideas", out: "idea"}
	opAdvanceIdea = op{grpc: portfoliov1.PortfolioService_AdvanceIdea_FullMethodName,
		http: "POST /api/ideas/{idea_id}/advance", out: "idea", cred: credAdmin}
	opSetIdeaStage = op{grpc: portfoliov1.PortfolioService_SetIdeaStage_FullMethodName,
		http: "POST /api/ideas/{idea_id}/stage", out: "idea", cred: credAdmin}
	// An impact record: usage takes a worker's or operator's token, revenue
	// the administrator (credAny: the token when one is set).
	opRecordImpact = op{grpc: ledgerv1.LedgerService_RecordImpact_FullMethodName, http: "POST /api/ideas/{idea_id}/impact"}
	opListImpact   = op{grpc: ledgerv1.LedgerService_ListIdeaImpact_FullMethodName, http: "GET /api/ideas/{idea_id}/impact"}

	opListTasks  = op{grpc: agentv1.AgentService_ListTasks_FullMethodName, http: "GET /api/agent/tasks"}
	opClaimTask  = op{grpc: agentv1.AgentService_ClaimTask_FullMethodName, http: "POST /api/agent/tasks/claim"}
	opUpdateTask = op{grpc: agentv1.AgentService_UpdateTask_FullMethodName, http: "PATCH /api/agent/tasks/{id}", out: "task"}
	opCreateTask = op{grpc: agentv1.AgentService_CreateTask_FullMethodName, http: "POST /api/agent/tasks", out: "task", cred: credAdmin}
	opGetTask    = op{grpc: agentv1.AgentService_GetTask_FullMethodName, http: "GET /api/agent/tasks/{id}", out: "task"}
	opRetryTask  = op{grpc: agentv1.AgentService_RetryTask_FullMethodName, http: "POST /api/agent/tasks/{id}/retry", out: "task",
		cred: credAdmin}
	opRetryTasks = op{grpc: agentv1.AgentService_RetryTasks_FullMethodName, http: "POST /api/agent/tasks/retry", cred: credAdmin}
	opCancelTask = op{grpc: agentv1.AgentService_CancelTask_FullMethodName, http: "POST /api/agent/tasks/{id}/cancel", out: "task",
		cred: credAdmin}

	opCreateAsset = op{grpc: ledgerv1.LedgerService_CreateAsset_FullMethodName, http: "POST /api/assets", out: "asset", cred: credAdmin}
	opGetAsset    = op{grpc: ledgerv1.LedgerService_GetAsset_FullMethodName, http: "GET /api/assets/{id}", out: "asset"}
	opListAssets  = op{grpc: ledgerv1.LedgerService_ListAssets_FullMethodName, http: "GET /api/assets"}

	opCreateContribution = op{grpc: ledgerv1.LedgerService_CreateContribution_FullMethodName,
		http: "POST /api/contributions", out: "contribution"}
	opGetContribution = op{grpc: ledgerv1.LedgerService_GetContribution_FullMethodName,
		http: "GET /api/contributions/{id}", out: "contribution"}
	opReviewContribution = op{grpc: ledgerv1.LedgerService_ReviewContribution_FullMethodName,
		http: "POST /api/contributions/{id}/review", out: "contribution", cred: credAdmin}
	opListAssetContributions = op{grpc: ledgerv1.LedgerService_ListAssetContributions_FullMethodName,
		http: "GET /api/assets/{asset_id}/contributions"}
	opListContributorContributions = op{grpc: ledgerv1.LedgerService_ListContributorContributions_FullMethodName,
		http: "GET /api/contributors/{contributor_id}/contributions"}
	opListContributors = op{grpc: ledgerv1.LedgerService_ListContributors_FullMethodName, http: "GET /api/contributors"}

	opCreateDistribution = op{grpc: ledgerv1.LedgerService_CreateDistribution_FullMethodName,
		http: "POST /api/distributions", out: "distribution", cred: credAdmin}
	opGetDistribution = op{grpc: ledgerv1.LedgerService_GetDistribution_FullMethodName,
		http: "GET /api/distributions/{id}", out: "distribution"}
	opListAssetDistributions = op{grpc: ledgerv1.LedgerService_ListAssetDistributions_FullMethodName,
		http: "GET /api/assets/{asset_id}/distributions"}

	opRegister    = op{grpc: ledgerv1.LedgerService_Register_FullMethodName, http: "POST /api/onboarding/register", cred: credNone}
	opGetSession  = op{grpc: ledgerv1.LedgerService_GetSession_FullMethodName, http: "GET /api/onboarding/session", cred: credToken}
	opLogout      = op{grpc: ledgerv1.LedgerService_Logout_FullMethodName, http: "POST /api/onboarding/logout", cred: credToken}
	opWhoami      = op{grpc: ledgerv1.LedgerService_GetPrincipal_FullMethodName, http: "GET /api/whoami"}
	opCreateToken = op{grpc: ledgerv1.LedgerService_CreateToken_FullMethodName, http: "POST /api/tokens", cred: credAdmin}
	opListTokens  = op{grpc: ledgerv1.LedgerService_ListTokens_FullMethodName, http: "GET /api/tokens", cred: credAdmin}
	opRevokeToken = op{grpc: ledgerv1.LedgerService_RevokeToken_FullMethodName, http: "DELETE /api/tokens/{id}",
		out: "api_token", cred: credAdmin}
	opGetBalances = op{grpc: ledgerv1.LedgerService_GetBalances_FullMethodName,
		http: "GET /api/cc/balances/{contributor_id}"}
	opStake    = op{grpc: ledgerv1.LedgerService_Stake_FullMethodName, http: "POST /api/cc/stake", cred: credToken}
	opUnstake  = op{grpc: ledgerv1.LedgerService_Unstake_FullMethodName, http: "POST /api/cc/unstake", cred: credToken}
	opDeposit  = op{grpc: ledgerv1.LedgerService_Deposit_FullMethodName, http: "POST /api/cc/deposit", cred: credAdmin}
	opWithdraw = op{grpc: ledgerv1.LedgerService_Withdraw_FullMethodName, http: "POST /api/cc/withdraw", cred: credToken}
	opSupply   = op{grpc: ledgerv1.LedgerService_GetSupply_FullMethodName, http: "GET /api/cc/supply"}
	opRate     = op{grpc: ledgerv1.LedgerService_GetExchangeRate_FullMethodName, http: "GET /api/cc/exchange-rate"}

	// opWhoamiToken asks who the token is, whatever key is configured:
	// login checks the token it is given, logout the one it could not log
	// out.
	opWhoamiToken = op{grpc: ledgerv1.LedgerService_GetPrincipal_FullMethodName, http: "GET /api/whoami", cred: credToken}

	opFreeze         = op{grpc: ledgerv1.LedgerService_Freeze_FullMethodName, http: "POST /api/incidents/freeze"}
	opUnfreeze       = op{grpc: ledgerv1.LedgerService_Unfreeze_FullMethodName, http: "POST /api/incidents/unfreeze", cred: credAdmin}
	opIncidentStatus = op{grpc: ledgerv1.LedgerService_GetIncidentStatus_FullMethodName, http: "GET /api/incidents/status"}
	opListIncidents  = op{grpc: ledgerv1.LedgerService_ListIncidents_FullMethodName, http: "GET /api/incidents"}
	opListAudit      = op{grpc: ledgerv1.LedgerService_ListAuditEntries_FullMethodName, http: "GET /api/audit"}
	opVerifyAudit    = op{grpc: ledgerv1.LedgerService_VerifyAudit_FullMethodName, http: "GET /api/audit/verify"}
	opRepairAudit    = op{grpc: ledgerv1.LedgerService_RepairAudit_FullMethodName, http: "POST /api/audit/repair", cred: credAdmin}
	// opVerifyAuditFull is the walk from the first entry, an administrator's.
	opVerifyAuditFull = op{grpc: ledgerv1.LedgerService_VerifyAudit_FullMethodName, http: "GET /api/audit/verify", cred: credAdmin}
	opAuditCheckpoint = op{grpc: ledgerv1.LedgerService_GetAuditCheckpoint_FullMethodName, http: "GET /api/audit/checkpoint",
		text: "note"}
	opAuditVerifierKey = op{grpc: ledgerv1.LedgerService_GetAuditVerifierKey_FullMethodName, http: "GET /api/audit/verifier-key",
		text: "key"}
	opAuditProof       = op{grpc: ledgerv1.LedgerService_GetAuditProof_FullMethodName, http: "GET /api/audit/entries/{seq}/proof"}
	opAuditConsistency = op{grpc: ledgerv1.LedgerService_GetAuditConsistency_FullMethodName, http: "GET /api/audit/consistency"}
	opAuditKeyChanges  = op{grpc: ledgerv1.LedgerService_ListAuditKeyChanges_FullMethodName, http: "GET /api/audit/key-changes"}

	opReady = op{grpc: opsv1.OpsService_Ready_FullMethodName, http: "GET /api/ready"}
)

// anonymousPrincipal is the principal of a gRPC call without a credential.
var anonymousPrincipal = authz.Principal{Kind: authz.Anonymous}.Encode()

// transport carries one operation. Both implementations take and fill
// the same messages and return the same JSON, so a command never knows
// which one it uses.
type transport interface {
	// call sends in with the metadata md (lowercase gRPC names; REST sends
	// them as headers), fills out (the RPC's whole response) and returns
	// the response as the REST API renders it.
	call(ctx context.Context, o op, in, out proto.Message, md map[string]string) ([]byte, error)
	close() error
	// target names where the transport talks to, for messages.
	target() string
}

// marshalOptions are the gateway's JSON conventions (gateway.go): the
// API's field names, every field present. The gRPC transport renders its
// responses with them so both transports print the same JSON.
var marshalOptions = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

// unmarshalOptions read the API's JSON into messages; a field newer than
// this client is skipped rather than fatal.
var unmarshalOptions = protojson.UnmarshalOptions{DiscardUnknown: true}

// client adds the settings to a transport: credentials, the time limit,
// hints on refusals.
type client struct {
	t       transport
	cfg     config
	timeout time.Duration
}

// newClient connects as cfg says: gRPC when an address is set, else REST.
func newClient(cfg config, timeout time.Duration) (*client, error) {
	var t transport
	var err error
	if cfg.GRPCAddr != "" {
		t, err = newGRPCTransport(cfg.GRPCAddr, cfg.ServiceKey)
	} else {
		t = newRESTTransport(cfg.URL)
	}
	if err != nil {
		return nil, err
	}
	return &client{t: t, cfg: cfg, timeout: timeout}, nil
}

func (c *client) close() error { return c.t.close() }

// callOpts are a call's optional extras.
type callOpts struct {
	// idempotencyKey is sent as Idempotency-Key when not empty.
	idempotencyKey string
}

// call performs o: in is its request, out its response message; the JSON
// as the REST API renders it is returned too.
func (c *client) call(ctx context.Context, o op, in, out proto.Message, opts callOpts) ([]byte, error) {
	md := c.metadata(o.cred, opts)
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	raw, err := c.t.call(ctx, o, in, out, md)
	c.hint(o.cred, err)
	return raw, err
}

// send performs a request on the REST API as written (api): method,
// path with its query, and a JSON body (nil for none), with the configured
// credential as any other operation sends it. The answer's body is
// returned whatever its status; a status of 300 or more is an apiError
// too.
func (c *client) send(ctx context.Context, method, path string, body []byte, opts callOpts) ([]byte, error) {
	r, ok := c.t.(*restTransport)
	if !ok {
		return nil, usagef("only REST sends requests by route: use --url")
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	raw, err := r.send(ctx, method, path, body, c.metadata(credAny, opts))
	c.hint(credAny, err)
	return raw, err
}

// metadata is what a call with the credential kind cred carries: the
// configured credential it prefers, and the options' keys.
func (c *client) metadata(cred credential, opts callOpts) map[string]string {
	md := map[string]string{}
	token, key := c.cfg.Token != "" && cred != credNone, c.cfg.APIKey != "" && cred != credNone
	switch {
	case cred == credAdmin && key, cred == credAny && key && !token:
		md[rpcmeta.APIKeyKey] = c.cfg.APIKey
	case token:
		md[rpcmeta.AuthorizationKey] = "Bearer " + c.cfg.Token
	case c.cfg.GRPCAddr != "" && c.cfg.ServiceKey != "":
		// A gRPC call with the service key and no credential would be
		// taken for another Foundry service's; the client says it is
		// nobody (which needs no gateway's signature), and gets what an
		// anonymous REST request gets. Without the service key, a call
		// without a credential is refused, and the hint says which to set.
		md[authz.MetadataKey] = anonymousPrincipal
	}
	if opts.idempotencyKey != "" {
		md[rpcmeta.IdempotencyKeyKey] = opts.idempotencyKey
	}
	return md
}

// hint adds to a refusal for want of a credential which setting would
// have sent one.
func (c *client) hint(cred credential, err error) {
	token, key := c.cfg.Token != "", c.cfg.APIKey != ""
	var api *apiError
	if errors.As(err, &api) && (api.Status == http.StatusUnauthorized || api.Status == http.StatusForbidden) {
		switch {
		case cred == credToken && !token:
			api.Hint = "no session token is set: --token, FOUNDRY_TOKEN or \"token\" in the config file, where foundry register keeps it"
		case api.Status == http.StatusUnauthorized && !token && !key:
			api.Hint = "no credential is set: --token (a session or API token) or --api-key, FOUNDRY_TOKEN or FOUNDRY_API_KEY, or the config file"
		}
	}
}

// responseBody is the message the REST body holds: out, or its field o.out.
func responseBody(o op, out proto.Message) proto.Message {
	if o.out == "" {
		return out
	}
	m := out.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(o.out))
	if fd == nil {
		panic(fmt.Sprintf("%s has no field %q", m.Descriptor().FullName(), o.out)) // a mistake in the op table
	}
	return m.Mutable(fd).Message().Interface()
}

// textField is the string field of out that o's REST body is (text ops).
func textField(o op, out proto.Message) (protoreflect.Message, protoreflect.FieldDescriptor) {
	m := out.ProtoReflect()
	fd := m.Descriptor().Fields().ByName(protoreflect.Name(o.text))
	if fd == nil || fd.Kind() != protoreflect.StringKind {
		panic(fmt.Sprintf("%s has no string field %q", m.Descriptor().FullName(), o.text)) // a mistake in the op table
	}
	return m, fd
}

// apiError is Foundry's refusal: the HTTP status (for gRPC, the status the
// gateway would answer), the detail and the invalid fields.
type apiError struct {
	Status int
	Detail string
	Fields []fieldError
	// Hint says what the client can do about it, when it knows.
	Hint string
}

// fieldError names one invalid field.
type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *apiError) Error() string {
	var b strings.Builder
	b.WriteString(e.Detail)
	for _, f := range e.Fields {
		if line := f.Field + ": " + f.Message; !strings.Contains(e.Detail, line) {
			b.WriteString("\n  " + line)
		}
	}
	if e.Hint != "" {
		b.WriteString("\n  (" + e.Hint + ")")
	}
	return b.String()
}

// unreachableError is a failure to get any answer from Foundry.
type unreachableError struct {
	target string
	err    error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach Foundry at %s: %v", e.target, e.err)
}

func (e *unreachableError) Unwrap() error { return e.err }

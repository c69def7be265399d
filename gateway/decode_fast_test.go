package gateway

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// fastCheckCases are bodies with what the fast path must say of them:
// true for the good bodies clients send (so the fast path is taken, not
// just safe), false for what it leaves to the full check.
var fastCheckCases = []struct {
	msg  proto.Message
	body string
	fast bool
}{
	{&ledgerv1.CreateContributionRequest{}, `{"contributor_id":"a","asset_id":"b","cost_amount":1.5,"metadata":{"has_tests":true,"n":[1,"x",null],"o":{"k":"v"}}}`, true},
	{&ledgerv1.StakeRequest{}, ` {"contributor_id":"c","idea_id":"i","amount_cc":0.01,"dry_run":false} `, true},
	{&agentv1.CreateTaskRequest{}, `{"direction":"d","task_type":"impl","context":{"idea_id":"i"}}`, true},
	{&agentv1.UpdateTaskRequest{}, `{"status":"running","worker_id":"w","progress_pct":10}`, true},
	{&portfoliov1.CreateIdeaRequest{}, `{"name":"x","tags":["a","b"],"cost_vector":{"compute":0.5,"infrastructure":0.25,"human_attention":0.25},"potential_value":-1.5e3}`, true},
	{&portfoliov1.UpdateIdeaRequest{}, `{"confidence":0.25,"name":null}`, true},
	{&opsv1.UpsertNodeRequest{}, `{"node_type":"t","payload":{"a":[[{}]]}}`, true},
	{&ledgerv1.RegisterRequest{}, `{}`, true},
	{&ledgerv1.RegisterRequest{}, `{"handle":"unknown fields are named by the full check","admin":true}`, false},

	// Left to the full check: what is wrong, or what the fast path does
	// not decide.
	{&ledgerv1.CreateContributionRequest{}, `{"cost_amount":"1"}`, false},
	{&ledgerv1.CreateContributionRequest{}, `{"cost_amount":01}`, false},
	{&ledgerv1.CreateContributionRequest{}, `{"cost_amount":1.}`, false},
	{&ledgerv1.CreateContributionRequest{}, `{"metadata":{"a":"\u0000"}}`, false},
	{&ledgerv1.CreateContributionRequest{}, `{"metadata":[]}`, false},
	{&ledgerv1.CreateContributionRequest{}, `{"cost\u005famount":1}`, false},
	{&portfoliov1.CreateIdeaRequest{}, `{"name":"x","tags":["a",2]}`, false},
	{&portfoliov1.CreateIdeaRequest{}, `{"name":"x","tags":["a",null]}`, false},
	{&portfoliov1.CreateIdeaRequest{}, `{"name":"x","tags":"a"}`, false},
	{&agentv1.UpdateTaskRequest{}, `{"status":"runnin"}`, false},
	{&agentv1.UpdateTaskRequest{}, `{"progress_pct":"10"}`, false},
	{&agentv1.ClaimTaskRequest{}, `{"worker_id":"w","lease_seconds":1.5}`, false},
	{&agentv1.ClaimTaskRequest{}, `{"worker_id":"w","lease_seconds":3000000000}`, false},
	{&agentv1.ClaimTaskRequest{}, `{"worker_id":"w","task_types":["impl"],"lease_seconds":60}`, true},
	{&ledgerv1.RegisterRequest{}, `{"handle":"abc"} {}`, false},
	{&ledgerv1.RegisterRequest{}, "\xef\xbb\xbf{\"handle\":\"abc\"}", false},
	{&ledgerv1.RegisterRequest{}, `[1]`, false},
	{&ledgerv1.RegisterRequest{}, `null`, false},
	{&ledgerv1.RegisterRequest{}, `{"handle":"a",}`, false},
	{&ledgerv1.RegisterRequest{}, "{\"handle\":\"a\tb\"}", false},
	{&opsv1.UpsertNodeRequest{}, `{"node_type":"t","payload":{"a":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}}`, false},
}

// TestFastCheck: the fast path takes the good bodies clients send, and
// whatever it takes the full check takes too.
func TestFastCheck(t *testing.T) {
	for _, c := range fastCheckCases {
		md := c.msg.ProtoReflect().Descriptor()
		got := passesChecks(md, []byte(c.body))
		require.Equal(t, c.fast, got, "%s %s", md.Name(), c.body)
		if got {
			require.NoError(t, fullCheck(c.msg.ProtoReflect().New().Interface(), []byte(c.body)), "%s %s", md.Name(), c.body)
		}
	}
}

// FuzzFastCheck: a body the fast path lets through is one the full check
// accepts, for every request message, so the fast path never changes an
// answer (a body it refuses gets the full check's answer, as before).
func FuzzFastCheck(f *testing.F) {
	for _, c := range fastCheckCases {
		f.Add(string(c.msg.ProtoReflect().Descriptor().Name()), uint8(0), []byte(c.body))
	}
	f.Fuzz(func(t *testing.T, msgName string, n uint8, body []byte) {
		mt := requestType(msgName, n)
		if passesChecks(mt.Descriptor(), body) {
			require.NoError(t, fullCheck(mt.New().Interface(), body), "the fast path took %q (%s), the full check refuses it", body, mt.Descriptor().FullName())
		}
	})
}

// BenchmarkStrictDecode decodes a contribution's body as the gateway does.
func BenchmarkStrictDecode(b *testing.B) {
	body := []byte(fastCheckCases[0].body)
	b.ReportAllocs()
	for b.Loop() {
		var msg ledgerv1.CreateContributionRequest
		if err := (strictDecoder{r: strings.NewReader(string(body))}).Decode(&msg); err != nil {
			b.Fatal(err)
		}
	}
}

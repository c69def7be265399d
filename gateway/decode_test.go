package gateway

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

func decode(body string, msg proto.Message) error {
	return strictDecoder{r: strings.NewReader(body)}.Decode(msg)
}

func TestStrictDecoderAcceptsWellTypedBodies(t *testing.T) {
	t.Parallel()
	var c ledgerv1.CreateContributionRequest
	require.NoError(t, decode(`{"contributor_id":"a","asset_id":"b","cost_amount":1.5,"metadata":{"has_tests":true,"n":[1,"x",null]}}`, &c))
	require.Equal(t, 1.5, c.GetCostAmount())
	require.Equal(t, true, c.GetMetadata().AsMap()["has_tests"])

	var u portfoliov1.UpdateIdeaRequest
	require.NoError(t, decode(`{"confidence":0.25,"tags":["a","b"],"name":null}`, &u))
	require.Equal(t, 0.25, u.GetConfidence())
	require.Len(t, u.GetTags().GetValues(), 2)

	var st agentv1.UpdateTaskRequest
	require.NoError(t, decode(`{"status":"needs_decision"}`, &st), "a vocabulary enum takes its lower-case word")
	require.Equal(t, agentv1.TaskStatus_needs_decision, st.GetStatus())

	var ci portfoliov1.CreateIdeaRequest
	require.NoError(t, decode(`{"name":"x","cost_vector":{"compute":1},"tags":[]}`, &ci), "nested messages and empty lists")
	require.Equal(t, 1.0, ci.GetCostVector().GetCompute())
}

func TestStrictDecoderRejectsWrongTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
		msg              proto.Message
	}{
		{"quoted number", `{"cost_amount":"1"}`, "cost_amount: must be a number", &ledgerv1.CreateContributionRequest{}},
		{"NaN string", `{"cost_amount":"NaN"}`, "cost_amount: must be a number", &ledgerv1.CreateContributionRequest{}},
		{"number for a string", `{"contributor_id":7}`, "contributor_id: must be a string", &ledgerv1.CreateContributionRequest{}},
		{"array for an object", `{"metadata":[1]}`, "metadata: must be an object", &ledgerv1.CreateContributionRequest{}},
		{"string for a bool", `{"only_unvalidated":"true"}`, "only_unvalidated: must be true or false", &portfoliov1.ListIdeasRequest{}},
		{"nested", `{"name":"x","cost_vector":{"compute":"1"}}`, "cost_vector.compute: must be a number", &portfoliov1.CreateIdeaRequest{}},
		{"list item", `{"name":"x","tags":["a",2]}`, "tags[1]: must be a string", &portfoliov1.CreateIdeaRequest{}},
		{"string for a list", `{"name":"x","tags":"a"}`, "tags: must be an array", &portfoliov1.CreateIdeaRequest{}},
		{"wrapper", `{"confidence":"0.5"}`, "confidence: must be a number", &portfoliov1.UpdateIdeaRequest{}},
		{"unknown stage", `{"stage":"finished"}`, "stage: must be one of none, specced, implementing, testing, reviewing, complete", &portfoliov1.UpdateIdeaRequest{}},
		{"stage as a number", `{"stage":2}`, "stage: must be one of none, specced, implementing, testing, reviewing, complete", &portfoliov1.UpdateIdeaRequest{}},
		{"the zero's name", `{"status":"task_status_unspecified"}`, "status: must be one of pending, running, completed, failed, timed_out, needs_decision, discarded, cancelled", &agentv1.UpdateTaskRequest{}},
		{"upper case", `{"stage":"SPECCED"}`, "stage: must be one of none", &portfoliov1.SetIdeaStageRequest{}},
		{"array body", `[1]`, "the body must be a JSON object", &ledgerv1.CreateContributionRequest{}},
		{"two values", `{} {}`, "more than one value", &ledgerv1.CreateContributionRequest{}},
		{"cut short", `{"a":`, "the body is not valid JSON: it ends before its value does", &ledgerv1.CreateContributionRequest{}},
		{"a wrong character", `{"a":1,}`, "the body is not valid JSON: it goes wrong at byte 8", &ledgerv1.CreateContributionRequest{}},
		{"null body", `null`, "the body must be a JSON object, not null", &ledgerv1.CreateContributionRequest{}},
		// The issue's: "dry_run": null was read as false, a real stake.
		{"null flag", `{"dry_run":null}`, "dry_run: must be true or false, not null", &ledgerv1.StakeRequest{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := decode(tt.body, tt.msg)
			require.ErrorContains(t, err, tt.want)
		})
	}
}

func TestStrictDecoderBoundsDepthAndRefusesNUL(t *testing.T) {
	t.Parallel()
	nested := func(levels int) string {
		return strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels)
	}
	// The body and 63 levels inside it pass; one more is refused, before a
	// google.protobuf.Struct nested thousands deep could reach a service.
	require.NoError(t, decode(`{"metadata":`+nested(63)+`}`, &ledgerv1.CreateContributionRequest{}))
	require.ErrorContains(t, decode(`{"metadata":`+nested(64)+`}`, &ledgerv1.CreateContributionRequest{}),
		"nested deeper than 64 levels")
	require.ErrorContains(t, decode(`{"metadata":{"a":[`+strings.Repeat("[", 70)+strings.Repeat("]", 70)+`]}}`,
		&ledgerv1.CreateContributionRequest{}), "[0][0]: nested deeper than 64 levels", "arrays count as levels")

	for body, want := range map[string]string{
		`{"contributor_id":"a\u0000b"}`:     "contributor_id: must not contain NUL",
		`{"metadata":{"k":["x","\u0000"]}}`: "metadata.k[1]: must not contain NUL",
		`{"metadata":{"k\u0000":1}}`:        "metadata: keys must not contain NUL",
	} {
		require.ErrorContains(t, decode(body, &ledgerv1.CreateContributionRequest{}), want, body)
	}
}

func TestStrictDecoderEmptyBodyIsEOF(t *testing.T) {
	t.Parallel()
	err := decode("  \n", &ledgerv1.CreateContributionRequest{})
	require.True(t, errors.Is(err, io.EOF), "got %v", err)
}

// TestStrictDecoderNamesUnknownFields: an unknown field is refused by its
// name and path (a 422 field error), not protojson's "proto: (line 1:2):
// unknown field".
func TestStrictDecoderNamesUnknownFields(t *testing.T) {
	t.Parallel()
	err := decode(`{"handle":"abc","admin":true}`, &ledgerv1.RegisterRequest{})
	require.EqualError(t, err, "admin: is not a field of this request")
	err = decode(`{"idea_id":"i","proposed_children":[{"name":"c","nme":1}]}`, &portfoliov1.ApplyRightSizingRequest{})
	require.EqualError(t, err, "proposed_children[0].nme: is not a field of this request")
}

// TestStrictDecoderNamesNumbersThatDoNotFit: a number its integer field
// cannot hold is a 422 naming the field and what it must be, not
// protojson's strconv text.
func TestStrictDecoderNamesNumbersThatDoNotFit(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		`{"worker_id":"w","lease_seconds":1.5}`:        "lease_seconds: must be a whole number from -2147483648 to 2147483647",
		`{"worker_id":"w","lease_seconds":2147483648}`: "lease_seconds: must be a whole number from -2147483648 to 2147483647",
		`{"worker_id":"w","lease_seconds":1e3}`:        "lease_seconds: must be a whole number from -2147483648 to 2147483647",
	} {
		var c agentv1.ClaimTaskRequest
		require.EqualError(t, decode(body, &c), want, body)
	}
	var c agentv1.ClaimTaskRequest
	require.NoError(t, decode(`{"worker_id":"w","lease_seconds":-1}`, &c), "a range is the service's to check")
	require.Equal(t, int32(-1), c.GetLeaseSeconds())
}

func TestPathMatchesBody(t *testing.T) {
	t.Parallel()
	var got string
	h := pathMatchesBody(func(_ http.ResponseWriter, r *http.Request, _ map[string]string) {
		b, _ := io.ReadAll(r.Body)
		got = string(b)
	})
	params := map[string]string{"idea_id": "A"}
	for _, body := range []string{`{"contributor_id":"c","amount_cc":1}`, `{"idea_id":"A","amount_cc":1}`, `not json`, ``} {
		got = "-"
		w := httptest.NewRecorder()
		h(w, httptest.NewRequest(http.MethodPost, "/api/ideas/A/stake", strings.NewReader(body)), params)
		require.Equal(t, http.StatusOK, w.Code, body)
		require.Equal(t, body, got, "the body reaches the handler whole")
	}
	w := httptest.NewRecorder()
	h(w, httptest.NewRequest(http.MethodPost, "/api/ideas/A/stake", strings.NewReader(`{"idea_id":"B","amount_cc":1}`)), params)
	require.Equal(t, http.StatusConflict, w.Code)
	require.JSONEq(t, `{"detail":"idea_id: names \"B\", but the path names \"A\"","errors":[{"field":"idea_id","message":"names \"B\", but the path names \"A\""}]}`, w.Body.String())
}

// TestBodyFieldError: a decoder's refusal, which reaches the error handler
// as the bare text of an InvalidArgument status, names its field in the
// 422's errors list; a service's own 422 (with details), a message that
// is not "<field path>: …" and a GET are left alone.
func TestBodyFieldError(t *testing.T) {
	t.Parallel()
	post := httptest.NewRequest(http.MethodPost, "/api/ideas", nil)
	fe, ok := bodyFieldError(status.New(codes.InvalidArgument, "cost_vector.compute: must be a number"), post)
	require.True(t, ok)
	require.Equal(t, FieldError{Field: "cost_vector.compute", Message: "must be a number"}, fe)
	fe, ok = bodyFieldError(status.New(codes.InvalidArgument, "tags[1]: must be a string"), post)
	require.True(t, ok)
	require.Equal(t, "tags[1]", fe.Field)

	for _, msg := range []string{"the body is not valid JSON: it ends before its value does", "the body must be a JSON object", `unknown field "x"`} {
		_, ok := bodyFieldError(status.New(codes.InvalidArgument, msg), post)
		require.False(t, ok, msg)
	}
	withDetails, err := status.New(codes.InvalidArgument, "stage: must be one of none").WithDetails(&errdetails.BadRequest{})
	require.NoError(t, err)
	_, ok = bodyFieldError(withDetails, post)
	require.False(t, ok, "a service's own 422 keeps its details")
	_, ok = bodyFieldError(status.New(codes.NotFound, "stage: gone"), post)
	require.False(t, ok, "not a 422")
	_, ok = bodyFieldError(status.New(codes.InvalidArgument, "stage: must be one of none"), httptest.NewRequest(http.MethodGet, "/api/ideas", nil))
	require.False(t, ok, "a GET has no body")
}

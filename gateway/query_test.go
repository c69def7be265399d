package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

func TestStrictQuery(t *testing.T) {
	t.Parallel()
	noFilter := utilities.NewDoubleArray(nil)
	parse := func(query string) (*portfoliov1.ListIdeasRequest, error) {
		v, err := url.ParseQuery(query)
		require.NoError(t, err)
		msg := &portfoliov1.ListIdeasRequest{}
		return msg, strictQuery{}.Parse(msg, v, noFilter)
	}
	got, err := parse("limit=5&offset=2&tags=a&tags=b&only_unvalidated=true")
	require.NoError(t, err)
	require.Equal(t, int32(5), got.GetLimit())
	require.Equal(t, int32(2), got.GetOffset())
	require.Equal(t, []string{"a", "b"}, got.GetTags())
	require.True(t, got.GetOnlyUnvalidated())
	got, err = parse("onlyUnvalidated=true")
	require.NoError(t, err, "a JSON name, as grpc-gateway accepts")
	require.True(t, got.GetOnlyUnvalidated())

	for query, want := range map[string]string{
		"stage=bogus":            "stage: is not a parameter of this route",
		"limit=abc":              "limit: must be a whole number from -2147483648 to 2147483647",
		"offset=2147483648":      "offset: must be a whole number from -2147483648 to 2147483647",
		"only_unvalidated=maybe": "only_unvalidated: must be true or false",
		"limit=1&limit=2":        "limit: must be given once",
		"tags.x=1":               "tags.x: is not a parameter of this route",
		"limit=1&zzz=1&aaa=2":    "aaa: is not a parameter of this route",
	} {
		_, err := parse(query)
		require.EqualError(t, err, want, query)
		// As the generated handlers pass it on, and the error handler reads it.
		s := status.Newf(codes.InvalidArgument, "%v", err)
		fe, ok := queryFieldError(s, httptest.NewRequest(http.MethodGet, "/api/ideas?"+query, nil))
		require.True(t, ok, query)
		field, msg, _ := strings.Cut(want, ": ")
		require.Equal(t, FieldError{Field: field, Message: msg}, fe, query)
	}
	_, ok := queryFieldError(status.New(codes.InvalidArgument, "name: is required"), httptest.NewRequest(http.MethodGet, "/api/ideas", nil))
	require.False(t, ok, "a service's own 422 is left alone")

	// A vocabulary enum takes its lower-case word, and an empty value as
	// "not given"; any other word, a number or the zero's name is a 422
	// listing the words.
	tasks := func(query string) (*agentv1.ListTasksRequest, error) {
		v, err := url.ParseQuery(query)
		require.NoError(t, err)
		msg := &agentv1.ListTasksRequest{}
		return msg, strictQuery{}.Parse(msg, v, noFilter)
	}
	listed, err := tasks("status=timed_out")
	require.NoError(t, err)
	require.Equal(t, agentv1.TaskStatus_timed_out, listed.GetStatus())
	listed, err = tasks("status=")
	require.NoError(t, err)
	require.Equal(t, agentv1.TaskStatus_task_status_unspecified, listed.GetStatus())
	for _, bad := range []string{"bogus", "3", "task_status_unspecified", "PENDING"} {
		_, err := tasks("status=" + bad)
		require.EqualError(t, err, "status: must be one of pending, running, completed, failed, timed_out, needs_decision, discarded, cancelled", bad)
	}

	// A path parameter is the path's, whatever the query says.
	filter := utilities.NewDoubleArray([][]string{{"id"}})
	require.NoError(t, strictQuery{}.Parse(&agentv1.GetTaskRequest{}, url.Values{"id": {"x"}}, filter))
}

func TestOnlyDryRunInQuery(t *testing.T) {
	t.Parallel()
	passed := false
	h := onlyDryRunInQuery(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed = true }))
	for _, tt := range []struct {
		method, target, detail string
	}{
		{http.MethodPost, "/api/cc/stake?dry_run=true", ""},
		{http.MethodGet, "/api/ideas?anything=1", ""},
		{http.MethodPost, "/api/cc/stake", ""},
		{http.MethodPost, "/api/cc/stake?dry-run=true", "dry-run: is not a parameter of this route: send the request's fields in its JSON body (the one query parameter a POST takes is dry_run)"},
		{http.MethodPost, "/api/cc/stake?Dry_Run=true", "Dry_Run: is not a parameter of this route: send the request's fields in its JSON body (the one query parameter a POST takes is dry_run)"},
		{http.MethodPost, "/api/cc/stake?dryrun=true", "dryrun: is not a parameter of this route: send the request's fields in its JSON body (the one query parameter a POST takes is dry_run)"},
		{http.MethodPatch, "/api/ideas/x?dry_run=true", "dry_run: is not a parameter of this route: send the request's fields in its JSON body"},
		{http.MethodDelete, "/api/tokens/x?force=1", "force: is not a parameter of this route: send the request's fields in its JSON body"},
	} {
		passed = false
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.target, nil))
		if tt.detail == "" {
			require.True(t, passed, tt.target)
			continue
		}
		require.False(t, passed, tt.target)
		require.Equal(t, http.StatusUnprocessableEntity, w.Code, tt.target)
		var body ErrorBody
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
		require.Equal(t, tt.detail, body.Detail, tt.target)
	}
}

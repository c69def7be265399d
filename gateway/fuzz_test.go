package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/structpb"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/clientip"
	"github.com/foundryhq/foundry/services/platform/grpcerr"
	"github.com/foundryhq/foundry/services/platform/requestid"
)

// requestTypes are every request message of the four services, sorted by
// name, so the decoder is fuzzed against each shape the API accepts.
var requestTypes = func() []protoreflect.MessageType {
	// Referenced so the packages (and their types) are linked in.
	_ = []proto.Message{&agentv1.CreateTaskRequest{}, &ledgerv1.RegisterRequest{}, &opsv1.ReadyRequest{}, &portfoliov1.CreateIdeaRequest{}}
	var out []protoreflect.MessageType
	protoregistry.GlobalTypes.RangeMessages(func(mt protoreflect.MessageType) bool {
		name := string(mt.Descriptor().FullName())
		if strings.HasPrefix(name, "foundry.") && strings.HasSuffix(name, "Request") {
			out = append(out, mt)
		}
		return true
	})
	slices.SortFunc(out, func(a, b protoreflect.MessageType) int {
		return strings.Compare(string(a.Descriptor().FullName()), string(b.Descriptor().FullName()))
	})
	return out
}()

// requestType picks a request type by name, or by number when the name is
// not one (the corpus then survives renamed messages).
func requestType(name string, n uint8) protoreflect.MessageType {
	for _, mt := range requestTypes {
		if string(mt.Descriptor().Name()) == name {
			return mt
		}
	}
	return requestTypes[int(n)%len(requestTypes)]
}

// jsonKindOK is the API's typing rule for one top-level field, written
// independently of the decoder: the JSON kind each field kind takes (null
// always allowed: it means "not sent").
func jsonKindOK(fd protoreflect.FieldDescriptor, v any) bool {
	if v == nil {
		return true
	}
	_, isObj := v.(map[string]any)
	_, isArr := v.([]any)
	_, isNum := v.(json.Number)
	_, isStr := v.(string)
	_, isBool := v.(bool)
	switch {
	case fd.IsMap():
		return isObj
	case fd.IsList():
		return isArr
	}
	switch fd.Kind() {
	case protoreflect.MessageKind:
		switch fd.Message().FullName() {
		case "google.protobuf.Value":
			return true
		case "google.protobuf.ListValue":
			return isArr
		case "google.protobuf.StringValue", "google.protobuf.BytesValue":
			return isStr
		case "google.protobuf.BoolValue":
			return isBool
		case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int32Value",
			"google.protobuf.UInt32Value", "google.protobuf.Int64Value", "google.protobuf.UInt64Value":
			return isNum
		}
		return isObj
	case protoreflect.BoolKind:
		return isBool
	case protoreflect.StringKind, protoreflect.BytesKind:
		return isStr
	case protoreflect.EnumKind:
		return isStr || isNum
	}
	return isNum
}

// FuzzStrictDecoder checks request-body decoding against every request
// message: a blank body is "no fields" (io.EOF); whatever else is accepted
// is one JSON object whose every member is a field of the message with
// the JSON type the API promises (so "1" never passes for a number); and
// an accepted message written out as the gateway writes JSON reads back
// equal. Every refusal becomes a 422 (InvalidArgument in the generated
// handlers), and none panics.
func FuzzStrictDecoder(f *testing.F) {
	seeds := []struct{ msg, body string }{
		{"CreateContributionRequest", `{"contributor_id":"a","asset_id":"b","cost_amount":1.5,"metadata":{"has_tests":true,"n":[1,"x",null]}}`},
		{"CreateContributionRequest", `{"cost_amount":"1"}`},
		{"CreateContributionRequest", `{"cost_amount":"NaN"}`},
		{"CreateContributionRequest", `{"cost_amount":1e999}`},
		{"CreateIdeaRequest", `{"name":"x","cost_vector":{"compute":"1"},"tags":["a",2]}`},
		{"CreateIdeaRequest", `{"name":"x","tags":"a","stage":7}`},
		{"UpdateIdeaRequest", `{"confidence":0.25,"tags":["a","b"],"name":null}`},
		{"UpdateIdeaRequest", `{"confidence":"0.5"}`},
		{"RegisterRequest", `{"handle":"abc","admin":true}`},
		{"RegisterRequest", `{"handle":"abc"} {}`},
		{"RegisterRequest", "\xef\xbb\xbf{\"handle\":\"abc\"}"},
		{"RegisterRequest", `{"handle":"\xff"}`},
		{"RegisterRequest", `{"handle":"a","handle":"b"}`},
		{"ListIdeasRequest", `{"only_unvalidated":"true","limit":1.5}`},
		{"UpsertNodeRequest", `{"node_type":"t","payload":{"a":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}}`},
		{"CreateTaskRequest", `{"direction":"d","task_type":"impl","context":{"idea_id":"i"}}`},
		{"IngestUsageSnapshotRequest", `{"provider":"openai","metrics":[{"name":"a","value":1,"limit":null}]}`},
		{"RegisterRequest", `[1]`},
		{"RegisterRequest", "  \n"},
		{"RegisterRequest", `null`},
	}
	for _, s := range seeds {
		f.Add(s.msg, uint8(0), []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, msgName string, n uint8, body []byte) {
		mt := requestType(msgName, n)
		msg := mt.New().Interface()
		err := strictDecoder{r: bytes.NewReader(body)}.Decode(msg)
		if len(bytes.TrimSpace(body)) == 0 {
			require.True(t, errors.Is(err, io.EOF), "a blank body is io.EOF, got %v", err)
			return
		}
		require.False(t, errors.Is(err, io.EOF), "only a blank body is io.EOF")
		if err != nil {
			return
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var doc any
		require.NoError(t, dec.Decode(&doc), "accepted bytes are JSON")
		obj, isObj := doc.(map[string]any)
		require.True(t, isObj, "accepted body %q is not a JSON object", body)
		fields := mt.Descriptor().Fields()
		for key, v := range obj {
			fd := fields.ByJSONName(key)
			if fd == nil {
				fd = fields.ByTextName(key)
			}
			require.NotNil(t, fd, "unknown field %q accepted in %s", key, mt.Descriptor().FullName())
			require.True(t, jsonKindOK(fd, v), "%s.%s accepted as %T", mt.Descriptor().FullName(), key, v)
		}

		out, err := marshalJSON(msg)
		require.NoError(t, err)
		again := mt.New().Interface()
		require.NoError(t, strictDecoder{r: bytes.NewReader(out)}.Decode(again), "the gateway's own JSON %s", out)
		require.True(t, proto.Equal(msg, again), "%s read back as %v", out, again)
	})
}

// jsonMediaType is the rule for a JSON Content-Type, written
// independently: application/json or application/<something>+json, any
// case, parameters allowed.
var jsonMediaType = regexp.MustCompile(`^application/([^/]+\+)?json$`)

// FuzzRequireJSON checks the Content-Type guard: a POST, PUT or PATCH
// reaches the API only with a JSON media type, or with neither a body nor
// a type; every other one is a 415 and never reaches it; other methods
// pass untouched.
func FuzzRequireJSON(f *testing.F) {
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/merge-patch+json",
		"application/+json", "application/jsonx", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
		"", "application/json;;", "application/json; charset", "application/json, text/plain", "application/vnd.api+json; q=\"x\""} {
		f.Add(uint8(0), ct, []byte(`{}`))
	}
	f.Add(uint8(0), "", []byte{})
	f.Add(uint8(3), "text/plain", []byte("x"))
	f.Fuzz(func(t *testing.T, m uint8, ct string, body []byte) {
		method := []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodGet, http.MethodDelete}[int(m)%5]
		reached := false
		h := chain(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached = true }), limitBody(1<<20), requireJSON)
		r := httptest.NewRequest(method, "/api/ideas", bytes.NewReader(body))
		if len(body) == 0 {
			r = httptest.NewRequest(method, "/api/ideas", nil)
		}
		if ct != "" {
			r.Header["Content-Type"] = []string{ct}
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)

		mt, _, perr := mime.ParseMediaType(ct)
		isJSON := perr == nil && jsonMediaType.MatchString(strings.ToLower(mt))
		require.Equal(t, isJSON, isJSONMediaType(ct), "Content-Type %q", ct)
		var want bool
		switch method {
		case http.MethodPost, http.MethodPut, http.MethodPatch:
			want = isJSON || len(body) == 0 // an empty body passes whatever its type
		default:
			want = true
		}
		require.Equal(t, want, reached, "%s with Content-Type %q and %d body bytes", method, ct, len(body))
		if !reached {
			require.Equal(t, http.StatusUnsupportedMediaType, rec.Code)
			require.True(t, json.Valid(rec.Body.Bytes()))
		}
	})
}

// FuzzLimitBody checks the body cap: a body over the cap is a 413 and never
// reaches the API; any other reaches it byte for byte, with an exact
// Content-Length.
func FuzzLimitBody(f *testing.F) {
	f.Add([]byte(`{}`), uint16(2))
	f.Add([]byte(`{}`), uint16(1))
	f.Add([]byte{}, uint16(0))
	f.Add(bytes.Repeat([]byte("x"), 300), uint16(299))
	f.Fuzz(func(t *testing.T, body []byte, limit uint16) {
		var got []byte
		var gotLen int64
		reached := false
		h := limitBody(int64(limit))(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached = true
			gotLen = r.ContentLength
			got, _ = io.ReadAll(r.Body)
		}))
		rec := httptest.NewRecorder()
		// No Content-Length: the cap must hold for a streamed body too.
		r := httptest.NewRequest(http.MethodPost, "/api/ideas", io.MultiReader(bytes.NewReader(body)))
		h.ServeHTTP(rec, r)
		if len(body) > int(limit) {
			require.False(t, reached)
			require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
			return
		}
		require.True(t, reached)
		require.True(t, bytes.Equal(body, got), "the body reaches the API unchanged")
		require.Equal(t, int64(len(body)), gotLen)
	})
}

// FuzzDryRunFromQuery checks ?dry_run on a POST: a value that is no
// boolean is a 422; a body whose own dry_run disagrees with the query, or
// is no boolean at all, is a 422 (never silently overwritten); otherwise
// the API sees the body with dry_run set to the query's value, every other
// member as sent, and no dry_run left in the query.
func FuzzDryRunFromQuery(f *testing.F) {
	f.Add("dry_run=true", []byte(`{"amount_cc":5}`))
	f.Add("dry_run", []byte(`{"amount_cc":5}`))
	f.Add("dry_run=0", []byte(`{}`))
	f.Add("dry_run=1", []byte{})
	f.Add("dry_run=true", []byte(`{"dry_run":false}`))
	f.Add("dry_run=false", []byte(`{"dry_run":"yes"}`))
	f.Add("dry_run=true", []byte(`{"dry_run":null}`))
	f.Add("dry_run=maybe", []byte(`{}`))
	f.Add("dry_run=true", []byte(`[1]`))
	f.Add("dry_run=true&dry_run=false&x=1", []byte(`{"a":{"b":[1,2,{"c":"\u00e9"}]}}`))
	f.Add("dry_run=T", []byte(`null`))
	f.Add("dry_run=true", []byte(`{"dry_run":true,"dry_run":false}`))
	f.Fuzz(func(t *testing.T, query string, body []byte) {
		var got []byte
		var gotQuery string
		reached := false
		h := dryRunFromQuery(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			reached = true
			got, _ = io.ReadAll(r.Body)
			gotQuery = r.URL.RawQuery
		}))
		target := &url.URL{Path: "/api/cc/stake", RawQuery: query}
		r := httptest.NewRequest(http.MethodPost, "/api/cc/stake", bytes.NewReader(body))
		r.URL = target
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)

		q, _ := url.ParseQuery(query) // as r.URL.Query(): the pairs that parse
		if !q.Has("dry_run") {
			if reached {
				require.Equal(t, body, got, "without dry_run the body is untouched")
			}
			return
		}
		raw := q.Get("dry_run")
		want, berr := strconv.ParseBool(raw)
		if raw == "" {
			want, berr = true, nil
		}
		if berr != nil {
			require.False(t, reached)
			require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
			return
		}
		var sent map[string]json.RawMessage
		if len(body) > 0 && (json.Unmarshal(body, &sent) != nil || sent == nil) {
			require.True(t, reached, "a body that is no object is passed on for the service to refuse")
			require.Equal(t, body, got)
			return
		}
		if given, ok := sent["dry_run"]; ok && string(given) != "null" {
			var inBody bool
			if json.Unmarshal(given, &inBody) != nil || inBody != want {
				require.False(t, reached, "body dry_run %s with ?dry_run=%s", given, raw)
				require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
				return
			}
		}
		require.True(t, reached, "status %d: %s", rec.Code, rec.Body)
		var out map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(got, &out))
		require.Equal(t, strconv.FormatBool(want), string(out["dry_run"]))
		for k, v := range sent {
			if k == "dry_run" {
				continue
			}
			var a, b any
			require.NoError(t, json.Unmarshal(v, &a))
			require.NoError(t, json.Unmarshal(out[k], &b))
			require.Equal(t, a, b, "member %q", k)
		}
		left, _ := url.ParseQuery(gotQuery)
		require.False(t, left.Has("dry_run"))
	})
}

// fakeLedger answers RecordGithubDelivery with a fixed outcome and keeps
// the request it got.
type fakeLedger struct {
	ledgerv1.LedgerServiceClient
	got  *ledgerv1.RecordGithubDeliveryRequest
	resp *ledgerv1.RecordGithubDeliveryResponse
	err  error
}

func (f *fakeLedger) RecordGithubDelivery(_ context.Context, in *ledgerv1.RecordGithubDeliveryRequest, _ ...grpc.CallOption) (*ledgerv1.RecordGithubDeliveryResponse, error) {
	f.got = in
	return f.resp, f.err
}

// FuzzGitHubWebhook checks the raw webhook route: the ledger gets the body
// byte for byte (the signature covers those exact bytes) and the three
// headers as sent; each outcome maps to its status (recorded 201,
// duplicate and pong 200, ignored 202, a refused signature 401, a bad
// body 422), and every answer is JSON.
func FuzzGitHubWebhook(f *testing.F) {
	f.Add([]byte(`{"ref":"refs/heads/main"}`), "push", "72d3162e-cc78-11e3-81ab-4c9367dc0958", "sha256=00", uint8(0))
	f.Add([]byte(`{}`), "ping", "", "", uint8(3))
	f.Add([]byte("\xff\xfe not json"), "issues", "d", "sha1=x", uint8(2))
	f.Add([]byte(`{"a":1}`), "push", "d\nx", "sha256=zz", uint8(4))
	f.Add([]byte{}, "", "", "", uint8(5))
	f.Fuzz(func(t *testing.T, body []byte, event, delivery, signature string, outcome uint8) {
		contribution := &ledgerv1.Contribution{Id: "c1", ContributorId: "github:octocat"}
		outcomes := []struct {
			resp *ledgerv1.RecordGithubDeliveryResponse
			err  error
			code int
		}{
			{&ledgerv1.RecordGithubDeliveryResponse{Status: "recorded", Contribution: contribution}, nil, http.StatusCreated},
			{&ledgerv1.RecordGithubDeliveryResponse{Status: "duplicate", Contribution: contribution}, nil, http.StatusOK},
			{&ledgerv1.RecordGithubDeliveryResponse{Status: "ignored", Detail: "x"}, nil, http.StatusAccepted},
			{&ledgerv1.RecordGithubDeliveryResponse{Status: "pong", Detail: "pong"}, nil, http.StatusOK},
			{nil, status.Error(codes.Unauthenticated, "bad signature"), http.StatusUnauthorized},
			{nil, status.Error(codes.InvalidArgument, "bad body"), http.StatusUnprocessableEntity},
		}
		o := outcomes[int(outcome)%len(outcomes)]
		ledger := &fakeLedger{resp: o.resp, err: o.err}
		r := httptest.NewRequest(http.MethodPost, "/api/contributions/github", bytes.NewReader(body))
		r.Header["X-Github-Event"] = []string{event}
		r.Header["X-Github-Delivery"] = []string{delivery}
		r.Header["X-Hub-Signature-256"] = []string{signature}
		rec := httptest.NewRecorder()
		githubWebhook(ledger).ServeHTTP(rec, r)

		require.NotNil(t, ledger.got)
		require.True(t, bytes.Equal(body, ledger.got.GetBody()), "the body reaches the ledger unchanged")
		require.Equal(t, event, ledger.got.GetEvent())
		require.Equal(t, delivery, ledger.got.GetDeliveryId())
		require.Equal(t, signature, ledger.got.GetSignature_256())
		require.Equal(t, o.code, rec.Code)
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		require.True(t, json.Valid(rec.Body.Bytes()), "answer %q", rec.Body)
	})
}

// FuzzRequestID checks the request id: every response carries a valid
// one, the client's own exactly when it is valid, and the services see
// the same id in the request's context.
func FuzzRequestID(f *testing.F) {
	for _, s := range []string{"abc-123", "", "line\nbreak", strings.Repeat("a", 129), "trace:1.2_3", "\xff", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sent string) {
		var inContext string
		h := requestScope(zap.NewNop(), nil, nil, 0)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { inContext = requestid.From(r.Context()) }))
		r := httptest.NewRequest(http.MethodGet, "/api/ideas", nil)
		r.Header[requestid.Header] = []string{sent}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		got := rec.Header().Get(requestid.Header)
		require.True(t, requestid.Valid(got), "answered id %q", got)
		require.Equal(t, got, inContext)
		if requestid.Valid(sent) {
			require.Equal(t, sent, got)
		} else {
			require.NotEqual(t, sent, got)
		}
	})
}

// FuzzForwardClient checks what the services learn of the client: the
// address clientip resolves (never one the request did not carry), with
// the peer's port, and no X-Forwarded-For header left to forward. The
// peer is what an HTTP server reports: an IP address and port, or a Unix
// socket's name.
func FuzzForwardClient(f *testing.F) {
	f.Add("10.0.0.0/8", []byte{10, 0, 0, 5}, uint16(4000), "6.6.6.6, 203.0.113.9", "")
	f.Add("", []byte{203, 0, 113, 9}, uint16(4000), "1.2.3.4", "5.6.7.8")
	f.Add("::1", []byte(net.IPv6loopback), uint16(80), "[2001:db8::1]:5", "")
	f.Add("10.0.0.0/8", []byte{10, 0, 0, 5}, uint16(0), "garbage", "")
	f.Add("", []byte{}, uint16(0), "1.2.3.4", "")
	f.Fuzz(func(t *testing.T, list string, ip []byte, port uint16, xff1, xff2 string) {
		proxies, err := clientip.Parse(list)
		if err != nil {
			return
		}
		remote := "@" // a Unix socket's peer
		if addr, ok := netip.AddrFromSlice(ip); ok {
			remote = netip.AddrPortFrom(addr, port).String()
		}
		var xff []string
		for _, v := range []string{xff1, xff2} {
			if v != "" {
				xff = append(xff, v)
			}
		}
		var seen *http.Request
		h := forwardClient(proxies)(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen = r }))
		r := httptest.NewRequest(http.MethodGet, "/api/ideas", nil)
		r.RemoteAddr = remote
		if len(xff) > 0 {
			r.Header["X-Forwarded-For"] = xff
		}
		h.ServeHTTP(httptest.NewRecorder(), r)
		require.NotNil(t, seen)
		_, sent := seen.Header["X-Forwarded-For"]
		require.False(t, sent, "no X-Forwarded-For reaches the services")
		require.Equal(t, xff, r.Header["X-Forwarded-For"], "the caller's request is not changed")
		host, gotPort, err := net.SplitHostPort(seen.RemoteAddr)
		require.NoError(t, err, "RemoteAddr %q", seen.RemoteAddr)
		client := proxies.FromHTTP(remote, xff)
		require.Equal(t, client, host)
		if remote != "@" {
			require.Equal(t, strconv.Itoa(int(port)), gotPort)
			a, ok := clientip.ParseAddr(client)
			require.True(t, ok, "client %q", client)
			carried := a == netip.MustParseAddrPort(remote).Addr().Unmap()
			for _, v := range xff {
				for _, hop := range strings.Split(v, ",") {
					h, ok := clientip.ParseAddr(hop)
					carried = carried || ok && h == a
				}
			}
			require.True(t, carried, "client %s is neither the peer nor a hop", a)
		}
	})
}

// FuzzCompact checks the response compaction: for protojson output
// carrying any strings (commas, spaces, quotes and escapes inside them),
// dropCommaSpaces gives exactly json.Compact's bytes.
func FuzzCompact(f *testing.F) {
	f.Add("a", ", ", `"\", "`, 1.5)
	f.Add("", "", "", 0.0)
	f.Add("k, ", "\\", "\u2028", -1e300)
	f.Fuzz(func(t *testing.T, k1, v1, v2 string, n float64) {
		s, err := structpb.NewStruct(map[string]any{k1: v1, k1 + "x": []any{v1, v2, n, nil, true}, "o": map[string]any{v2: v1}})
		if err != nil {
			return
		}
		b, err := protojson.Marshal(s)
		if err != nil {
			return // NaN and infinities are no JSON
		}
		var want bytes.Buffer
		require.NoError(t, json.Compact(&want, b))
		require.Equal(t, want.String(), string(dropCommaSpaces(b)))
	})
}

// FuzzErrorBody checks how a service's error becomes an HTTP answer: the
// status follows the one table of gRPC codes, a 5xx never carries the
// service's text (it may name hosts or internals) except a 501 and a
// service's own Unavailable, every answer a client reads has a detail, and
// field violations are passed on as sent.
func FuzzErrorBody(f *testing.F) {
	f.Add(uint32(codes.InvalidArgument), "handle: must match", "handle", "must match", false)
	f.Add(uint32(codes.Internal), "dial tcp 10.0.0.7:5432: connection refused", "", "", false)
	f.Add(uint32(codes.Unavailable), "ledger database not answering", "", "", true)
	f.Add(uint32(codes.Unavailable), "dial tcp: lookup ledger", "", "", false)
	f.Add(uint32(codes.ResourceExhausted), "grpc: received message larger than max", "", "", false)
	f.Add(uint32(codes.Unimplemented), "", "", "", false)
	f.Add(uint32(99), "\xff", "f", "\x00", true)
	f.Fuzz(func(t *testing.T, code uint32, msg, field, desc string, serviceMessage bool) {
		var details []protoadapt.MessageV1
		if serviceMessage { // the mark of a service's own answer (grpcerr.Status adds it)
			details = append(details, &errdetails.ErrorInfo{Domain: grpcerr.Domain, Reason: "UNAVAILABLE"})
		}
		if field != "" {
			details = append(details, &errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: desc}}})
		}
		st, err := status.New(codes.Code(code), msg).WithDetails(details...)
		if err != nil {
			return
		}
		httpCode, body := errorBody(st)
		want := HTTPStatus(codes.Code(code))
		if codes.Code(code) == codes.ResourceExhausted && !isServiceMessage(st) {
			want = http.StatusInternalServerError
		}
		require.Equal(t, want, httpCode)
		if httpCode != 499 { // Canceled: the client has gone, nobody reads the answer
			require.NotEmpty(t, body.Detail)
		}
		ownUnavailable := codes.Code(code) == codes.Unavailable && isServiceMessage(st)
		if httpCode >= 500 && httpCode != http.StatusNotImplemented && !ownUnavailable {
			generic := serverErrorDetail[httpCode]
			if generic == "" {
				generic = http.StatusText(httpCode)
			}
			require.Equal(t, generic, body.Detail, "a %d carries only the generic text", httpCode)
		}
		if field != "" {
			require.Contains(t, body.Errors, FieldError{Field: field, Message: desc})
		}
		_, err = json.Marshal(body)
		require.NoError(t, err)
	})
}

package gateway

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/grpcerr"
)

func TestErrorBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		status     *status.Status
		wantCode   int
		wantDetail string
	}{
		{"validation", grpcerr.Status(fault.Validation(fault.Field("handle", "bad"))), 422, "handle: bad"},
		{"rejected", grpcerr.Status(fault.New(fault.Rejected, "empty patch")), 400, "empty patch"},
		{"conflict", grpcerr.Status(fault.New(fault.AlreadyExists, "handle_taken")), 409, "handle_taken"},
		{"rate limited by a service", grpcerr.Status(fault.New(fault.RateLimited, "slow down")), 429, "slow down"},
		{"transport size limit", status.New(codes.ResourceExhausted, "grpc: received message larger than max"), 500, "internal error"},
		{"service unavailable keeps its detail", grpcerr.Status(fault.New(fault.Unavailable, "not ready: ledger")), 503, "not ready: ledger"},
		{"dial failure hides its detail", status.New(codes.Unavailable, "connection refused 10.0.0.1:9090"), 503, "service unavailable: try again shortly"},
		{"internal hides its detail", status.New(codes.Internal, "pq: secret"), 500, "internal error"},
		{"unimplemented keeps its detail", status.New(codes.Unimplemented, "method X not implemented"), 501, "method X not implemented"},
		{"deadline", status.New(codes.DeadlineExceeded, "ctx"), 504, "the request timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			code, body := errorBody(tt.status)
			require.Equal(t, tt.wantCode, code)
			require.Equal(t, tt.wantDetail, body.Detail)
		})
	}
	_, body := errorBody(grpcerr.Status(fault.Validation(fault.Field("handle", "bad"))))
	require.Equal(t, []FieldError{{Field: "handle", Message: "bad"}}, body.Errors)
	require.Equal(t, http.StatusUnprocessableEntity, HTTPStatus(codes.InvalidArgument))
}

// TestPathFieldError: grpc-gateway's refusal of a path parameter that
// does not parse is said in words, naming the parameter (the issue's:
// strconv.ParseInt: parsing "1x" reached the client).
func TestPathFieldError(t *testing.T) {
	t.Parallel()
	for msg, want := range map[string]FieldError{
		`type mismatch, parameter: seq, error: strconv.ParseInt: parsing "1x": invalid syntax`:                       {Field: "seq", Message: "must be a whole number"},
		`type mismatch, parameter: seq, error: strconv.ParseInt: parsing "99999999999999999999": value out of range`: {Field: "seq", Message: "must be a whole number within range"},
		`type mismatch, parameter: ratio, error: strconv.ParseFloat: parsing "x": invalid syntax`:                    {Field: "ratio", Message: "must be a number"},
		`type mismatch, parameter: full, error: strconv.ParseBool: parsing "maybe": invalid syntax`:                  {Field: "full", Message: "must be true or false"},
		`type mismatch, parameter: stage, error: something else`:                                                     {Field: "stage", Message: "has the wrong type for this path"},
	} {
		fe, ok := pathFieldError(status.New(codes.InvalidArgument, msg))
		require.True(t, ok, msg)
		require.Equal(t, want, fe, msg)
	}
	_, ok := pathFieldError(status.New(codes.InvalidArgument, "seq: must be at least 0"))
	require.False(t, ok, "a service's own refusal")
	_, ok = pathFieldError(status.New(codes.NotFound, `type mismatch, parameter: seq, error: x`))
	require.False(t, ok, "not a 422")
}

// TestUnavailableSaysWhenToRetry: a 503 always carries Retry-After: the
// service's retry delay (the database's, when it dropped a connection),
// else 1 s for a service the gateway could not reach.
func TestUnavailableSaysWhenToRetry(t *testing.T) {
	t.Parallel()
	withDelay, err := status.New(codes.Unavailable, "the database is unavailable: try again shortly").WithDetails(
		&errdetails.ErrorInfo{Domain: grpcerr.Domain, Reason: "UNAVAILABLE"}, &errdetails.RetryInfo{RetryDelay: durationpb.New(2500 * time.Millisecond)})
	require.NoError(t, err)
	for _, tc := range []struct {
		err        error
		retryAfter string
		detail     string
	}{
		{withDelay.Err(), "3", "the database is unavailable: try again shortly"},
		{status.Error(codes.Unavailable, "connection error: desc = \"transport: dial tcp: connection refused\""), "1", "service unavailable: try again shortly"},
	} {
		rec := httptest.NewRecorder()
		writeError(rec, tc.err)
		require.Equal(t, http.StatusServiceUnavailable, rec.Code)
		require.Equal(t, tc.retryAfter, rec.Header().Get("Retry-After"))
		require.Contains(t, rec.Body.String(), tc.detail)
	}
}

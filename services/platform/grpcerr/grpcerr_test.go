package grpcerr_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/grpcerr"
)

func TestStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		err      error
		wantCode codes.Code
		wantMsg  string
	}{
		{"invalid", fault.New(fault.Invalid, "bad handle"), codes.InvalidArgument, "bad handle"},
		{"rejected", fault.New(fault.Rejected, "empty patch"), codes.FailedPrecondition, "empty patch"},
		{"not found", fault.New(fault.NotFound, "idea not found"), codes.NotFound, "idea not found"},
		{"already exists", fault.New(fault.AlreadyExists, "handle_taken"), codes.AlreadyExists, "handle_taken"},
		{"conflict", fault.New(fault.Conflict, "already complete"), codes.Aborted, "already complete"},
		{"unauthenticated", fault.New(fault.Unauthenticated, "no token"), codes.Unauthenticated, "no token"},
		{"forbidden", fault.New(fault.Forbidden, "not yours"), codes.PermissionDenied, "not yours"},
		{"rate limited", fault.New(fault.RateLimited, "slow down"), codes.ResourceExhausted, "slow down"},
		{"unimplemented", fault.New(fault.Unimplemented, "stub"), codes.Unimplemented, "stub"},
		{"unavailable", fault.New(fault.Unavailable, "db down"), codes.Unavailable, "db down"},
		{"wrapped fault", fmt.Errorf("ctx: %w", fault.New(fault.NotFound, "gone")), codes.NotFound, "gone"},
		{"plain error hides its text", errors.New("pq: password leaked"), codes.Internal, "internal error"},
		{"internal fault hides its text", fault.New(fault.Internal, "secret"), codes.Internal, "internal error"},
		{"status passes through", status.Error(codes.NotFound, "x"), codes.NotFound, "x"},
		{"canceled", fmt.Errorf("q: %w", context.Canceled), codes.Canceled, "request canceled"},
		// The issue's: a dropped database connection was a 500.
		{"a dropped connection", fmt.Errorf("record stake entry: %w", io.ErrUnexpectedEOF), codes.Unavailable,
			"the database is unavailable: try again shortly"},
		{"a database shutting down", fmt.Errorf("q: %w", &pgconn.PgError{Code: "57P01"}), codes.Unavailable,
			"the database is unavailable: try again shortly"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := grpcerr.Status(tt.err)
			require.Equal(t, tt.wantCode, s.Code())
			require.Equal(t, tt.wantMsg, s.Message())
		})
	}
}

// TestStatusOfALostDatabaseSaysWhenToRetry: the database's Unavailable
// carries a retry delay (the gateway's Retry-After) and its reason.
func TestStatusOfALostDatabaseSaysWhenToRetry(t *testing.T) {
	t.Parallel()
	s := grpcerr.Status(fmt.Errorf("begin: %w", io.ErrUnexpectedEOF))
	var delay time.Duration
	var reason string
	for _, d := range s.Details() {
		switch d := d.(type) {
		case *errdetails.RetryInfo:
			delay = d.GetRetryDelay().AsDuration()
		case *errdetails.ErrorInfo:
			reason = d.GetReason()
		}
	}
	require.Equal(t, time.Second, delay)
	require.Equal(t, "UNAVAILABLE", reason)
}

func TestStatusClipsLongDetails(t *testing.T) {
	t.Parallel()
	// A detail quoting a 1 MiB id is cut to 4 KiB at a character boundary.
	s := grpcerr.Status(fault.New(fault.NotFound, "idea %s not found", strings.Repeat("😀", 1<<18)))
	require.Equal(t, codes.NotFound, s.Code())
	require.LessOrEqual(t, len(s.Message()), 4096+len("…"))
	require.True(t, utf8.ValidString(s.Message()))
	require.True(t, strings.HasPrefix(s.Message(), "idea 😀😀"))
	require.True(t, strings.HasSuffix(s.Message(), "😀…"))
	short := "idea " + strings.Repeat("x", 4091)
	require.Equal(t, short, grpcerr.Status(fault.New(fault.NotFound, "%s", short)).Message(), "4096 bytes are kept whole")
}

func TestStatusCarriesFieldViolations(t *testing.T) {
	t.Parallel()
	s := grpcerr.Status(fault.Validation(fault.Field("handle", "too short")))
	require.Equal(t, codes.InvalidArgument, s.Code())
	require.Len(t, s.Details(), 2)
	info, ok := s.Details()[0].(*errdetails.ErrorInfo)
	require.True(t, ok, "first detail is %T", s.Details()[0])
	require.Equal(t, grpcerr.Domain, info.Domain)
	require.Equal(t, "INVALID", info.Reason)
	br, ok := s.Details()[1].(*errdetails.BadRequest)
	require.True(t, ok, "second detail is %T", s.Details()[1])
	require.Equal(t, "handle", br.FieldViolations[0].Field)
	require.Equal(t, "too short", br.FieldViolations[0].Description)
}

func TestStatusCarriesRetryDelay(t *testing.T) {
	t.Parallel()
	s := grpcerr.Status(&fault.Error{Kind: fault.RateLimited, Detail: "slow down", RetryAfter: 20 * time.Second})
	require.Equal(t, codes.ResourceExhausted, s.Code())
	var got *errdetails.RetryInfo
	for _, d := range s.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			got = ri
		}
	}
	require.NotNil(t, got, "a RetryInfo detail among %v", s.Details())
	require.Equal(t, 20*time.Second, got.GetRetryDelay().AsDuration())

	for _, d := range grpcerr.Status(fault.New(fault.RateLimited, "slow down")).Details() {
		_, isRetry := d.(*errdetails.RetryInfo)
		require.False(t, isRetry, "no RetryInfo without a delay")
	}
}

// Package grpcerr is the one table from domain failure kinds to gRPC status
// codes. Handlers return domain errors; the interceptor here turns them into
// statuses so no handler builds a status by hand.
package grpcerr

import (
	"github.com/foundryhq/foundry/services/platform/observability"
	"github.com/foundryhq/foundry/services/platform/wire"

	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// codeOf is the table. Every fault.Kind has a row.
var codeOf = map[fault.Kind]codes.Code{
	fault.Internal:        codes.Internal,
	fault.Invalid:         codes.InvalidArgument,
	fault.Rejected:        codes.FailedPrecondition,
	fault.NotFound:        codes.NotFound,
	fault.AlreadyExists:   codes.AlreadyExists,
	fault.Conflict:        codes.Aborted,
	fault.Unauthenticated: codes.Unauthenticated,
	fault.Forbidden:       codes.PermissionDenied,
	fault.RateLimited:     codes.ResourceExhausted,
	fault.Unimplemented:   codes.Unimplemented,
	fault.Unavailable:     codes.Unavailable,
}

// Code returns the gRPC code for a failure kind.
func Code(k fault.Kind) codes.Code {
	if c, ok := codeOf[k]; ok {
		return c
	}
	return codes.Internal
}

// Domain marks the ErrorInfo detail of every status built from a domain
// failure: its message was written for the caller, so a proxy may show it
// even for codes whose text it would otherwise hide.
const Domain = wire.ErrorDomain

// internalMessage replaces the text of unclassified errors: their details are
// logged, never sent.
const internalMessage = "internal error"

// maxDetail bounds the message of a status built from a domain failure. A
// detail may quote the caller's input (an id that was not found), and not
// every id is length-checked before its lookup: a 1 MiB id came back as a
// 1 MiB message, which gRPC percent-encodes into a trailer at every hop, and
// took seconds. Field violations still list every field.
const maxDetail = 4096

// clip cuts a detail longer than maxDetail bytes at a character boundary
// and marks the cut.
func clip(detail string) string {
	if len(detail) <= maxDetail {
		return detail
	}
	cut := maxDetail
	for cut > 0 && !utf8.RuneStart(detail[cut]) {
		cut--
	}
	return detail[:cut] + "…"
}

// Status converts err to a gRPC status. A status error passes through; a
// fault.Error maps through the table with an ErrorInfo detail (Domain, and
// the kind as reason), its field violations as a BadRequest detail and its
// retry delay as a RetryInfo detail; anything else is Internal with a
// generic message. A
// context error keeps its meaning (Canceled or DeadlineExceeded).
func Status(err error) *status.Status {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok {
		return s
	}
	if fe, ok := fault.As(err); ok {
		if fe.Kind == fault.Internal {
			return status.New(codes.Internal, internalMessage)
		}
		s := status.New(Code(fe.Kind), clip(fe.Detail))
		details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Domain: Domain, Reason: strings.ToUpper(fe.Kind.String())}}
		if len(fe.Fields) > 0 {
			br := &errdetails.BadRequest{}
			for _, f := range fe.Fields {
				br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: f.Field, Description: f.Message})
			}
			details = append(details, br)
		}
		if fe.RetryAfter > 0 {
			details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(fe.RetryAfter)})
		}
		if withDetails, derr := s.WithDetails(details...); derr == nil {
			return withDetails
		}
		return s
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.New(codes.Canceled, "request canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return status.New(codes.DeadlineExceeded, "deadline exceeded")
	case database.IsUnavailable(err):
		// Connection loss and a database shutting down are worth a retry:
		// Unavailable with a retry delay (the gateway's 503 and
		// Retry-After), never an internal error.
		return Status(&fault.Error{Kind: fault.Unavailable, Detail: databaseUnavailable, RetryAfter: time.Second})
	}
	return status.New(codes.Internal, internalMessage)
}

// databaseUnavailable is the detail of a request the database failed for
// want of a connection: what the client may do, not the driver's words.
const databaseUnavailable = "the database is unavailable: try again shortly"

// UnaryServerInterceptor converts handler errors with Status, logging the
// original error of every Internal failure (the caller sees only a generic
// message).
func UnaryServerInterceptor(log *zap.Logger) grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		resp, err := handler(ctx, req)
		if err == nil {
			return resp, nil
		}
		s := Status(err)
		switch {
		case s.Code() == codes.Internal:
			log.Error("internal error", append(observability.Fields(ctx), zap.String("method", info.FullMethod), zap.Error(err))...)
		case database.IsUnavailable(err):
			log.Warn("database unavailable", append(observability.Fields(ctx), zap.String("method", info.FullMethod), zap.Error(err))...)
		}
		return nil, s.Err()
	}
}

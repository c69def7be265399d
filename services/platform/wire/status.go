package wire

import (
	"net/http"

	"google.golang.org/grpc/codes"
)

// ErrorDomain marks the ErrorInfo detail of every status a service built
// from a domain failure (platform/grpcerr), which tells a service's own
// answer from a transport's: a client reads it to know the text is meant
// for people.
const ErrorDomain = "foundry"

// httpStatusOf is the one table from gRPC codes to HTTP statuses (the domain
// kinds map to codes in platform/grpcerr). The gateway answers REST with it
// and the CLI reports a gRPC call's failure with the status the same call
// would have had over REST.
var httpStatusOf = map[codes.Code]int{
	codes.OK:                 http.StatusOK,
	codes.InvalidArgument:    http.StatusUnprocessableEntity,
	codes.OutOfRange:         http.StatusUnprocessableEntity,
	codes.FailedPrecondition: http.StatusBadRequest,
	codes.Unauthenticated:    http.StatusUnauthorized,
	codes.PermissionDenied:   http.StatusForbidden,
	codes.NotFound:           http.StatusNotFound,
	codes.AlreadyExists:      http.StatusConflict,
	codes.Aborted:            http.StatusConflict,
	codes.ResourceExhausted:  http.StatusTooManyRequests,
	codes.Unimplemented:      http.StatusNotImplemented,
	codes.Canceled:           499, // the client went away; nobody reads this
	codes.Unavailable:        http.StatusServiceUnavailable,
	codes.DeadlineExceeded:   http.StatusGatewayTimeout,
}

// HTTPStatus returns the HTTP status for a gRPC code; 500 for codes that
// mean a bug (Internal, Unknown, DataLoss).
func HTTPStatus(c codes.Code) int {
	if s, ok := httpStatusOf[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

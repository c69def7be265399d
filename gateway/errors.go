package gateway

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/foundryhq/foundry/services/platform/grpcerr"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// HTTPStatus returns the HTTP status for a gRPC code: the platform's one
// table (wire.HTTPStatus), which the CLI reads too.
func HTTPStatus(c codes.Code) int { return wire.HTTPStatus(c) }

// ErrorBody is every error response: {"detail": ...}, plus the invalid
// fields of a validation failure.
type ErrorBody struct {
	Detail string       `json:"detail"`
	Errors []FieldError `json:"errors,omitempty"`
}

// FieldError names one invalid field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// serverErrorDetail is what a caller sees of a 5xx: the backend's text may
// name hosts, dial errors or internals.
var serverErrorDetail = map[int]string{
	http.StatusInternalServerError: "internal error",
	http.StatusServiceUnavailable:  "service unavailable: try again shortly",
	http.StatusGatewayTimeout:      "the request timed out",
}

// errorBody builds the response for a gRPC status.
func errorBody(s *status.Status) (int, ErrorBody) {
	code := HTTPStatus(s.Code())
	if s.Code() == codes.ResourceExhausted && !isServiceMessage(s) {
		// Not a rate limit but a transport limit (a message over the gRPC
		// size cap): the server's problem, not the caller's.
		code = http.StatusInternalServerError
	}
	body := ErrorBody{Detail: s.Message()}
	if code >= 500 && code != http.StatusNotImplemented {
		body.Detail = serverErrorDetail[code]
		if body.Detail == "" {
			body.Detail = http.StatusText(code)
		}
		if s.Code() == codes.Unavailable && isServiceMessage(s) {
			body.Detail = s.Message()
		}
	}
	for _, d := range s.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				body.Errors = append(body.Errors, FieldError{Field: v.GetField(), Message: v.GetDescription()})
			}
		}
	}
	if body.Detail == "" {
		body.Detail = http.StatusText(code)
	}
	return code, body
}

// isServiceMessage tells a service's own Unavailable answer (readiness naming
// the failing part, which callers need) from a transport failure, whose text
// is a dial error: services mark theirs with an ErrorInfo in grpcerr.Domain.
func isServiceMessage(s *status.Status) bool {
	for _, d := range s.Details() {
		if ei, ok := d.(*errdetails.ErrorInfo); ok && ei.GetDomain() == grpcerr.Domain {
			return true
		}
	}
	return false
}

// writeError writes err as a JSON error response.
func writeError(w http.ResponseWriter, err error) {
	var hs *runtime.HTTPStatusError
	if errors.As(err, &hs) {
		writeJSONError(w, hs.HTTPStatus, ErrorBody{Detail: routingDetail(hs.HTTPStatus)})
		return
	}
	s := status.Convert(err)
	code, body := errorBody(s)
	switch code {
	case http.StatusTooManyRequests:
		if wait, ok := retryDelay(s); ok {
			w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(wait), 10))
		}
	case http.StatusServiceUnavailable:
		// A retrying client waits the service's delay (the database's
		// 1 s), or 1 s for a service the gateway could not reach.
		wait, ok := retryDelay(s)
		if !ok {
			wait = time.Second
		}
		w.Header().Set("Retry-After", strconv.FormatInt(retrySeconds(wait), 10))
	}
	writeJSONError(w, code, body)
}

// retryDelay is the wait a service put in the status's RetryInfo detail.
func retryDelay(s *status.Status) (time.Duration, bool) {
	for _, d := range s.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && ri.GetRetryDelay() != nil {
			if wait := ri.GetRetryDelay().AsDuration(); wait > 0 {
				return wait, true
			}
		}
	}
	return 0, false
}

// retrySeconds is a wait as Retry-After states it: whole seconds, rounded
// up (a client retrying after 0 s would only be refused again).
func retrySeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

func routingDetail(code int) string {
	switch code {
	case http.StatusNotFound:
		return "not found"
	case http.StatusMethodNotAllowed:
		return "method not allowed"
	}
	return http.StatusText(code)
}

// errorHandler is the runtime.ErrorHandlerFunc for generated routes.
func errorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	s := status.Convert(err)
	fe, ok := queryFieldError(s, r)
	if !ok {
		fe, ok = pathFieldError(s)
	}
	if !ok {
		fe, ok = bodyFieldError(s, r)
	}
	if ok {
		writeJSONError(w, http.StatusUnprocessableEntity, ErrorBody{Detail: fe.Field + ": " + fe.Message, Errors: []FieldError{fe}})
		return
	}
	writeError(w, err)
}

// pathMismatch is grpc-gateway's refusal of a path parameter that does not
// parse as its field's type ("type mismatch, parameter: seq, error:
// strconv.ParseInt: parsing \"..\": invalid syntax"): the parser's text,
// which a detail never carries.
var pathMismatch = regexp.MustCompile(`^type mismatch, parameter: ([a-z_][a-z0-9_.]*), error: (.*)$`)

// pathFieldError is the field error of such a refusal, in words: what the
// parameter must be, by the parser that refused it.
func pathFieldError(s *status.Status) (FieldError, bool) {
	m := pathMismatch.FindStringSubmatch(s.Message())
	if s.Code() != codes.InvalidArgument || m == nil {
		return FieldError{}, false
	}
	msg := "has the wrong type for this path"
	switch cause := m[2]; {
	case strings.Contains(cause, "ParseInt"), strings.Contains(cause, "ParseUint"):
		msg = "must be a whole number"
		if strings.Contains(cause, "out of range") {
			msg = "must be a whole number within range"
		}
	case strings.Contains(cause, "ParseFloat"):
		msg = "must be a number"
	case strings.Contains(cause, "ParseBool"):
		msg = "must be true or false"
	}
	return FieldError{Field: m[1], Message: msg}, true
}

// routingErrorHandler answers unknown paths 404 and wrong methods 405 (the
// default would turn 405 into 501).
func routingErrorHandler(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, _ *http.Request, code int) {
	writeJSONError(w, code, ErrorBody{Detail: routingDetail(code)})
}

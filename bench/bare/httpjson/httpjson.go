// Package httpjson is the HTTP plumbing of the benchmark's baselines
// (bench/bare and bench/twohop's front): the gateway's conventions (JSON
// bodies of at most 1 MiB with unknown fields refused, {"detail", "errors"}
// error bodies, a 30 s request timeout, the query's integers and booleans),
// kept to what a hand-written server would do.
package httpjson

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/foundryhq/foundry/bench/bare/sqlcore"
)

// Name starts the lines the plumbing logs: the server's name.
var Name = "bare"

// RequestTimeout is the gateway's default -request-timeout.
const RequestTimeout = 30 * time.Second

// WithTimeout gives every request of h RequestTimeout to finish.
func WithTimeout(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), RequestTimeout)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// ErrorBody is the body of every failure: the gateway's.
type ErrorBody struct {
	Detail string               `json:"detail"`
	Errors []sqlcore.FieldError `json:"errors,omitempty"`
}

// NotFound answers a path no route serves.
func NotFound(w http.ResponseWriter, _ *http.Request) {
	WriteJSON(w, http.StatusNotFound, ErrorBody{Detail: "not found"})
}

// WriteJSON answers status with v encoded by encoding/json.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		log.Printf("%s: encode response: %v", Name, err)
		status, b = http.StatusInternalServerError, []byte(`{"detail":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// WriteError answers err: a *sqlcore.Error with its status and detail, a
// timeout with 504, anything else (logged) with 500.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *sqlcore.Error
	if errors.As(err, &ae) {
		WriteJSON(w, ae.Status, ErrorBody{Detail: ae.Detail, Errors: ae.Fields})
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		WriteJSON(w, http.StatusGatewayTimeout, ErrorBody{Detail: "the request timed out"})
		return
	}
	log.Printf("%s: %s %s: %v", Name, r.Method, r.URL.Path, err)
	WriteJSON(w, http.StatusInternalServerError, ErrorBody{Detail: "internal error"})
}

// MaxBody is the gateway's default -max-body-bytes.
const MaxBody = 1 << 20

// Decode reads a JSON body into dst as the gateway does: a body needs a JSON
// Content-Type, at most MaxBody bytes, one JSON value, no unknown field; an
// empty body means no fields.
func Decode(w http.ResponseWriter, r *http.Request, dst any) error {
	ct := r.Header.Get("Content-Type")
	if ct != "" || r.ContentLength > 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return sqlcore.Fail(http.StatusUnsupportedMediaType, "unsupported Content-Type: send the body as JSON with Content-Type: application/json")
		}
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return sqlcore.Fail(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", MaxBody)
		}
		return sqlcore.Fail(http.StatusBadRequest, "could not read the request body")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return sqlcore.Fail(http.StatusUnprocessableEntity, "malformed JSON: %v", err)
	}
	if dec.More() {
		return sqlcore.Fail(http.StatusUnprocessableEntity, "malformed JSON: more than one value in the body")
	}
	return nil
}

// IntParam reads an optional integer query parameter.
func IntParam(q url.Values, name string) (*int, error) {
	raw := q.Get(name)
	if raw == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(raw, 10, 32)
	if err != nil {
		return nil, sqlcore.Invalid(sqlcore.Field(name, "must be an integer"))
	}
	v := int(n)
	return &v, nil
}

// BoolParam reads an optional boolean query parameter (false when absent
// or empty).
func BoolParam(q url.Values, name string) (bool, error) {
	raw := q.Get(name)
	if raw == "" {
		return false, nil
	}
	v, err := strconv.ParseBool(raw)
	if err != nil {
		return false, sqlcore.Invalid(sqlcore.Field(name, "must be true or false"))
	}
	return v, nil
}

// DryRun is the gateway's dryRunFromQuery: a dry_run parameter, even
// empty, sets req's dry run; a value must be a boolean.
func DryRun(q url.Values, dry *bool) error {
	if !q.Has("dry_run") {
		return nil
	}
	v := true
	if raw := q.Get("dry_run"); raw != "" {
		var err error
		if v, err = strconv.ParseBool(raw); err != nil {
			return sqlcore.Invalid(sqlcore.Field("dry_run", "must be true or false"))
		}
	}
	*dry = v
	return nil
}

// BearerToken is rpcmeta.BearerToken: the token of an Authorization header
// "Bearer <token>" ("" when there is none).
func BearerToken(r *http.Request) string {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

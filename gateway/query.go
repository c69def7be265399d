package gateway

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/grpc-ecosystem/grpc-gateway/v2/utilities"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/foundryhq/foundry/services/platform/wire"
)

// strictQuery is the query parser of the generated routes (GET and the
// body-less routes): grpc-gateway's own parser ignores a parameter that
// names no field, so GET /api/ideas?stage=bogus answered every idea as if
// it had filtered them, and it answers a value that does not parse with
// strconv's text. This one refuses both with a 422 naming the parameter.
type strictQuery struct{ runtime.DefaultQueryParser }

// Parse implements runtime.QueryParameterParser.
func (q strictQuery) Parse(msg proto.Message, values url.Values, filter *utilities.DoubleArray) error {
	for _, key := range slices.Sorted(maps.Keys(values)) {
		path := strings.Split(key, ".")
		if filter.HasCommonPrefix(path) {
			continue // a path parameter, set from the path
		}
		fd := fieldAt(msg.ProtoReflect().Descriptor(), path)
		if fd == nil {
			return invalidQuery(key, "is not a parameter of this route")
		}
		if !fd.IsList() && len(values[key]) > 1 {
			return invalidQuery(key, "must be given once")
		}
		if fd.Kind() == protoreflect.EnumKind {
			// An empty value is "not given", as it was for the string
			// filters these enums replaced (?status= lists every task).
			if w := values.Get(key); w == "" {
				continue
			} else if !wire.IsWord(fd.Enum(), w) {
				return invalidQuery(key, oneOf(fd.Enum()))
			}
		}
		if err := q.DefaultQueryParser.Parse(msg, url.Values{key: values[key]}, filter); err != nil {
			return invalidQuery(key, expected(fd))
		}
	}
	return nil
}

// fieldAt is the field a dotted query key names (by proto or JSON name,
// as grpc-gateway resolves it), through singular message fields; nil when
// there is none.
func fieldAt(md protoreflect.MessageDescriptor, path []string) protoreflect.FieldDescriptor {
	var fd protoreflect.FieldDescriptor
	for i, name := range path {
		if md == nil {
			return nil
		}
		fd = md.Fields().ByTextName(name)
		if fd == nil {
			fd = md.Fields().ByJSONName(name)
		}
		if fd == nil || (i < len(path)-1 && (fd.Message() == nil || fd.IsList() || fd.IsMap())) {
			return nil
		}
		md = fd.Message()
	}
	return fd
}

// expected says what a query value for fd must be.
func expected(fd protoreflect.FieldDescriptor) string {
	kind := fd.Kind()
	if m := fd.Message(); m != nil && strings.HasPrefix(string(m.FullName()), "google.protobuf.") && m.Fields().Len() == 1 {
		kind = m.Fields().Get(0).Kind() // a wrapper: its value's kind
	}
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return fmt.Sprintf("must be a whole number from %d to %d", math.MinInt32, math.MaxInt32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return "must be a whole number"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return "must be a whole number of at least 0"
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return "must be a number"
	case protoreflect.BoolKind:
		return "must be true or false"
	}
	return "has a value this route cannot read"
}

// queryError is a query parameter's refusal. The generated handlers pass a
// parser's error on as the text of an InvalidArgument status, so the text
// is "<parameter>: <message>", and queryFieldError reads the parameter back
// for the response's errors list.
type queryError struct{ key, msg string }

func (e queryError) Error() string { return e.key + ": " + e.msg }

// invalidQuery is the 422 of a query parameter, naming it.
func invalidQuery(key, msg string) error { return queryError{key, msg} }

// queryFieldError is the field error of a 422 that grpc-gateway made of a
// queryError: its text names a parameter the request's query has.
func queryFieldError(s *status.Status, r *http.Request) (FieldError, bool) {
	if s.Code() != codes.InvalidArgument || len(s.Details()) > 0 || r == nil {
		return FieldError{}, false
	}
	key, msg, ok := strings.Cut(s.Message(), ": ")
	if !ok || !r.URL.Query().Has(key) {
		return FieldError{}, false
	}
	return FieldError{Field: key, Message: msg}, true
}

// onlyDryRunInQuery refuses a query parameter on a request that is not a
// GET or HEAD, but a POST's dry_run (dryRunFromQuery folds it into the
// body). Such a route takes its fields from the JSON body alone, so a
// parameter there was silently ignored: ?dry-run=true or ?Dry_Run=true
// made a real stake.
func onlyDryRunInQuery(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" || r.Method == http.MethodGet || r.Method == http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		q, _ := url.ParseQuery(r.URL.RawQuery)
		for _, name := range slices.Sorted(maps.Keys(q)) {
			if name == "dry_run" && r.Method == http.MethodPost {
				continue
			}
			msg := "is not a parameter of this route: send the request's fields in its JSON body"
			if r.Method == http.MethodPost {
				msg += " (the one query parameter a POST takes is dry_run)"
			}
			writeJSONError(w, http.StatusUnprocessableEntity, ErrorBody{Detail: name + ": " + msg,
				Errors: []FieldError{{Field: name, Message: msg}}})
			return
		}
		next.ServeHTTP(w, r)
	})
}

package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/foundryhq/foundry/services/platform/wire"
)

// strictDecoder decodes request bodies with Foundry's rules: on top of
// protojson's (unknown fields are errors), every value must have its field's
// JSON type. protojson alone accepts "1.5" for a number and "NaN" for a
// double, which would let a string slip through where the API promises a
// 422 for a wrong type.
type strictDecoder struct {
	r        io.Reader
	fallback runtime.Decoder
}

// Decode implements runtime.Decoder. An empty body is io.EOF, which the
// generated handlers treat as "no fields".
func (d strictDecoder) Decode(v any) error {
	msg, ok := v.(proto.Message)
	if !ok {
		return d.fallback.Decode(v)
	}
	data, err := io.ReadAll(d.r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return io.EOF
	}
	if !passesChecks(msg.ProtoReflect().Descriptor(), data) {
		if err := fullCheck(msg, data); err != nil {
			return err
		}
	}
	if err := unmarshalOptions.Unmarshal(data, msg); err != nil {
		return protoRefusal(err)
	}
	return nil
}

// protoRefusals turn what protojson refuses after the checks passed (what
// encoding/json lets by: invalid UTF-8, a lone surrogate's escape, a key
// sent twice, a number beyond a double) into a sentence naming the field
// where it names one; its own text names the parser and a line and column
// ("proto: (line 1:39): invalid value for double field potentialValue").
var protoRefusals = []struct {
	re  *regexp.Regexp
	say func(m []string) string
}{
	{regexp.MustCompile(`duplicate field "([A-Za-z0-9_]+)"`), func(m []string) string { return snake(m[1]) + ": is sent more than once" }},
	{regexp.MustCompile(`invalid value for (\w+) field ([A-Za-z0-9_]+)`), func(m []string) string {
		return snake(m[2]) + ": must be " + kindWords(m[1])
	}},
	{regexp.MustCompile(`invalid UTF-8`), func([]string) string { return "the body is not valid JSON: a string holds bytes that are not UTF-8" }},
	// protojson reads a lone surrogate's escape ("\ud800") as the end of
	// its input; the body parsed whole before it got there, so that is
	// what an EOF from it means.
	{regexp.MustCompile(`invalid escape code|unexpected EOF`), func([]string) string {
		return "the body is not valid JSON: a string holds an escape that is no character (a lone surrogate)"
	}},
}

// protoRefusal is the sentence of a protojson refusal.
func protoRefusal(err error) error {
	for _, r := range protoRefusals {
		if m := r.re.FindStringSubmatch(err.Error()); m != nil {
			return errors.New(r.say(m))
		}
	}
	return errors.New("the body does not fit this request: check each field's type in the API reference")
}

// kindWords says what a value of a protojson kind must be.
func kindWords(kind string) string {
	switch kind {
	case "string", "bytes":
		return "a string"
	case "bool":
		return "true or false"
	case "enum":
		return "one of the words the API reference lists"
	case "double", "float":
		return "a number within range"
	}
	return "a whole number within range"
}

// snake is a field's JSON name as the API spells it (protojson names
// potentialValue where the body said potential_value).
func snake(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// fullCheck is the strict decoder's check of a body that passesChecks
// (decode_fast.go) did not let through: decoded into Go values, it names
// what is wrong, or passes a body the fast path was unsure of.
func fullCheck(msg proto.Message, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return malformed(err)
	}
	if dec.More() {
		return fmt.Errorf("the body is not valid JSON: it holds more than one value")
	}
	if doc == nil {
		return fmt.Errorf("the body must be a JSON object, not null")
	}
	if err := checkMessage(msg.ProtoReflect().Descriptor(), doc, ""); err != nil {
		return err
	}
	return checkDocument(doc, "", 1)
}

// malformed is the refusal of a body that is not JSON, said in words
// rather than in encoding/json's ("invalid character '}' looking for
// beginning of object key string"), with where it goes wrong.
func malformed(err error) error {
	var syntax *json.SyntaxError
	switch {
	case errors.As(err, &syntax):
		return fmt.Errorf("the body is not valid JSON: it goes wrong at byte %d", syntax.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("the body is not valid JSON: it ends before its value does")
	}
	return fmt.Errorf("the body is not valid JSON")
}

// maxBodyDepth bounds how deeply a request body nests objects and arrays.
// A free-form field (a task's context, a node's payload) is a
// google.protobuf.Struct, three messages per JSON level, and a gRPC server
// refuses a message nested past protobuf's limit of 10 000 as an internal
// error: a payload 4 000 levels deep was a 500. No body needs more than
// a few levels.
const maxBodyDepth = 64

// checkDocument checks what every body must satisfy whatever its fields:
// nesting within maxBodyDepth (depth is v's own level, 1 for the body), and
// no NUL character in a string or a key. Postgres text and jsonb cannot hold
// U+0000, so a NUL that reached a statement was a 500 there (while SQLite
// stored it); nothing Foundry keeps needs one.
func checkDocument(v any, path string, depth int) error {
	switch v := v.(type) {
	case string:
		if strings.ContainsRune(v, 0) {
			return fmt.Errorf("%s: must not contain NUL characters", orBody(path))
		}
	case map[string]any:
		if depth > maxBodyDepth {
			return fmt.Errorf("%s: nested deeper than %d levels", orBody(path), maxBodyDepth)
		}
		for k, item := range v {
			if strings.ContainsRune(k, 0) {
				return fmt.Errorf("%s: keys must not contain NUL characters", orBody(path))
			}
			if err := checkDocument(item, join(path, k), depth+1); err != nil {
				return err
			}
		}
	case []any:
		if depth > maxBodyDepth {
			return fmt.Errorf("%s: nested deeper than %d levels", orBody(path), maxBodyDepth)
		}
		for i, item := range v {
			if err := checkDocument(item, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// orBody names a value by its path, or as the body itself.
func orBody(path string) string {
	if path == "" {
		return "the body"
	}
	return path
}

// checkMessage checks a JSON value against a message's fields. A field it
// does not know is refused by its name (protojson would refuse it too, but
// as "proto: (line 1:2): unknown field", naming the parser, not the field).
func checkMessage(md protoreflect.MessageDescriptor, v any, path string) error {
	switch md.FullName() {
	case "google.protobuf.Struct":
		return expect(v, isObject, path, "an object")
	case "google.protobuf.ListValue":
		return expect(v, isArray, path, "an array")
	case "google.protobuf.Value":
		return nil
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int32Value",
		"google.protobuf.UInt32Value", "google.protobuf.Int64Value", "google.protobuf.UInt64Value":
		if err := expect(v, isNumber, path, "a number or null"); err != nil || v == nil {
			return err
		}
		return checkNumber(md.Fields().ByName("value").Kind(), v.(json.Number), path)
	case "google.protobuf.StringValue", "google.protobuf.BytesValue":
		return expect(v, isString, path, "a string or null")
	case "google.protobuf.BoolValue":
		return expect(v, isBool, path, "true, false or null")
	}
	if v == nil {
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		if path == "" {
			return fmt.Errorf("the body must be a JSON object")
		}
		return fmt.Errorf("%s: must be an object", path)
	}
	fields := md.Fields()
	for key, val := range obj {
		fd := fields.ByJSONName(key)
		if fd == nil {
			fd = fields.ByTextName(key)
		}
		if fd == nil {
			return fmt.Errorf("%s: is not a field of this request", join(path, key))
		}
		if err := checkField(fd, val, join(path, key)); err != nil {
			return err
		}
	}
	return nil
}

func checkField(fd protoreflect.FieldDescriptor, v any, path string) error {
	switch {
	case v == nil && fd.Kind() == protoreflect.BoolKind && !fd.IsList():
		// protojson reads a null bool as false, so "dry_run": null made a
		// real stake; a flag must say which it is.
		return fmt.Errorf("%s: must be true or false, not null", path)
	case v == nil:
		return nil
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: must be an object", path)
		}
		for k, item := range obj {
			if err := checkValue(fd.MapValue(), item, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case fd.IsList():
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: must be an array", path)
		}
		for i, item := range arr {
			at := fmt.Sprintf("%s[%d]", path, i)
			if item == nil && fd.Message() == nil {
				return fmt.Errorf("%s: must not be null", at)
			}
			if err := checkValue(fd, item, at); err != nil {
				return err
			}
		}
		return nil
	}
	return checkValue(fd, v, path)
}

// checkValue checks one (non-list) value of the field's kind.
func checkValue(fd protoreflect.FieldDescriptor, v any, path string) error {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return checkMessage(fd.Message(), v, path)
	case protoreflect.BoolKind:
		return expect(v, isBool, path, "true or false")
	case protoreflect.StringKind, protoreflect.BytesKind:
		return expect(v, isString, path, "a string")
	case protoreflect.EnumKind:
		if fd.Enum().FullName() == "google.protobuf.NullValue" {
			return nil // a Struct's null
		}
		if w, ok := v.(string); ok && wire.IsWord(fd.Enum(), w) {
			return nil
		}
		return fmt.Errorf("%s: %s", path, oneOf(fd.Enum()))
	default: // every numeric kind
		if err := expect(v, isNumber, path, "a number"); err != nil || v == nil {
			return err
		}
		return checkNumber(fd.Kind(), v.(json.Number), path)
	}
}

// checkNumber says, naming the field, when a JSON number does not fit its
// field's kind (protojson's own message quoted strconv: "invalid value for
// int32 field lease_seconds: 1.5").
func checkNumber(kind protoreflect.Kind, n json.Number, path string) error {
	var err error
	what := ""
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		_, err = strconv.ParseInt(string(n), 10, 32)
		what = fmt.Sprintf("a whole number from %d to %d", math.MinInt32, math.MaxInt32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		_, err = strconv.ParseInt(string(n), 10, 64)
		what = "a whole number"
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		_, err = strconv.ParseUint(string(n), 10, 32)
		what = fmt.Sprintf("a whole number from 0 to %d", uint32(math.MaxUint32))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		_, err = strconv.ParseUint(string(n), 10, 64)
		what = "a whole number of at least 0"
	default:
		return nil // float and double: any JSON number (the services check ranges)
	}
	if err != nil {
		if path == "" {
			return fmt.Errorf("the body must be %s", what)
		}
		return fmt.Errorf("%s: must be %s", path, what)
	}
	return nil
}

func expect(v any, ok func(any) bool, path, what string) error {
	if v == nil || ok(v) {
		return nil
	}
	if path == "" {
		return fmt.Errorf("the body must be %s", what)
	}
	return fmt.Errorf("%s: must be %s", path, what)
}

func isObject(v any) bool { _, ok := v.(map[string]any); return ok }
func isArray(v any) bool  { _, ok := v.([]any); return ok }
func isNumber(v any) bool { _, ok := v.(json.Number); return ok }
func isString(v any) bool { _, ok := v.(string); return ok }
func isBool(v any) bool   { _, ok := v.(bool); return ok }

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// NewDecoder implements runtime.Marshaler: request bodies go through the
// strict decoder.
func (m compactJSON) NewDecoder(r io.Reader) runtime.Decoder {
	return strictDecoder{r: r, fallback: m.JSONPb.NewDecoder(r)}
}

// pathMatchesBody is a grpc-gateway middleware (it runs after routing, with
// the path's parameters): a body field that is also a path parameter must
// name what the path names. The generated handlers let the path win in
// silence, so POST /api/ideas/A/stake with {"idea_id": "B"} staked on A.
// A mismatch is a 409 naming the field.
func pathMatchesBody(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		if len(params) == 0 || r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			next(w, r, params)
			return
		}
		data, err := io.ReadAll(r.Body)
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, ErrorBody{Detail: "could not read the request body"})
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		var body map[string]json.RawMessage
		if json.Unmarshal(data, &body) == nil {
			for _, name := range slices.Sorted(maps.Keys(params)) {
				var given string
				if raw, ok := body[name]; ok && json.Unmarshal(raw, &given) == nil && given != params[name] {
					msg := fmt.Sprintf("names %q, but the path names %q", given, params[name])
					writeJSONError(w, http.StatusConflict, ErrorBody{Detail: name + ": " + msg, Errors: []FieldError{{Field: name, Message: msg}}})
					return
				}
			}
		}
		next(w, r, params)
	}
}

// oneOf is the refusal of a word wire.IsWord does not take, in the words
// the services' own validation uses ("must be one of none, specced, ...").
func oneOf(d protoreflect.EnumDescriptor) string {
	return "must be one of " + strings.Join(wire.Words(d), ", ")
}

// bodyField is the path strictDecoder names a body's field by: JSON names
// joined by dots, list items by [index].
var bodyField = regexp.MustCompile(`^[a-z_][a-z0-9_]*(\.[a-z_][a-z0-9_]*|\[[0-9]+\])*$`)

// bodyFieldError is the field error of a 422 that grpc-gateway made of a
// strictDecoder refusal ("stage: must be one of …"): the generated handlers
// pass the decoder's error on as the bare text of an InvalidArgument status,
// which a service's own 422 never is (it carries its fields as details), so
// the text's field path is read back for the response's errors list, as the
// use case's validation gave it before the gateway checked the field.
func bodyFieldError(s *status.Status, r *http.Request) (FieldError, bool) {
	if s.Code() != codes.InvalidArgument || len(s.Details()) > 0 || r == nil || r.Method == http.MethodGet {
		return FieldError{}, false
	}
	field, msg, ok := strings.Cut(s.Message(), ": ")
	if !ok || !bodyField.MatchString(field) {
		return FieldError{}, false
	}
	return FieldError{Field: field, Message: msg}, true
}

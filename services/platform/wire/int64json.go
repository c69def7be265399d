package wire

import (
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// Foundry's JSON writes a 64-bit integer as a number, where protojson
// writes a string. Audit sequence numbers, tree sizes and the counts that
// grow without bound are int64 so that they pass 2^31; a client reads them
// as the numbers they were while they were int32, exactly up to 2^53 (at
// 2 000 movements a second, a log reaches 2^53 entries in about 140 000
// years). Map keys stay strings: a JSON object's keys are.
//
// The gateway's renderer writes numbers itself; what protojson renders for
// it (a delegated message, the fallback after a render error) passes
// through Int64AsNumbers, as does the JSON the CLI prints of an answer it
// got over gRPC, so both read as the REST API answers.

// Int64AsNumbers returns protojson's rendering b of a message of type md
// with its 64-bit integer values unquoted. b must be what protojson wrote
// (valid JSON); a value the walk does not recognise is copied unchanged.
func Int64AsNumbers(b []byte, md protoreflect.MessageDescriptor) []byte {
	if !has64(md, map[protoreflect.FullName]bool{}) {
		return b
	}
	w := unquoter{in: b, out: make([]byte, 0, len(b))}
	w.message(md)
	w.out = append(w.out, w.in[w.pos:]...)
	return w.out
}

// wellKnownJSON says whether an Any holding a message of type md carries
// it as "value" (a well-known type with a JSON form of its own).
func wellKnownJSON(md protoreflect.MessageDescriptor) bool {
	switch md.FullName() {
	case "google.protobuf.Any", "google.protobuf.Timestamp", "google.protobuf.Duration",
		"google.protobuf.FieldMask", "google.protobuf.Struct", "google.protobuf.Value",
		"google.protobuf.ListValue", "google.protobuf.Empty", "google.protobuf.BoolValue",
		"google.protobuf.Int32Value", "google.protobuf.UInt32Value", "google.protobuf.Int64Value",
		"google.protobuf.UInt64Value", "google.protobuf.FloatValue", "google.protobuf.DoubleValue",
		"google.protobuf.StringValue", "google.protobuf.BytesValue":
		return true
	}
	return false
}

// has64 says whether a message of type md can hold a 64-bit integer: in a
// field, a list, a map's value, a message within or an Any (which can hold
// anything).
func has64(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	switch md.FullName() {
	case "google.protobuf.Any", "google.protobuf.Int64Value", "google.protobuf.UInt64Value":
		return true
	}
	if md.ExtensionRanges().Len() > 0 {
		return true
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if is64(fd.Kind()) {
			return true
		}
		if m := fd.Message(); m != nil && has64(m, seen) {
			return true
		}
	}
	return false
}

func is64(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind,
		protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return true
	}
	return false
}

// unquoter walks protojson's output alongside the descriptors, copying
// in[:pos] to out as it goes, but for the quotes of 64-bit values.
type unquoter struct {
	in, out []byte
	pos     int
}

func (w *unquoter) space() {
	for w.pos < len(w.in) && (w.in[w.pos] == ' ' || w.in[w.pos] == '\n' || w.in[w.pos] == '\t' || w.in[w.pos] == '\r') {
		w.out = append(w.out, w.in[w.pos])
		w.pos++
	}
}

// peek is the next byte past spaces, 0 at the end.
func (w *unquoter) peek() byte {
	w.space()
	if w.pos < len(w.in) {
		return w.in[w.pos]
	}
	return 0
}

// emit copies n bytes.
func (w *unquoter) emit(n int) {
	w.out = append(w.out, w.in[w.pos:w.pos+n]...)
	w.pos += n
}

// skip copies one JSON value whatever it is: a string, an object or an
// array with all it holds, or a literal.
func (w *unquoter) skip() {
	switch w.peek() {
	case 0:
		return
	case '"':
		w.emit(stringLen(w.in[w.pos:]))
		return
	case '{', '[':
		depth := 0
		for w.pos < len(w.in) {
			switch w.in[w.pos] {
			case '"':
				w.emit(stringLen(w.in[w.pos:]))
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			w.emit(1)
			if depth == 0 {
				return
			}
		}
		return
	}
	for w.pos < len(w.in) && !strings.ContainsRune(",}] \n\t\r", rune(w.in[w.pos])) {
		w.emit(1)
	}
}

// stringLen is the length of the JSON string at the start of b, quotes
// included.
func stringLen(b []byte) int {
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// key reads an object's key and its colon, copying both, and returns the
// key's text (protojson's keys have no escapes).
func (w *unquoter) key() string {
	w.space()
	n := stringLen(w.in[w.pos:])
	k := string(w.in[w.pos+1 : w.pos+n-1])
	w.emit(n)
	if w.peek() == ':' {
		w.emit(1)
	}
	return k
}

// object walks an object, calling member after each key's colon.
func (w *unquoter) object(member func(key string)) {
	w.container('{', '}', func() { member(w.key()) })
}

// array walks an array, calling element for each.
func (w *unquoter) array(element func()) { w.container('[', ']', element) }

// container walks an object or an array (open and end its brackets),
// calling item at each member or element; anything else is copied.
func (w *unquoter) container(open, end byte, item func()) {
	if w.peek() != open {
		w.skip()
		return
	}
	w.emit(1)
	for {
		switch w.peek() {
		case end:
			w.emit(1)
			return
		case ',':
			w.emit(1)
		case 0:
			return
		default:
			item()
		}
	}
}

// number writes a quoted integer without its quotes.
func (w *unquoter) number() {
	if w.peek() != '"' {
		w.skip()
		return
	}
	n := stringLen(w.in[w.pos:])
	text := w.in[w.pos+1 : w.pos+n-1]
	if len(text) == 0 || strings.ContainsAny(string(text), "\\\".eE") {
		w.emit(n)
		return
	}
	w.out = append(w.out, text...)
	w.pos += n
}

// message walks a message of type md.
func (w *unquoter) message(md protoreflect.MessageDescriptor) {
	switch md.FullName() {
	case "google.protobuf.Int64Value", "google.protobuf.UInt64Value":
		w.number()
	case "google.protobuf.Any":
		w.anyValue()
	default:
		if wellKnownJSON(md) {
			// A JSON form of its own, with no 64-bit integer in it.
			w.skip()
			return
		}
		w.object(func(key string) { w.field(fieldByKey(md, key)) })
	}
}

// fieldByKey finds the field a member of md's object is: by its proto name
// (the gateway's), its JSON name, or an extension's [full.name].
func fieldByKey(md protoreflect.MessageDescriptor, key string) protoreflect.FieldDescriptor {
	if fd := md.Fields().ByName(protoreflect.Name(key)); fd != nil {
		return fd
	}
	if fd := md.Fields().ByJSONName(key); fd != nil {
		return fd
	}
	if name, ok := strings.CutPrefix(key, "["); ok {
		if xt, err := protoregistry.GlobalTypes.FindExtensionByName(protoreflect.FullName(strings.TrimSuffix(name, "]"))); err == nil {
			return xt.TypeDescriptor()
		}
	}
	return nil
}

// field walks one field's value.
func (w *unquoter) field(fd protoreflect.FieldDescriptor) {
	switch {
	case fd == nil || w.peek() == 'n': // unknown, or null
		w.skip()
	case fd.IsMap():
		w.object(func(string) { w.singular(fd.MapValue()) })
	case fd.IsList():
		w.array(func() { w.singular(fd) })
	default:
		w.singular(fd)
	}
}

// singular walks one value of fd's kind.
func (w *unquoter) singular(fd protoreflect.FieldDescriptor) {
	switch {
	case w.peek() == 'n':
		w.skip()
	case is64(fd.Kind()):
		w.number()
	case fd.Message() != nil:
		w.message(fd.Message())
	default:
		w.skip()
	}
}

// anyValue walks an Any: {"@type": url, fields…}, or {"@type": url,
// "value": v} for a well-known type with a JSON form of its own.
func (w *unquoter) anyValue() {
	var md protoreflect.MessageDescriptor
	w.object(func(key string) {
		switch {
		case key == "@type":
			start := len(w.out)
			w.skip()
			url := strings.Trim(string(w.out[start:]), `"`)
			if mt, err := protoregistry.GlobalTypes.FindMessageByURL(url); err == nil {
				md = mt.Descriptor()
			}
		case md == nil:
			w.skip()
		case key == "value" && wellKnownJSON(md):
			w.message(md)
		default:
			w.field(fieldByKey(md, key))
		}
	})
}

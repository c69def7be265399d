package gateway

import (
	"strconv"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/foundryhq/foundry/services/platform/wire"
)

// The strict decoder's fast path. The full check (strictDecoder.Decode)
// decodes a body twice: with encoding/json into maps and slices, for
// checkMessage and checkDocument, then with protojson into the message.
// The first decode was a third of what the gateway spent on a POST of a
// contribution of its own (a map per object, a string per key and value).
// passesChecks walks the bytes once without building anything and answers
// true only for a body the full check certainly accepts: one JSON value,
// an object whose known fields have their kinds' JSON types, nested within
// maxBodyDepth, with no NUL character. Anything it is unsure of (an escape
// in a key, "\u0000", a null in a list, a duplicate whose last value
// passes, malformed JSON) it refuses, and the full check then runs and
// answers as it always did, with its own messages: the fast path changes
// which code accepts a good body, never what any body gets.
// FuzzFastCheck holds it to that.

// scanner reads JSON from data, from i.
type scanner struct {
	data []byte
	i    int
}

// passesChecks reports whether body certainly passes the strict decoder's
// checks for a message of md.
func passesChecks(md protoreflect.MessageDescriptor, body []byte) bool {
	s := scanner{data: body}
	s.space()
	if s.peek() != '{' || !s.message(md, 1) {
		return false
	}
	s.space()
	return s.i == len(s.data)
}

func (s *scanner) space() {
	for s.i < len(s.data) {
		switch s.data[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte, 0 at the end.
func (s *scanner) peek() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// literal consumes word ("true", "false", "null").
func (s *scanner) literal(word string) bool {
	if len(s.data)-s.i < len(word) || string(s.data[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// null consumes a null if one is next.
func (s *scanner) null() bool {
	return s.peek() == 'n' && s.literal("null")
}

// str consumes a string without a NUL character and returns its raw
// contents and whether it held an escape.
func (s *scanner) str() (raw []byte, escaped, ok bool) {
	if s.peek() != '"' {
		return nil, false, false
	}
	s.i++
	start := s.i
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '"':
			raw = s.data[start:s.i]
			s.i++
			return raw, escaped, true
		case c < 0x20:
			return nil, false, false // a raw control character: not JSON
		case c == '\\':
			escaped = true
			if s.i+1 >= len(s.data) {
				return nil, false, false
			}
			switch s.data[s.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				if s.i+6 > len(s.data) {
					return nil, false, false
				}
				hex := s.data[s.i+2 : s.i+6]
				for _, h := range hex {
					if !isHex(h) {
						return nil, false, false
					}
				}
				if string(hex) == "0000" {
					return nil, false, false // NUL: the full check says so
				}
				s.i += 6
			default:
				return nil, false, false
			}
		default:
			s.i++
		}
	}
	return nil, false, false
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

// number consumes a number in JSON's grammar and returns its text.
func (s *scanner) number() ([]byte, bool) {
	start := s.i
	if s.peek() == '-' {
		s.i++
	}
	switch c := s.peek(); {
	case c == '0':
		s.i++
	case '1' <= c && c <= '9':
		for s.i++; isDigit(s.peek()); s.i++ {
		}
	default:
		return nil, false
	}
	if s.peek() == '.' {
		s.i++
		if !isDigit(s.peek()) {
			return nil, false
		}
		for isDigit(s.peek()) {
			s.i++
		}
	}
	if c := s.peek(); c == 'e' || c == 'E' {
		s.i++
		if c := s.peek(); c == '+' || c == '-' {
			s.i++
		}
		if !isDigit(s.peek()) {
			return nil, false
		}
		for isDigit(s.peek()) {
			s.i++
		}
	}
	return s.data[start:s.i], true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// members walks an object (depth is its level, as checkDocument counts),
// calling member for each key (raw, never escaped: an escaped key is left
// to the full check) with the scanner at the value.
func (s *scanner) members(depth int, member func(key []byte) bool) bool {
	if depth > maxBodyDepth || s.peek() != '{' {
		return false
	}
	s.i++
	s.space()
	if s.peek() == '}' {
		s.i++
		return true
	}
	for {
		s.space()
		key, escaped, ok := s.str()
		if !ok || escaped {
			return false
		}
		s.space()
		if s.peek() != ':' {
			return false
		}
		s.i++
		s.space()
		if !member(key) {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case '}':
			s.i++
			return true
		default:
			return false
		}
	}
}

// items walks an array like members.
func (s *scanner) items(depth int, item func() bool) bool {
	if depth > maxBodyDepth || s.peek() != '[' {
		return false
	}
	s.i++
	s.space()
	if s.peek() == ']' {
		s.i++
		return true
	}
	for {
		s.space()
		if !item() {
			return false
		}
		s.space()
		switch s.peek() {
		case ',':
			s.i++
		case ']':
			s.i++
			return true
		default:
			return false
		}
	}
}

// any consumes any JSON value (checkDocument's rules: depth and NUL).
func (s *scanner) any(depth int) bool {
	switch s.peek() {
	case '{':
		return s.members(depth, func([]byte) bool { return s.any(depth + 1) })
	case '[':
		return s.items(depth, func() bool { return s.any(depth + 1) })
	case '"':
		_, _, ok := s.str()
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	default:
		_, ok := s.number()
		return ok
	}
}

// message consumes a value of a message field (or the body): checkMessage.
func (s *scanner) message(md protoreflect.MessageDescriptor, depth int) bool {
	if s.null() {
		return true
	}
	switch md.FullName() {
	case "google.protobuf.Struct":
		return s.peek() == '{' && s.any(depth)
	case "google.protobuf.ListValue":
		return s.peek() == '[' && s.any(depth)
	case "google.protobuf.Value":
		return s.any(depth)
	case "google.protobuf.DoubleValue", "google.protobuf.FloatValue", "google.protobuf.Int32Value",
		"google.protobuf.UInt32Value", "google.protobuf.Int64Value", "google.protobuf.UInt64Value":
		return s.numberOf(md.Fields().ByName("value").Kind())
	case "google.protobuf.StringValue", "google.protobuf.BytesValue":
		_, _, ok := s.str()
		return ok
	case "google.protobuf.BoolValue":
		return s.literal("true") || s.literal("false")
	}
	fields := md.Fields()
	return s.members(depth, func(key []byte) bool {
		fd := fields.ByJSONName(string(key))
		if fd == nil {
			fd = fields.ByTextName(string(key))
		}
		if fd == nil {
			return false // fullCheck names the field protojson would refuse
		}
		return s.field(fd, depth+1)
	})
}

// field consumes a field's value (checkField); depth is the value's level.
func (s *scanner) field(fd protoreflect.FieldDescriptor, depth int) bool {
	switch {
	case s.null():
		// A null bool is refused (fullCheck says why); any other null is
		// the field unset.
		return fd.Kind() != protoreflect.BoolKind || fd.IsList()
	case fd.IsMap():
		return s.members(depth, func([]byte) bool { return s.peek() != 'n' && s.value(fd.MapValue(), depth+1) })
	case fd.IsList():
		return s.items(depth, func() bool { return s.peek() != 'n' && s.value(fd, depth+1) })
	}
	return s.value(fd, depth)
}

// value consumes one non-null value of the field's kind (checkValue).
func (s *scanner) value(fd protoreflect.FieldDescriptor, depth int) bool {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return s.message(fd.Message(), depth)
	case protoreflect.BoolKind:
		return s.literal("true") || s.literal("false")
	case protoreflect.StringKind, protoreflect.BytesKind:
		_, _, ok := s.str()
		return ok
	case protoreflect.EnumKind:
		if fd.Enum().FullName() == "google.protobuf.NullValue" {
			return s.any(depth)
		}
		w, escaped, ok := s.str()
		return ok && !escaped && wire.IsWord(fd.Enum(), string(w))
	default:
		return s.numberOf(fd.Kind())
	}
}

// numberOf consumes a number that fits kind (checkNumber).
func (s *scanner) numberOf(kind protoreflect.Kind) bool {
	text, ok := s.number()
	if !ok {
		return false
	}
	var err error
	switch kind {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		_, err = strconv.ParseInt(string(text), 10, 32)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		_, err = strconv.ParseInt(string(text), 10, 64)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		_, err = strconv.ParseUint(string(text), 10, 32)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		_, err = strconv.ParseUint(string(text), 10, 64)
	}
	return err == nil
}

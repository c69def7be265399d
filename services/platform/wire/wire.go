// Package wire is how Foundry's APIs write the values their protos carry,
// the same in every service: a time is RFC 3339 with nanoseconds, in UTC
// (trailing zeros of the fraction dropped, as time.RFC3339Nano prints it),
// which is also what the gateway's JSON shows; a word of a shared
// vocabulary (a stage, a task status, an economy mode) is a proto enum
// whose value names are the domain's words.
package wire

import (
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Amount writes a sum of amounts to six decimals, the precision Foundry
// takes amounts at: a float sum carries its addition's noise
// (0.1 + 0.2 = 0.30000000000000004), which a client would read as a
// value nobody sent. Magnitudes past 10^15, where six decimals are past
// a double's precision anyway, are written as they are.
func Amount(x float64) float64 {
	if math.Abs(x) >= 1e15 || math.IsNaN(x) {
		return x
	}
	return math.Round(x*1e6) / 1e6
}

// OptString writes an optional text: s, or null when s is "" (a
// StringValue, because the JSON of an unset proto3 optional field is
// absent, and the API's documents say null).
func OptString(s string) *wrapperspb.StringValue {
	if s == "" {
		return nil
	}
	return wrapperspb.String(s)
}

// Time writes t in UTC as RFC 3339 with nanoseconds.
func Time(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// Enum is the value of a vocabulary enum (its generated _value map is
// names) that a domain word names: the enum's zero, "not given", for a
// word it does not have. A response always carries a word its service
// knows, and each service's handler tests pin the domain's words to the
// enum's, so the zero never reaches a client.
func Enum[E ~int32, W ~string](names map[string]int32, word W) E {
	return E(names[string(word)])
}

// Word is the domain word an enum value of a request stands for: "" for
// the zero (the field was not given) and the number, as text, for a value
// the enum does not name (a gRPC caller's newer proto), so the use case's
// validation refuses it with the words it accepts.
func Word[E ~int32](names map[int32]string, e E) string {
	if e == 0 {
		return ""
	}
	if w, ok := names[int32(e)]; ok {
		return w
	}
	return strconv.Itoa(int(e))
}

// OptionalWord is Word for an optional field: nil when the field is absent.
func OptionalWord[E ~int32](names map[int32]string, e *E) *string {
	if e == nil {
		return nil
	}
	w := Word(names, *e)
	return &w
}

// ParseTime reads a time a client wrote as RFC 3339, with or without a
// fraction of a second and in any offset (time.RFC3339Nano parses both),
// the reverse of Time.
func ParseTime(s string) (time.Time, error) { return time.Parse(time.RFC3339Nano, s) }

// Words are the words of a vocabulary enum a client may send, in the
// enum's order: every value's name but the zero's, which stands for "not
// given". The gateway's decoder and the CLI's flags refuse anything else
// with them.
func Words(d protoreflect.EnumDescriptor) []string {
	var out []string
	for i := range d.Values().Len() {
		if v := d.Values().Get(i); v.Number() != 0 {
			out = append(out, string(v.Name()))
		}
	}
	return out
}

// IsWord reports whether w is one of d's Words: a value's name, not the
// zero's. protojson alone would also take the zero's name and a number,
// neither of which the API documents.
func IsWord(d protoreflect.EnumDescriptor, w string) bool {
	v := d.Values().ByName(protoreflect.Name(w))
	return v != nil && v.Number() != 0
}

// Package graph holds the rules of the graph layer: what a valid node, edge,
// traversal direction and page are. It knows nothing of SQL or protobuf.
package graph

import (
	"encoding/json"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// Limits of the graph layer.
const (
	// MaxTypeLen bounds node_type and edge_type, in characters.
	MaxTypeLen = 64
	// MaxExternalIDLen bounds external_id, in characters.
	MaxExternalIDLen = 256
	// DefaultLimit is the page size when none is asked for.
	DefaultLimit = 50
	// MaxLimit is the largest page; a limit outside 1..MaxLimit is refused.
	MaxLimit = 500
	// DefaultWeight is an edge's weight when none is given.
	DefaultWeight = 1.0
)

// Direction selects the edges touching a node.
type Direction string

// The directions.
const (
	Outgoing Direction = "outgoing" // edges whose from_node_id is the node
	Incoming Direction = "incoming" // edges whose to_node_id is the node
	Both     Direction = "both"     // either
)

// ParseDirection reads a direction; empty means Both, and "out" and "in"
// are accepted as short forms.
func ParseDirection(s string) (Direction, error) {
	switch s {
	case "", "both":
		return Both, nil
	case "outgoing", "out":
		return Outgoing, nil
	case "incoming", "in":
		return Incoming, nil
	}
	return "", fault.Validation(fault.Field("direction", "must be outgoing, incoming or both"))
}

// CheckType validates a node_type or edge_type (field names it): required,
// at most MaxTypeLen characters, not blank.
func CheckType(field, v string) []fault.FieldError {
	switch {
	case strings.TrimSpace(v) == "":
		return []fault.FieldError{fault.Field(field, "required")}
	case !utf8.ValidString(v):
		return []fault.FieldError{fault.Field(field, "must be valid UTF-8")}
	case utf8.RuneCountInString(v) > MaxTypeLen:
		return []fault.FieldError{fault.Field(field, "at most %d characters", MaxTypeLen)}
	}
	return nil
}

// CheckExternalID validates an external_id that was given: not empty (an
// empty id would silently make upserts non-idempotent), at most
// MaxExternalIDLen characters.
func CheckExternalID(v string) []fault.FieldError {
	switch {
	case v == "":
		return []fault.FieldError{fault.Field("external_id", "must not be empty when given; omit it for a node without one")}
	case !utf8.ValidString(v):
		return []fault.FieldError{fault.Field("external_id", "must be valid UTF-8")}
	case utf8.RuneCountInString(v) > MaxExternalIDLen:
		return []fault.FieldError{fault.Field("external_id", "at most %d characters", MaxExternalIDLen)}
	}
	return nil
}

// ParseID reads a node or edge id (field names it) and returns its canonical
// lowercase form, so "ABC..." and "abc..." name the same node.
func ParseID(field, v string) (string, []fault.FieldError) {
	if v == "" {
		return "", []fault.FieldError{fault.Field(field, "required")}
	}
	id, err := uuid.Parse(v)
	if err != nil || len(v) != 36 {
		return "", []fault.FieldError{fault.Field(field, "must be a UUID")}
	}
	return id.String(), nil
}

// ParseOptionalID is ParseID for a filter: empty means no filter.
func ParseOptionalID(field, v string) (string, []fault.FieldError) {
	if v == "" {
		return "", nil
	}
	return ParseID(field, v)
}

// Weight returns an edge's weight: DefaultWeight when absent, otherwise a
// finite number.
func Weight(w *float64) (float64, []fault.FieldError) {
	if w == nil {
		return DefaultWeight, nil
	}
	if math.IsNaN(*w) || math.IsInf(*w, 0) {
		return 0, []fault.FieldError{fault.Field("weight", "must be a finite number")}
	}
	return *w, nil
}

// Payload encodes a node or edge payload as compact JSON (keys sorted, so
// the same content is stored the same way on every engine). A nil payload is
// "absent": required for nodes, {} for edges.
func Payload(field string, p map[string]any, required bool) (string, []fault.FieldError) {
	if p == nil {
		if required {
			return "", []fault.FieldError{fault.Field(field, "required: a JSON object")}
		}
		return "{}", nil
	}
	b, err := json.Marshal(p)
	if err != nil {
		return "", []fault.FieldError{fault.Field(field, "must be a JSON object")}
	}
	return string(b), nil
}

// Page validates pagination (fault.PageFields): limit DefaultLimit when
// absent, else 1..MaxLimit; offset at least 0.
func Page(limit *int32, offset int32) (int, int, []fault.FieldError) {
	return fault.PageFields(limit, offset, DefaultLimit, MaxLimit)
}

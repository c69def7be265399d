// Package cursor writes and reads the keyset cursors of Foundry's growing
// lists (the audit log, tasks, contributions, incidents): a page read
// "after this cursor" starts right after the last item of the page that
// gave it, by the list's sort key, so items added at the head of the list
// meanwhile do not shift it (an offset would). A cursor is opaque to
// clients: the base64url of the list's name and the sort key of the last
// item, so one list's cursor is refused by another and a hand-made one
// that does not parse is a 422, never a query.
package cursor

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// sep joins a cursor's parts; no list name or key holds it.
const sep = "\x1f"

// Encode is the cursor of list after the item whose sort key is key.
func Encode(list string, key ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(list + sep + strings.Join(key, sep)))
}

// Decode reads a cursor of list with n key parts; a cursor it did not
// write for this list is a validation failure on the cursor field.
func Decode(list, s string, n int) ([]string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	parts := strings.Split(string(raw), sep)
	if err != nil || len(parts) != n+1 || parts[0] != list {
		return nil, fault.Validation(refused)
	}
	return parts[1:], nil
}

// refused is the cursor field's refusal of a cursor its list did not give.
var refused = fault.Field("cursor", "is not a cursor of this list: pass the next_cursor a page of it gave")

// withOffset is the offset field's refusal beside a cursor.
var withOffset = fault.Field("offset", "must be 0 with a cursor, which says where the page starts")

// MaxOffset is the deepest offset a growing list pages to. A database
// reads and drops every row before an offset, so a page at offset 100 000
// of contributions took 3 s at a million rows, where a page by cursor
// reads its own rows from an index whatever its depth. Past it, the lists
// that have cursors say to page by them (docs/api.md, Lists).
const MaxOffset = 10_000

// deepOffset is the offset field's refusal past MaxOffset.
var deepOffset = fault.Field("offset", "must be at most %d: read further pages by cursor (each page's pagination.next_cursor)", MaxOffset)

// EncodeAt is the cursor of list after the item created at at with id:
// the key of the lists ordered by creation time, then id (tasks,
// contributions, incidents).
func EncodeAt(list string, at time.Time, id string) string {
	return Encode(list, strconv.FormatInt(at.UnixMicro(), 10), id)
}

// DecodeAt reads a page's cursor c of list (EncodeAt's) beside its offset:
// ok is false when there is none; a cursor list did not give, a cursor
// with an offset (a cursor says where the page starts), or an offset past
// MaxOffset comes back as the field's refusal, to join the command's one
// validation.
func DecodeAt(list, c string, offset int) (at time.Time, id string, ok bool, errs []fault.FieldError) {
	if c == "" {
		return time.Time{}, "", false, checkDepth(offset)
	}
	key, err := Decode(list, c, 2)
	var us int64
	if err == nil {
		us, err = strconv.ParseInt(key[0], 10, 64)
	}
	switch {
	case err != nil || key[1] == "":
		return time.Time{}, "", false, []fault.FieldError{refused}
	case offset != 0:
		return time.Time{}, "", false, []fault.FieldError{withOffset}
	}
	return time.UnixMicro(us).UTC(), key[1], true, nil
}

// EncodeSeq is the cursor of list after the item with sequence number seq
// (the audit log).
func EncodeSeq(list string, seq int64) string { return Encode(list, strconv.FormatInt(seq, 10)) }

// DecodeSeq reads a page's cursor c of list (EncodeSeq's) beside its
// offset, as DecodeAt does: 0 when there is none; a sequence number is 1
// or more.
func DecodeSeq(list, c string, offset int) (int64, []fault.FieldError) {
	if c == "" {
		return 0, checkDepth(offset)
	}
	key, err := Decode(list, c, 1)
	var seq int64
	if err == nil {
		seq, err = strconv.ParseInt(key[0], 10, 64)
	}
	switch {
	case err != nil || seq < 1:
		return 0, []fault.FieldError{refused}
	case offset != 0:
		return 0, []fault.FieldError{withOffset}
	}
	return seq, nil
}

// checkDepth refuses an offset past MaxOffset.
func checkDepth(offset int) []fault.FieldError {
	if offset > MaxOffset {
		return []fault.FieldError{deepOffset}
	}
	return nil
}

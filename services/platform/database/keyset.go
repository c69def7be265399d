package database

import "fmt"

// Keyset is the condition of a keyset page over a list ordered by
// (created_at, id): the rows whose created_at is timeOp the key's ($t) or
// equal to it with an id idOp the key's ($id). timeOp is "<" or ">"; idOp
// the same, or with "=" to take the key's own row too (counting what
// precedes a page). It is spelled out rather than as a row value,
// (created_at, id) < ($t, $id), so both engines plan it as a range of the
// lists' (…, created_at, id) indexes.
func Keyset(timeOp, idOp string, t, id int) string {
	return fmt.Sprintf("(created_at %s $%d OR (created_at = $%d AND id %s $%d))", timeOp, t, t, idOp, id)
}

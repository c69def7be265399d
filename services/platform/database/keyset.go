package database

import "fmt"

// Keyset is the condition of a keyset page over a list ordered by
// (created_at, id): the rows whose created_at is timeOp the key's ($t) or
// equal to it with an id idOp the key's ($id). timeOp is "<" or ">"; idOp
// the same, or with "=" to take the key's own row too. The leading
// created_at <= $t (or >=) is what bounds the read: both engines take it
// as a range of the lists' (…, created_at, id) indexes, where the
// disjunction alone left Postgres walking the index from the list's head
// and filtering every row before the key (a page 190 000 deep took 30 ms
// against 1 ms at the head; BenchmarkListWithoutCounting). A row value,
// (created_at, id) < ($t, $id), is not planned as a range by SQLite.
func Keyset(timeOp, idOp string, t, id int) string {
	return fmt.Sprintf("(created_at %s= $%d AND (created_at %s $%d OR id %s $%d))", timeOp, t, timeOp, t, idOp, id)
}

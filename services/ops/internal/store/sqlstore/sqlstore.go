// Package sqlstore implements the ops repositories on Postgres and SQLite
// with one set of SQL statements (see the platform database package).
// Every repository works over a database.Querier, the pool or the use
// case's transaction, and none opens a transaction of its own.
package sqlstore

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

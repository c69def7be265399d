package database

import "strings"

// ForUpdate is the clause a locking read ends with on the engine: " FOR
// UPDATE" on Postgres (" FOR UPDATE OF t, ..." when tables are named, so a
// join locks only those tables' rows), and nothing on SQLite, whose writing
// transactions hold the database's one write lock from their first
// statement (_txlock=immediate), which already keeps every other writer
// out until they end.
func ForUpdate(e Engine, tables ...string) string {
	if e != Postgres {
		return ""
	}
	if len(tables) == 0 {
		return " FOR UPDATE"
	}
	return " FOR UPDATE OF " + strings.Join(tables, ", ")
}

// SkipLocked is the clause of a read that takes work rows for itself: on
// Postgres " FOR UPDATE SKIP LOCKED", so concurrent takers each get other
// rows instead of waiting for each other's; nothing on SQLite, where one
// writing transaction runs at a time and no row is ever locked by another.
func SkipLocked(e Engine) string {
	if e != Postgres {
		return ""
	}
	return " FOR UPDATE SKIP LOCKED"
}

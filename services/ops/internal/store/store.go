// Package store holds the ops service's storage: its embedded schema
// migrations, one directory per engine.
package store

import (
	"embed"
	"io/fs"
)

//go:embed migrations
var migrations embed.FS

// Migrations are the ops schema's migrations, one directory per engine.
func Migrations() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

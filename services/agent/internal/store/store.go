// Package store holds the agent service's storage: its embedded schema
// migrations.
package store

import (
	"embed"
	"io/fs"

	"github.com/foundryhq/foundry/services/platform/migrate"
)

//go:embed migrations
var migrations embed.FS

// Migrations are the agent schema's migrations (see the platform migrate package).
func Migrations() fs.FS { return migrate.Embedded(migrations) }

// Package store defines what the ledger service keeps and the errors its
// storage reports. sqlstore implements it on Postgres and SQLite; storetest
// is the conformance suite both engines must pass.
package store

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"time"
)

// Errors every implementation returns (wrapped or not).
var (
	ErrNotFound      = errors.New("not found")
	ErrAlreadyExists = errors.New("already exists")
)

//go:embed migrations
var migrations embed.FS

// Migrations are the ledger schema's migrations, one directory per engine.
func Migrations() fs.FS {
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}

// Contributor is a person or bot who contributes and holds CC.
type Contributor struct {
	ID string
	// Handle is empty for contributors created implicitly (by a contribution).
	Handle     string
	TrustLevel string
	CreatedAt  time.Time
}

// Session is a contributor's session; only the token's hash is kept.
type Session struct {
	TokenHash   string
	Contributor Contributor
	CreatedAt   time.Time
	// ExpiresAt is zero for a session that does not expire.
	ExpiresAt time.Time
}

// Store is the ledger's storage.
type Store interface {
	// Register creates a contributor with a handle and its first session in
	// one transaction. ErrAlreadyExists when the handle is taken.
	Register(ctx context.Context, c Contributor, s Session) error
	// SessionByTokenHash finds a session and its contributor. ErrNotFound
	// when no session has that hash.
	SessionByTokenHash(ctx context.Context, tokenHash string) (Session, error)
	// Counts returns row counts by table, for storage reports.
	Counts(ctx context.Context) (map[string]int, error)
}

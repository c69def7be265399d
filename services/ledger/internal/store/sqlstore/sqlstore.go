// Package sqlstore implements the ledger store on Postgres and SQLite with
// one set of SQL statements (see the platform database package).
package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Store is the SQL ledger store.
type Store struct {
	db *database.DB
}

var _ store.Store = (*Store)(nil)

// New returns a store over an open, migrated database.
func New(db *database.DB) *Store { return &Store{db: db} }

// Register implements store.Store.
func (s *Store) Register(ctx context.Context, c store.Contributor, sess store.Session) error {
	err := s.db.Tx(ctx, func(tx database.Querier) error {
		if _, err := tx.Exec(ctx,
			`INSERT INTO contributors (id, handle, trust_level, created_at) VALUES ($1, $2, $3, $4)`,
			c.ID, database.NullString(c.Handle), c.TrustLevel, database.Micros(c.CreatedAt)); err != nil {
			return err
		}
		_, err := tx.Exec(ctx,
			`INSERT INTO sessions (token_hash, contributor_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
			sess.TokenHash, c.ID, database.Micros(sess.CreatedAt), database.NullMicros(sess.ExpiresAt))
		return err
	})
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("register %q: %w", c.Handle, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("register %q: %w", c.Handle, err)
	}
	return nil
}

// SessionByTokenHash implements store.Store.
func (s *Store) SessionByTokenHash(ctx context.Context, tokenHash string) (store.Session, error) {
	var (
		sess      store.Session
		handle    *string
		created   int64
		cCreated  int64
		expiresAt *int64
	)
	err := s.db.QueryRow(ctx, `
		SELECT s.token_hash, s.created_at, s.expires_at, c.id, c.handle, c.trust_level, c.created_at
		FROM sessions s JOIN contributors c ON c.id = s.contributor_id
		WHERE s.token_hash = $1`, tokenHash).
		Scan(&sess.TokenHash, &created, &expiresAt, &sess.Contributor.ID, &handle, &sess.Contributor.TrustLevel, &cCreated)
	if errors.Is(err, database.ErrNoRows) {
		return store.Session{}, store.ErrNotFound
	}
	if err != nil {
		return store.Session{}, fmt.Errorf("find session: %w", err)
	}
	sess.CreatedAt = database.Time(created)
	sess.Contributor.CreatedAt = database.Time(cCreated)
	if handle != nil {
		sess.Contributor.Handle = *handle
	}
	if expiresAt != nil {
		sess.ExpiresAt = database.Time(*expiresAt)
	}
	return sess, nil
}

// GetContributor implements store.Store.
func (s *Store) GetContributor(ctx context.Context, id string) (store.Contributor, error) {
	var (
		c       store.Contributor
		handle  *string
		created int64
	)
	err := s.db.QueryRow(ctx, `SELECT id, handle, trust_level, created_at FROM contributors WHERE id = $1`, id).
		Scan(&c.ID, &handle, &c.TrustLevel, &created)
	if errors.Is(err, database.ErrNoRows) {
		return store.Contributor{}, store.ErrNotFound
	}
	if err != nil {
		return store.Contributor{}, fmt.Errorf("get contributor %s: %w", id, err)
	}
	if handle != nil {
		c.Handle = *handle
	}
	c.CreatedAt = database.Time(created)
	return c, nil
}

// countedTables are the tables storage reports count.
var countedTables = []string{"contributors", "sessions", "assets", "contributions", "github_deliveries", "distributions", "payouts"}

// Counts implements store.Store.
func (s *Store) Counts(ctx context.Context) (map[string]int, error) {
	out := make(map[string]int, len(countedTables))
	for _, t := range countedTables {
		var n int
		if err := s.db.QueryRow(ctx, `SELECT COUNT(*) FROM `+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

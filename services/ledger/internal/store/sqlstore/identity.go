package sqlstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Identity implements store.Identity over a querier, so a use case reads
// and writes contributors inside its own transaction (on SQLite, a second
// connection from inside a write transaction could wait on the pool
// forever).
type Identity struct {
	q database.Querier
}

var _ store.Identity = Identity{}

// NewIdentity returns the identity repository over q.
func NewIdentity(q database.Querier) Identity { return Identity{q: q} }

// Register implements store.Identity.
func (i Identity) Register(ctx context.Context, c store.Contributor, sess store.Session) error {
	_, err := i.q.Exec(ctx,
		`INSERT INTO contributors (id, handle, trust_level, created_at) VALUES ($1, $2, $3, $4)`,
		c.ID, database.NullString(c.Handle), c.TrustLevel, database.Micros(c.CreatedAt))
	if err == nil {
		_, err = i.q.Exec(ctx,
			`INSERT INTO sessions (token_hash, contributor_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
			sess.TokenHash, c.ID, database.Micros(sess.CreatedAt), database.NullMicros(sess.ExpiresAt))
	}
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("register %q: %w", c.Handle, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("register %q: %w", c.Handle, err)
	}
	return nil
}

// SessionByTokenHash implements store.Identity.
func (i Identity) SessionByTokenHash(ctx context.Context, tokenHash string) (store.Session, error) {
	var (
		sess      store.Session
		handle    *string
		created   int64
		cCreated  int64
		expiresAt *int64
	)
	err := i.q.QueryRow(ctx, `
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

// GetContributor implements store.Identity.
func (i Identity) GetContributor(ctx context.Context, id string) (store.Contributor, error) {
	var (
		c       store.Contributor
		handle  *string
		created int64
	)
	err := i.q.QueryRow(ctx, `SELECT id, handle, trust_level, created_at FROM contributors WHERE id = $1`, id).
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

// EnsureContributor implements store.Identity.
func (i Identity) EnsureContributor(ctx context.Context, c store.Contributor) error {
	return ensureContributor(ctx, i.q, c)
}

// ensureContributor creates a contributor without a handle unless one with
// its id exists.
func ensureContributor(ctx context.Context, q database.Querier, c store.Contributor) error {
	_, err := q.Exec(ctx, `INSERT INTO contributors (id, handle, trust_level, created_at) VALUES ($1, NULL, $2, $3)
		ON CONFLICT (id) DO NOTHING`, c.ID, c.TrustLevel, database.Micros(c.CreatedAt))
	if err != nil {
		return fmt.Errorf("ensure contributor %s: %w", c.ID, err)
	}
	return nil
}

// Counts implements store.Identity.
func (i Identity) Counts(ctx context.Context) (map[string]int, error) {
	return count(ctx, i.q, "contributors", "sessions")
}

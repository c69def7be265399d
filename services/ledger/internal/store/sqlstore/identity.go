package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
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

// sessionColumns are what scanSession reads: a session joined with its
// contributor.
const sessionColumns = `s.token_hash, s.created_at, s.expires_at, c.id, c.handle, c.trust_level, c.created_at
	FROM sessions s JOIN contributors c ON c.id = s.contributor_id`

func scanSession(row database.Row) (store.Session, error) {
	var (
		sess      store.Session
		handle    *string
		created   int64
		cCreated  int64
		expiresAt *int64
	)
	if err := row.Scan(&sess.TokenHash, &created, &expiresAt, &sess.Contributor.ID, &handle, &sess.Contributor.TrustLevel, &cCreated); err != nil {
		return store.Session{}, err
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

// QueueCredentials implements store.Identity: two statements, each one
// index look-up per hash.
func (i Identity) QueueCredentials(b *database.Batch, hashes []string, sessions map[string]store.Session, tokens map[string]store.APIToken) {
	if len(hashes) == 0 {
		return
	}
	args := make([]any, len(hashes))
	for k, h := range hashes {
		args[k] = h
	}
	in := `(` + database.Placeholders(1, len(hashes)) + `)`
	b.Query(func(rows database.Rows) error {
		for rows.Next() {
			sess, err := scanSession(rows)
			if err != nil {
				return err
			}
			sessions[sess.TokenHash] = sess
		}
		return rows.Err()
	}, `SELECT `+sessionColumns+` WHERE s.token_hash IN `+in, args...)
	b.Query(func(rows database.Rows) error {
		for rows.Next() {
			t, err := scanToken(rows)
			if err != nil {
				return err
			}
			tokens[t.TokenHash] = t
		}
		return rows.Err()
	}, `SELECT `+tokenColumns+` FROM api_tokens WHERE token_hash IN `+in, args...)
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

// Registered implements store.Identity, in statements of at most inChunk
// ids (SQLite's parameters are bounded).
func (i Identity) Registered(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	err := queryIn(ctx, i.q, "find registered contributors", ids,
		func(in string) string {
			return `SELECT id FROM contributors WHERE handle IS NOT NULL AND id IN (` + in + `)`
		},
		func(rows database.Rows) error {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			out[id] = true
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EnsureContributor implements store.Identity.
func (i Identity) EnsureContributor(ctx context.Context, c store.Contributor) error {
	return ensureContributor(ctx, i.q, c)
}

// ensureContributorSQL creates a contributor without a handle unless one
// with its id exists.
const ensureContributorSQL = `INSERT INTO contributors (id, handle, trust_level, created_at) VALUES ($1, NULL, $2, $3)
	ON CONFLICT (id) DO NOTHING`

// ensureContributor runs ensureContributorSQL for c.
func ensureContributor(ctx context.Context, q database.Querier, c store.Contributor) error {
	if _, err := q.Exec(ctx, ensureContributorSQL, c.ID, c.TrustLevel, database.Micros(c.CreatedAt)); err != nil {
		return fmt.Errorf("ensure contributor %s: %w", c.ID, err)
	}
	return nil
}

// queueEnsureContributor queues ensureContributorSQL for c in b.
func queueEnsureContributor(b *database.Batch, c store.Contributor) {
	b.Exec(nil, ensureContributorSQL, c.ID, c.TrustLevel, database.Micros(c.CreatedAt))
}

// Counts implements store.Identity.
func (i Identity) Counts(ctx context.Context) (map[string]int, error) {
	return count(ctx, i.q, "contributors", "sessions", "api_tokens")
}

// ExtendSession implements store.Identity.
func (i Identity) ExtendSession(ctx context.Context, tokenHash string, expiresAt time.Time) error {
	n, err := i.q.Exec(ctx, `UPDATE sessions SET expires_at = $1 WHERE token_hash = $2`, database.NullMicros(expiresAt), tokenHash)
	if err != nil {
		return fmt.Errorf("extend session: %w", err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// DeleteSession implements store.Identity.
func (i Identity) DeleteSession(ctx context.Context, tokenHash string) error {
	n, err := i.q.Exec(ctx, `DELETE FROM sessions WHERE token_hash = $1`, tokenHash)
	if err != nil {
		return fmt.Errorf("delete session: %w", err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// CreateToken implements store.Identity.
func (i Identity) CreateToken(ctx context.Context, t store.APIToken) error {
	_, err := i.q.Exec(ctx, `INSERT INTO api_tokens (id, token_hash, name, role, created_at, expires_at, revoked_at, created_by)
		VALUES ($1, $2, $3, $4, $5, $6, NULL, $7)`,
		t.ID, t.TokenHash, t.Name, t.Role, database.Micros(t.CreatedAt), database.NullMicros(t.ExpiresAt), database.NullString(t.CreatedBy))
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("create token %s: %w", t.ID, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("create token %s: %w", t.ID, err)
	}
	return nil
}

const tokenColumns = `id, token_hash, name, role, created_at, expires_at, revoked_at`

// scanToken reads a row of tokenColumns, followed by extra columns into
// extra.
func scanToken(row database.Row, extra ...any) (store.APIToken, error) {
	var (
		t                  store.APIToken
		created            int64
		expires, revokedAt *int64
	)
	if err := row.Scan(append([]any{&t.ID, &t.TokenHash, &t.Name, &t.Role, &created, &expires, &revokedAt}, extra...)...); err != nil {
		return store.APIToken{}, err
	}
	t.CreatedAt = database.Time(created)
	if expires != nil {
		t.ExpiresAt = database.Time(*expires)
	}
	if revokedAt != nil {
		t.RevokedAt = database.Time(*revokedAt)
	}
	return t, nil
}

// listedTokenColumns are tokenColumns of api_tokens t with its creator's
// id and revocation (api_tokens c, LEFT JOINed on t.created_by).
const listedTokenColumns = `t.id, t.token_hash, t.name, t.role, t.created_at, t.expires_at, t.revoked_at, t.created_by, c.revoked_at`

// scanListedToken reads a row of listedTokenColumns: scanToken's, then the
// creator's id and revocation.
func scanListedToken(row database.Row) (store.APIToken, error) {
	var (
		createdBy        *string
		creatorRevokedAt *int64
	)
	t, err := scanToken(row, &createdBy, &creatorRevokedAt)
	if err != nil {
		return store.APIToken{}, err
	}
	if createdBy != nil {
		t.CreatedBy = *createdBy
	}
	if creatorRevokedAt != nil {
		t.CreatorRevokedAt = database.Time(*creatorRevokedAt)
	}
	return t, nil
}

// GetToken implements store.Identity.
func (i Identity) GetToken(ctx context.Context, id string) (store.APIToken, error) {
	t, err := scanListedToken(i.q.QueryRow(ctx, `SELECT `+listedTokenColumns+`
		FROM api_tokens t LEFT JOIN api_tokens c ON c.id = t.created_by WHERE t.id = $1`, id))
	if errors.Is(err, database.ErrNoRows) {
		return store.APIToken{}, store.ErrNotFound
	}
	if err != nil {
		return store.APIToken{}, fmt.Errorf("get token %s: %w", id, err)
	}
	return t, nil
}

// ListTokens implements store.Identity.
func (i Identity) ListTokens(ctx context.Context) ([]store.APIToken, error) {
	rows, err := i.q.Query(ctx, `SELECT `+listedTokenColumns+`
		FROM api_tokens t LEFT JOIN api_tokens c ON c.id = t.created_by ORDER BY t.created_at DESC, t.id`)
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	defer rows.Close()
	out := []store.APIToken{}
	for rows.Next() {
		t, err := scanListedToken(rows)
		if err != nil {
			return nil, fmt.Errorf("list tokens: %w", err)
		}
		out = append(out, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken implements store.Identity.
func (i Identity) RevokeToken(ctx context.Context, id string, at time.Time) (store.APIToken, error) {
	t, err := scanToken(i.q.QueryRow(ctx, `UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE id = $2
		RETURNING `+tokenColumns, database.Micros(at), id))
	if errors.Is(err, database.ErrNoRows) {
		return store.APIToken{}, store.ErrNotFound
	}
	if err != nil {
		return store.APIToken{}, fmt.Errorf("revoke token %s: %w", id, err)
	}
	return t, nil
}

// ListContributors implements store.Identity: a handle is unique
// (contributors.handle), the whole list reads in (created_at, id) order,
// its total from row_counts.
// The page is cut first and its balances summed after (cc_accounts' and
// cc_cooling's contributor indexes), so the cost follows the page, not the
// ledger.
func (i Identity) ListContributors(ctx context.Context, f store.ContributorFilter) ([]store.ContributorAccount, int, error) {
	filter, args := "", []any{}
	if f.Handle != "" {
		filter, args = " WHERE handle = $1", append(args, f.Handle)
	}
	// The whole list's total is kept by a trigger (migration 0027); a
	// handle names at most one contributor.
	count := keptCount("contributors")
	if f.Handle != "" {
		count = `SELECT COUNT(*) FROM contributors` + filter
	}
	var total int
	if err := i.q.QueryRow(ctx, count, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count contributors: %w", err)
	}
	args = append(args, f.Limit, f.Offset, credit.BucketAvailable, credit.BucketStaked, credit.BucketCooling, database.Micros(f.DueBy))
	n := len(args)
	rows, err := i.q.Query(ctx, fmt.Sprintf(`SELECT p.id, p.handle, p.trust_level, p.created_at,
			CAST(COALESCE(SUM(CASE WHEN a.bucket = $%[3]d THEN a.balance END), 0) AS BIGINT),
			CAST(COALESCE(SUM(CASE WHEN a.bucket = $%[4]d THEN a.balance END), 0) AS BIGINT),
			CAST(COALESCE(SUM(CASE WHEN a.bucket = $%[5]d THEN a.balance END), 0) AS BIGINT),
			(SELECT CAST(COALESCE(SUM(k.amount), 0) AS BIGINT) FROM cc_cooling k
				WHERE k.contributor_id = p.id AND k.released_entry_id IS NULL AND k.available_at <= $%[6]d)
		FROM (SELECT id, handle, trust_level, created_at FROM contributors`+filter+` ORDER BY created_at, id LIMIT $%[1]d OFFSET $%[2]d) p
		LEFT JOIN cc_accounts a ON a.contributor_id = p.id
		GROUP BY p.id, p.handle, p.trust_level, p.created_at
		ORDER BY p.created_at, p.id`, n-5, n-4, n-3, n-2, n-1, n), args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list contributors: %w", err)
	}
	defer rows.Close()
	out := []store.ContributorAccount{}
	for rows.Next() {
		var (
			c                          store.ContributorAccount
			handle                     *string
			created                    int64
			available, staked, cooling int64
			due                        int64
		)
		if err := rows.Scan(&c.ID, &handle, &c.TrustLevel, &created, &available, &staked, &cooling, &due); err != nil {
			return nil, 0, fmt.Errorf("list contributors: %w", err)
		}
		if handle != nil {
			c.Handle = *handle
		}
		c.CreatedAt = database.Time(created)
		c.Balances = store.Balances{Available: money.Micros(available), Staked: money.Micros(staked), Cooling: money.Micros(cooling)}
		c.DueCooling = money.Micros(due)
		out = append(out, c)
	}
	return out, total, rows.Err()
}

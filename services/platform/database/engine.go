package database

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pgRunner is what a pgx pool and a pgx transaction share.
type pgRunner interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func pgExec(ctx context.Context, r pgRunner, query string, args []any) (int64, error) {
	tag, err := r.Exec(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

func pgQuery(ctx context.Context, r pgRunner, query string, args []any) (Rows, error) {
	rows, err := r.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return rows, nil
}

type pgRow struct{ row pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNoRows
	}
	return err
}

type pgTx struct{ tx pgx.Tx }

func (t pgTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return pgExec(ctx, t.tx, query, args)
}

func (t pgTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	return pgQuery(ctx, t.tx, query, args)
}

func (t pgTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	return pgRow{t.tx.QueryRow(ctx, query, args...)}
}

func (t pgTx) SendBatch(ctx context.Context, b *Batch) error { return pgSendBatch(ctx, t.tx, b) }

func (pgTx) Engine() Engine { return Postgres }

// sqlRunner is what a *sql.DB and a *sql.Tx share.
type sqlRunner interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func sqlExec(ctx context.Context, r sqlRunner, query string, args []any) (int64, error) {
	res, err := r.ExecContext(ctx, rebind(query), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func sqlQuery(ctx context.Context, r sqlRunner, query string, args []any) (Rows, error) {
	rows, err := r.QueryContext(ctx, rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

type sqlRows struct{ *sql.Rows }

// Close drops the error: Err reports anything that went wrong while reading.
func (r sqlRows) Close() { _ = r.Rows.Close() }

type sqlRow struct{ row *sql.Row }

func (r sqlRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNoRows
	}
	return err
}

type sqlTx struct{ tx *sql.Tx }

func (t sqlTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	return sqlExec(ctx, t.tx, query, args)
}

func (t sqlTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	return sqlQuery(ctx, t.tx, query, args)
}

func (t sqlTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	return sqlRow{t.tx.QueryRowContext(ctx, rebind(query), args...)}
}

func (t sqlTx) SendBatch(ctx context.Context, b *Batch) error { return sqlSendBatch(ctx, t.tx, b) }

func (sqlTx) Engine() Engine { return SQLite }

var rebound sync.Map // query -> rewritten query

// rebind rewrites Postgres placeholders ($1) to SQLite numbered parameters
// (?1), leaving quoted strings and identifiers alone.
func rebind(query string) string {
	if !strings.Contains(query, "$") {
		return query
	}
	if q, ok := rebound.Load(query); ok {
		return q.(string)
	}
	var b strings.Builder
	b.Grow(len(query))
	var quote byte
	for i := 0; i < len(query); i++ {
		c := query[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '$' && i+1 < len(query) && query[i+1] >= '0' && query[i+1] <= '9':
			c = '?'
		}
		b.WriteByte(c)
	}
	out := b.String()
	rebound.Store(query, out)
	return out
}

package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
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

// pgTx is a transaction on one pooled connection whose BEGIN travels with
// its first statement: BEGIN and that statement (or batch) go as one
// pipelined batch, so a transaction of n round trips of statements costs
// n+1 round trips (its COMMIT), not n+2; one that ran nothing costs none.
// pgx's own Tx sends BEGIN on its own first.
//
// Pipelining BEGIN is safe because Postgres runs a pipeline's statements in
// order up to its Sync: a failed statement leaves the transaction BEGIN
// opened in its failed state, which Rollback ends; a failed BEGIN fails the
// batch. A Query, whose rows are read after it returns, sends BEGIN on its
// own first (its rows cannot wait in a batch).
type pgTx struct {
	conn  *pgxpool.Conn
	begun bool
	// hold: a Final batch does not commit (HoldCommit); ended: a Final
	// batch was sent, and nothing may follow it.
	hold, ended bool
}

// ErrTxEnded is a statement sent in a transaction after its Final batch.
var ErrTxEnded = errors.New("the transaction ended with its final batch: nothing may run in it after that")

// holdCommit is HoldCommit's context key.
type holdCommit struct{}

// HoldCommit returns ctx for a DB.Tx whose Final batches must not commit:
// its caller runs statements of its own after the function it passes.
func HoldCommit(ctx context.Context) context.Context {
	return context.WithValue(ctx, holdCommit{}, true)
}

func holdsCommit(ctx context.Context) bool { return ctx.Value(holdCommit{}) != nil }

// begin sends BEGIN alone, unless it was sent already.
func (t *pgTx) begin(ctx context.Context) error {
	if t.begun {
		return nil
	}
	t.begun = true
	if _, err := t.conn.Exec(ctx, "BEGIN"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	return nil
}

// withBegin prepends BEGIN to b when the transaction has not begun.
func (t *pgTx) withBegin(b *pgx.Batch) *pgx.Batch {
	if t.begun {
		return b
	}
	t.begun = true
	first := &pgx.Batch{}
	first.Queue("BEGIN")
	first.QueuedQueries = append(first.QueuedQueries, b.QueuedQueries...)
	return first
}

func (t *pgTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if t.ended {
		return 0, ErrTxEnded
	}
	if t.begun {
		return pgExec(ctx, t.conn, query, args)
	}
	var n int64
	b := &pgx.Batch{}
	b.Queue(query, args...).Exec(func(tag pgconn.CommandTag) error { n = tag.RowsAffected(); return nil })
	if err := t.conn.SendBatch(ctx, t.withBegin(b)).Close(); err != nil {
		return 0, err
	}
	return n, nil
}

func (t *pgTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if t.ended {
		return nil, ErrTxEnded
	}
	if err := t.begin(ctx); err != nil {
		return nil, err
	}
	return pgQuery(ctx, t.conn, query, args)
}

func (t *pgTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	if t.ended {
		return errRow{ErrTxEnded}
	}
	if t.begun {
		return pgRow{t.conn.QueryRow(ctx, query, args...)}
	}
	return &pgFirstRow{t: t, ctx: ctx, query: query, args: args}
}

func (t *pgTx) SendBatch(ctx context.Context, b *Batch) error {
	if t.ended {
		return ErrTxEnded
	}
	if b.Len() == 0 {
		return nil
	}
	pb := t.withBegin(pgBatch(b))
	if !b.final || t.hold {
		return t.conn.SendBatch(ctx, pb).Close()
	}
	// The COMMIT rides with the batch. Postgres skips it when a statement
	// before it fails (the transaction is then left failed, and rolled
	// back by DB.Tx as usual); it answers ROLLBACK, not an error, when the
	// transaction had failed unseen, which is an error here as in commit.
	pb.Queue("COMMIT").Exec(func(tag pgconn.CommandTag) error {
		if tag.String() == "ROLLBACK" {
			return pgx.ErrTxCommitRollback
		}
		return nil
	})
	t.ended = true
	if err := t.conn.SendBatch(ctx, pb).Close(); err != nil {
		return err
	}
	t.begun = false
	return nil
}

func (*pgTx) Engine() Engine { return Postgres }

// commit ends the transaction. Postgres answers COMMIT of a failed
// transaction with ROLLBACK, not an error: that is an error here, as in
// pgx's Tx, so a statement's failure that fn swallowed cannot pass for a
// commit.
func (t *pgTx) commit(ctx context.Context) error {
	if !t.begun {
		return nil
	}
	tag, err := t.conn.Exec(ctx, "COMMIT")
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if tag.String() == "ROLLBACK" {
		return pgx.ErrTxCommitRollback
	}
	t.begun = false
	return nil
}

// rollback ends a transaction that did not commit; the pool destroys a
// connection it returns still inside a transaction, so a failed ROLLBACK
// (a broken connection) costs that connection and nothing else.
func (t *pgTx) rollback(ctx context.Context) {
	if t.begun {
		_, _ = t.conn.Exec(ctx, "ROLLBACK")
	}
}

// pgFirstRow is a transaction's first QueryRow: it runs, BEGIN first, when
// it is scanned (a Row is always scanned before the next statement).
type pgFirstRow struct {
	t     *pgTx
	ctx   context.Context
	query string
	args  []any
}

func (r *pgFirstRow) Scan(dest ...any) error {
	b := &pgx.Batch{}
	var scanErr error
	b.Queue(r.query, r.args...).QueryRow(func(row pgx.Row) error {
		scanErr = pgRow{row}.Scan(dest...)
		if errors.Is(scanErr, ErrNoRows) {
			return nil // no row is the caller's answer, not a failed batch
		}
		return scanErr
	})
	if err := r.t.conn.SendBatch(r.ctx, r.t.withBegin(b)).Close(); err != nil {
		return err
	}
	return scanErr
}

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

// sqlTx is a SQLite transaction. It commits at its end whatever its
// batches say (Batch.Final), but refuses statements after a Final batch as
// Postgres does (unless held, HoldCommit), so a use case that breaks that
// rule fails on both engines.
type sqlTx struct {
	tx          *sql.Tx
	hold, ended bool
}

func (t *sqlTx) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if t.ended {
		return 0, ErrTxEnded
	}
	return sqlExec(ctx, t.tx, query, args)
}

func (t *sqlTx) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if t.ended {
		return nil, ErrTxEnded
	}
	return sqlQuery(ctx, t.tx, query, args)
}

func (t *sqlTx) QueryRow(ctx context.Context, query string, args ...any) Row {
	if t.ended {
		return errRow{ErrTxEnded}
	}
	return sqlRow{t.tx.QueryRowContext(ctx, rebind(query), args...)}
}

func (t *sqlTx) SendBatch(ctx context.Context, b *Batch) error {
	if t.ended {
		return ErrTxEnded
	}
	t.ended = b.final && !t.hold
	return sqlSendBatch(ctx, t.tx, b)
}

func (*sqlTx) Engine() Engine { return SQLite }

// errRow is a Row whose Scan fails with err.
type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

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

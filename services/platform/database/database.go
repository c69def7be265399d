// Package database opens a service's store on one of Foundry's two engines,
// Postgres (through a pgx pool whose search_path is the service's schema) or
// embedded SQLite (one WAL-mode file per service), behind one small query
// interface, so each service writes its SQL once.
//
// Queries use Postgres placeholders ($1, $2, ...); on SQLite they are rewritten
// to numbered ?NNN parameters. Timestamps are stored as BIGINT Unix
// microseconds on both engines and money as BIGINT micro-units, so scanning
// behaves identically everywhere.
package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	pgxpoolprometheus "github.com/IBM/pgxpoolprometheus"
	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Engine names a storage engine.
type Engine string

// The engines.
const (
	Postgres Engine = "postgres"
	SQLite   Engine = "sqlite"
)

// ErrNoRows is returned by Row.Scan when the query matched nothing.
var ErrNoRows = errors.New("no rows in result set")

// Config says where a service's data lives.
type Config struct {
	// URL is a postgres:// URL; empty means SQLite.
	URL string
	// DataDir holds the SQLite files.
	DataDir string
	// Schema is the service's name: its Postgres schema and SQLite file name.
	Schema string
	// MaxConns bounds the Postgres pool (default 10).
	MaxConns int32
	// Trace makes every Postgres statement an OpenTelemetry span (otelpgx;
	// the statement's text, never its arguments). Off when the process
	// exports no traces, so statements pay nothing for it.
	Trace bool
}

var schemaPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

// Rows iterates over a query's result.
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// Row is a single-row result; Scan returns ErrNoRows when there is none.
type Row interface {
	Scan(dest ...any) error
}

// Querier runs statements; both DB and a transaction are Queriers.
type Querier interface {
	// Exec runs a statement and returns the number of rows it affected.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	QueryRow(ctx context.Context, query string, args ...any) Row
	// SendBatch runs the batch's statements, in one round trip on
	// Postgres.
	SendBatch(ctx context.Context, b *Batch) error
	Engine() Engine
}

// DB is an open store.
type DB struct {
	engine Engine
	schema string
	target string
	pool   *pgxpool.Pool
	sqldb  *sql.DB
}

// Collector is the Prometheus collector of the connection pool's
// statistics: pgxpool_* (IBM/pgxpoolprometheus) on Postgres, go_sql_* (the
// client library's database/sql collector) on SQLite, labelled with the
// schema.
func (db *DB) Collector() prometheus.Collector {
	if db.pool != nil {
		return pgxpoolprometheus.NewCollector(db.pool, map[string]string{"db_name": db.schema})
	}
	return collectors.NewDBStatsCollector(db.sqldb, db.schema)
}

// Open connects to the engine the config names. For Postgres the schema need
// not exist yet (migrations create it).
func Open(ctx context.Context, cfg Config) (*DB, error) {
	if !schemaPattern.MatchString(cfg.Schema) {
		return nil, fmt.Errorf("database schema %q: want a lowercase identifier", cfg.Schema)
	}
	if cfg.URL == "" {
		return openSQLite(ctx, cfg)
	}
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("database URL: want postgres://user@host:port/db")
	}
	return openPostgres(ctx, cfg, Redact(cfg.URL))
}

func openPostgres(ctx context.Context, cfg Config, redacted string) (*DB, error) {
	pc, err := pgxpool.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("parse database URL %s: %w", redacted, err)
	}
	pc.ConnConfig.RuntimeParams["search_path"] = cfg.Schema
	pc.ConnConfig.RuntimeParams["application_name"] = "foundry-" + cfg.Schema
	pc.MaxConns = 10
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	if cfg.Trace {
		pc.ConnConfig.Tracer = otelpgx.NewTracer() // span names are the trimmed statement by default
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("open postgres %s: %w", redacted, err)
	}
	return &DB{engine: Postgres, schema: cfg.Schema, target: redacted, pool: pool}, nil
}

func openSQLite(ctx context.Context, cfg Config) (*DB, error) {
	dir := cfg.DataDir
	if dir == "" {
		dir = "data"
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dir, cfg.Schema+".db")
	// _txlock=immediate takes the write lock when a transaction begins, so two
	// read-then-write transactions queue instead of failing mid-way; the busy
	// timeout makes writers wait for each other rather than fail.
	dsn := "file:" + path + "?_txlock=immediate" +
		"&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(ON)&_pragma=synchronous(NORMAL)"
	sqldb, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	sqldb.SetMaxOpenConns(8)
	sqldb.SetConnMaxIdleTime(5 * time.Minute)
	if err := sqldb.PingContext(ctx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	return &DB{engine: SQLite, schema: cfg.Schema, target: path, sqldb: sqldb}, nil
}

// Engine reports the engine.
func (db *DB) Engine() Engine { return db.engine }

// Schema is the service's schema (Postgres) or file stem (SQLite).
func (db *DB) Schema() string { return db.schema }

// Target describes where the data lives: the URL with its secrets redacted
// (Redact), or the SQLite file path.
func (db *DB) Target() string { return db.target }

// Ping checks the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if db.pool != nil {
		return db.pool.Ping(ctx)
	}
	return db.sqldb.PingContext(ctx)
}

// Close releases the connections.
func (db *DB) Close() {
	if db.pool != nil {
		db.pool.Close()
	}
	if db.sqldb != nil {
		_ = db.sqldb.Close()
	}
}

// Exec implements Querier.
func (db *DB) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	if db.pool != nil {
		return pgExec(ctx, db.pool, query, args)
	}
	return sqlExec(ctx, db.sqldb, query, args)
}

// Query implements Querier.
func (db *DB) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	if db.pool != nil {
		return pgQuery(ctx, db.pool, query, args)
	}
	return sqlQuery(ctx, db.sqldb, query, args)
}

// QueryRow implements Querier.
func (db *DB) QueryRow(ctx context.Context, query string, args ...any) Row {
	if db.pool != nil {
		return pgRow{db.pool.QueryRow(ctx, query, args...)}
	}
	return sqlRow{db.sqldb.QueryRowContext(ctx, rebind(query), args...)}
}

// SendBatch implements Querier.
func (db *DB) SendBatch(ctx context.Context, b *Batch) error {
	if db.pool != nil {
		return pgSendBatch(ctx, db.pool, b)
	}
	return sqlSendBatch(ctx, db.sqldb, b)
}

// maxAttempts bounds retries of a transaction that lost a serialization race.
const maxAttempts = 5

// Tx runs fn in a transaction and commits it when fn returns nil. A
// transaction that fails with a serialization failure or deadlock (Postgres)
// or a busy database (SQLite) is retried from the start, so fn must not have
// effects outside the transaction.
func (db *DB) Tx(ctx context.Context, fn func(tx Querier) error) error {
	var err error
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		if db.pool != nil {
			err = db.pgTx(ctx, fn)
		} else {
			err = db.sqlTx(ctx, fn)
		}
		if err == nil || !IsRetryable(err) || ctx.Err() != nil {
			return err
		}
		time.Sleep(time.Duration(attempt*attempt) * 5 * time.Millisecond)
	}
	return err
}

func (db *DB) pgTx(ctx context.Context, fn func(tx Querier) error) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer conn.Release()
	tx := &pgTx{conn: conn, hold: holdsCommit(ctx)}
	committed := false
	defer func() {
		if !committed {
			tx.rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.commit(ctx); err != nil {
		return err
	}
	committed = true
	return nil
}

func (db *DB) sqlTx(ctx context.Context, fn func(tx Querier) error) error {
	tx, err := db.sqldb.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if err := fn(&sqlTx{tx: tx, hold: holdsCommit(ctx)}); err != nil {
		return err
	}
	return tx.Commit()
}

// IsUniqueViolation reports whether err is a unique or primary-key conflict.
func IsUniqueViolation(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

// IsRetryable reports whether a transaction failing with err may succeed if
// run again: a serialization failure or deadlock, or a busy SQLite database.
func IsRetryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		code := se.Code() & 0xff
		return code == sqlite3.SQLITE_BUSY || code == sqlite3.SQLITE_LOCKED
	}
	return false
}

// IsUnavailable reports whether err says the database could not be
// reached or went away under the request, so that the same request may
// succeed shortly: a connection refused, reset or cut (Postgres restarting,
// a backend terminated, a proxy dropping the session), Postgres' own
// connection and shutdown errors (class 08, admin and crash shutdown,
// starting up, too many connections), or a database still busy after the
// transaction's retries. Such a failure is Unavailable (503 with
// Retry-After), not an internal error: a retrying client needs to tell it
// from a bug.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "57P01", "57P02", "57P03", "53300":
			return true
		}
		return strings.HasPrefix(pe.Code, "08")
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	switch {
	case errors.As(err, &ce), errors.As(err, &ne) && !ne.Timeout(),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, net.ErrClosed),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	// pgx reports a connection it closed after a failure ("conn closed")
	// and a pool closed under a request ("closed pool", a shutdown) with
	// no error value of its own to match.
	if msg := err.Error(); strings.Contains(msg, "conn closed") || strings.Contains(msg, "closed pool") {
		return true
	}
	// A Postgres error was judged above, so what is retryable here is a
	// SQLite database still busy after the transaction's retries; a
	// serialization failure or deadlock that outlived them is a conflict.
	return IsRetryable(err)
}

// Placeholders returns "$from, $from+1, ..., $from+n-1" for an IN list.
func Placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}

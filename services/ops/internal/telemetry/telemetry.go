// Package telemetry stores runtime telemetry events (one per request the
// gateway served) in the sink the configuration chooses:
//
//  1. RUNTIME_DATABASE_URL set: that database, even when RUNTIME_EVENTS_PATH
//     is set too. A postgres:// URL puts the events in the "telemetry"
//     schema of that database; sqlite:<path>.db in that SQLite file.
//  2. Otherwise RUNTIME_EVENTS_PATH set: a JSON-lines file at that path.
//  3. Otherwise off: events are accepted and discarded.
//
// A database sink connects and migrates lazily, on first use, and retries on
// later batches when that fails: a telemetry database that is down never
// stops the service from starting or serving.
package telemetry

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/migrate"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// Backends a sink reports.
const (
	Postgres = "postgres"
	SQLite   = "sqlite"
	File     = "file"
	Off      = "off"
)

// DefaultSchema is the Postgres schema (and the migrations' name) of the
// telemetry database.
const DefaultSchema = "telemetry"

// Event is one served request. It holds no secrets by construction: the
// route is the matched pattern (/api/ideas/{id}), never the raw path or its
// query string, and no header or body is kept.
type Event struct {
	OccurredAt time.Time
	Method     string
	Route      string
	Status     int
	DurationMS float64
}

// Sink is where events go.
type Sink interface {
	// Backend is Postgres, SQLite, File or Off.
	Backend() string
	// Target is the database URL (password redacted), the SQLite file or the
	// events file; empty when off.
	Target() string
	// Write stores a batch of events.
	Write(ctx context.Context, events []Event) error
	// Check reports whether the sink can take events now.
	Check(ctx context.Context) error
	// Prune deletes the events that occurred before before and reports how
	// many (a database sink only: a file is the operator's to rotate).
	Prune(ctx context.Context, before time.Time) (int64, error)
	// Close releases the sink's resources.
	Close()
}

// Config chooses the sink.
type Config struct {
	// DatabaseURL is RUNTIME_DATABASE_URL.
	DatabaseURL string
	// EventsPath is RUNTIME_EVENTS_PATH.
	EventsPath string
	// Schema is the Postgres schema; DefaultSchema when empty (tests use
	// unique ones).
	Schema string
}

//go:embed migrations
var migrations embed.FS

// Migrations are the telemetry database's migrations (see the platform
// migrate package).
func Migrations() fs.FS { return migrate.Embedded(migrations) }

// Open returns the sink cfg chooses (see the package comment). It fails only
// on a malformed configuration; it does not connect.
func Open(cfg Config) (Sink, error) {
	if raw := strings.TrimSpace(cfg.DatabaseURL); raw != "" {
		return openDB(raw, cfg.Schema)
	}
	if p := strings.TrimSpace(cfg.EventsPath); p != "" {
		return &fileSink{path: p, lock: make(chan struct{}, 1)}, nil
	}
	return offSink{}, nil
}

var identifier = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)

func openDB(raw, schema string) (Sink, error) {
	if schema == "" {
		schema = DefaultSchema
	}
	if rest, ok := strings.CutPrefix(raw, "sqlite:"); ok {
		p := strings.TrimPrefix(rest, "//") // sqlite:///abs/x.db and sqlite:x.db alike
		dir, file := filepath.Split(p)
		stem, isDB := strings.CutSuffix(file, ".db")
		if !isDB || !identifier.MatchString(stem) {
			return nil, fmt.Errorf("runtime database URL %q: want sqlite:<dir>/<name>.db with a lowercase name such as telemetry.db", raw)
		}
		if dir == "" {
			dir = "."
		}
		return &dbSink{backend: SQLite, target: filepath.Join(dir, file), lock: make(chan struct{}, 1),
			cfg: database.Config{DataDir: dir, Schema: stem, MaxConns: 2}}, nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, errors.New("runtime database URL: want postgres://user@host:port/db or sqlite:<path>.db")
	}
	if !identifier.MatchString(schema) {
		return nil, fmt.Errorf("telemetry schema %q: want a lowercase identifier", schema)
	}
	return &dbSink{backend: Postgres, target: database.Redact(raw), lock: make(chan struct{}, 1),
		cfg: database.Config{URL: raw, Schema: schema, MaxConns: 2}}, nil
}

// acquire takes a one-slot lock, giving up when ctx is done: a sink stuck
// on a hung database must not hold readiness probes past their deadline.
func acquire(ctx context.Context, lock chan struct{}) error {
	select {
	case lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// dbSink writes events to a database, connecting and migrating on first use.
type dbSink struct {
	backend string
	target  string
	cfg     database.Config
	lock    chan struct{}
	db      *database.DB
	ready   bool
}

func (s *dbSink) Backend() string { return s.backend }
func (s *dbSink) Target() string  { return s.target }

// open connects and migrates once; a failure is retried on the next call.
func (s *dbSink) open(ctx context.Context) (*database.DB, error) {
	if err := acquire(ctx, s.lock); err != nil {
		return nil, err
	}
	defer func() { <-s.lock }()
	if s.ready {
		return s.db, nil
	}
	if s.db == nil {
		db, err := database.Open(ctx, s.cfg)
		if err != nil {
			return nil, fmt.Errorf("open telemetry database: %w", err)
		}
		s.db = db
	}
	if _, err := migrate.Up(ctx, s.db, Migrations()); err != nil {
		return nil, fmt.Errorf("migrate telemetry database: %w", err)
	}
	s.ready = true
	return s.db, nil
}

// insertChunk bounds the rows of one INSERT (6 parameters each).
const insertChunk = 500

func (s *dbSink) Write(ctx context.Context, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	db, err := s.open(ctx)
	if err != nil {
		return err
	}
	now := time.Now().UnixMicro()
	// The sink's own database (not ops's schema, and no repository of a
	// use case): a batch is stored whole or not at all.
	return db.Tx(ctx, func(tx database.Querier) error {
		for start := 0; start < len(events); start += insertChunk {
			chunk := events[start:min(start+insertChunk, len(events))]
			var b strings.Builder
			b.WriteString(`INSERT INTO runtime_events (occurred_at, method, route, status, duration_ms, recorded_at) VALUES `)
			args := make([]any, 0, len(chunk)*6)
			for i, e := range chunk {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(" + database.Placeholders(len(args)+1, 6) + ")")
				args = append(args, e.OccurredAt.UnixMicro(), e.Method, e.Route, e.Status, e.DurationMS, now)
			}
			if _, err := tx.Exec(ctx, b.String(), args...); err != nil {
				return fmt.Errorf("insert telemetry events: %w", err)
			}
		}
		return nil
	})
}

func (s *dbSink) Check(ctx context.Context) error {
	db, err := s.open(ctx)
	if err != nil {
		return err
	}
	return db.Ping(ctx)
}

// pruneBatch bounds the rows one DELETE removes, so pruning a large
// backlog never holds a long lock on the table while requests are recorded.
const pruneBatch = 5000

// Prune implements Sink: DELETEs of at most pruneBatch rows (oldest first,
// through the occurred_at index) until none is left.
func (s *dbSink) Prune(ctx context.Context, before time.Time) (int64, error) {
	db, err := s.open(ctx)
	if err != nil {
		return 0, err
	}
	var total int64
	for {
		n, err := db.Exec(ctx, `DELETE FROM runtime_events WHERE id IN
			(SELECT id FROM runtime_events WHERE occurred_at < $1 ORDER BY occurred_at LIMIT $2)`, before.UnixMicro(), pruneBatch)
		if err != nil {
			return total, fmt.Errorf("prune telemetry events: %w", err)
		}
		total += n
		if n < pruneBatch || ctx.Err() != nil {
			return total, ctx.Err()
		}
	}
}

func (s *dbSink) Close() {
	s.lock <- struct{}{}
	defer func() { <-s.lock }()
	if s.db != nil {
		s.db.Close()
		s.db, s.ready = nil, false
	}
}

// fileSink appends events to a JSON-lines file, one object per line. Each
// batch is one write to a file opened for appending, under a lock, so
// concurrent batches never interleave within a line.
type fileSink struct {
	path string
	lock chan struct{}
}

// fileEvent is the JSON form of an event in the events file.
type fileEvent struct {
	OccurredAt string  `json:"occurred_at"`
	Method     string  `json:"method"`
	Route      string  `json:"route"`
	Status     int     `json:"status"`
	DurationMS float64 `json:"duration_ms"`
}

func (s *fileSink) Backend() string { return File }
func (s *fileSink) Target() string  { return s.path }

func (s *fileSink) Write(ctx context.Context, events []Event) error {
	if len(events) == 0 {
		return nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // Encode ends each object with a newline
	for _, e := range events {
		if err := enc.Encode(fileEvent{
			OccurredAt: wire.Time(e.OccurredAt), Method: e.Method, Route: e.Route,
			Status: e.Status, DurationMS: e.DurationMS,
		}); err != nil {
			return fmt.Errorf("encode telemetry event: %w", err)
		}
	}
	if err := acquire(ctx, s.lock); err != nil {
		return err
	}
	defer func() { <-s.lock }()
	f, err := s.openFile()
	if err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		_ = f.Close()
		return fmt.Errorf("append to telemetry file %s: %w", s.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close telemetry file %s: %w", s.path, err)
	}
	return nil
}

func (s *fileSink) openFile() (*os.File, error) {
	if dir := filepath.Dir(s.path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("create telemetry directory %s: %w", dir, err)
		}
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("open telemetry file: %w", err)
	}
	return f, nil
}

// Check opens the file for appending (creating it when absent).
func (s *fileSink) Check(ctx context.Context) error {
	if err := acquire(ctx, s.lock); err != nil {
		return err
	}
	defer func() { <-s.lock }()
	f, err := s.openFile()
	if err != nil {
		return err
	}
	return f.Close()
}

func (s *fileSink) Close() {}

// Prune implements Sink: a file is never rewritten by Foundry (each batch
// opens the path for appending, so the operator's rotation, by rename or
// by copy-and-truncate, loses nothing); it reports 0.
func (s *fileSink) Prune(context.Context, time.Time) (int64, error) { return 0, nil }

// offSink discards events.
type offSink struct{}

func (offSink) Backend() string                                 { return Off }
func (offSink) Target() string                                  { return "" }
func (offSink) Write(context.Context, []Event) error            { return nil }
func (offSink) Check(context.Context) error                     { return nil }
func (offSink) Prune(context.Context, time.Time) (int64, error) { return 0, nil }
func (offSink) Close()                                          {}

// IsDatabase reports whether a backend is a database.
func IsDatabase(backend string) bool { return backend == Postgres || backend == SQLite }

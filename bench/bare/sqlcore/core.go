// Package sqlcore is the work of the HTTP benchmark's baselines: for each
// benchmarked route, the SQL statements Foundry's stores run, against the
// same database and the same tables, and the few domain rules the route
// needs (validation, the coherence score, the routing defaults, the
// journal's account names, the percentile rules), each re-implemented next
// to a comment naming the Foundry function it mirrors. Two servers run it:
// bench/bare (one hop: net/http → this package → Postgres) and
// bench/twohop's back end (net/http front → gRPC → this package →
// Postgres), so the two baselines differ only in the hop.
//
// Every request sends its statements as one pipelined round trip (a
// pgx.Batch) whenever the statements do not need an earlier statement's
// result in Go; a use case that Foundry runs in a transaction has BEGIN and
// COMMIT queued in the same batch. Where Foundry reads and then writes, the
// route's comment says how the baseline keeps it to one round trip (a
// data-modifying CTE, or values the request already knows) or, for the
// stake, why it needs two. Table names are schema-qualified (ledger.,
// portfolio., agent.), so one pool serves every schema.
//
// Only the standard library and pgx are used: Foundry's internal packages
// cannot be imported from this module. A route is one method of Core that
// takes the request's fields (as the route's JSON body decodes them, or as
// the service's proto request carries them) and returns the answer in the
// shape of its JSON body, or an *Error naming the HTTP status Foundry
// answers it with.
package sqlcore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Core runs the routes on a pool of connections to Foundry's database.
type Core struct {
	pool *pgxpool.Pool
}

// New returns a Core over pool.
func New(pool *pgxpool.Pool) *Core { return &Core{pool: pool} }

// Open opens a pool of size connections to the database of dbURL, named
// app in pg_stat_activity, and checks that it answers.
func Open(ctx context.Context, dbURL string, size int, app string) (*pgxpool.Pool, error) {
	if size < 1 || size > math.MaxInt32 {
		return nil, errors.New("the pool needs at least 1 connection")
	}
	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return nil, fmt.Errorf("parse -database-url: %w", err)
	}
	cfg.MaxConns = int32(size)
	cfg.ConnConfig.RuntimeParams["application_name"] = app
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: %w", err)
	}
	return pool, nil
}

// ---------------------------------------------------------------------------
// Failures the caller is told about.

// FieldError is one bad field of a request.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is a failure the caller is told about, with Foundry's status for
// its kind (gateway/errors.go: invalid 422, rejected 400, not found 404,
// conflict 409, unauthenticated 401, forbidden 403).
type Error struct {
	Status int
	Detail string
	Fields []FieldError
}

func (e *Error) Error() string { return e.Detail }

// Fail is a failure with status and a detail for people.
func Fail(status int, format string, args ...any) *Error {
	return &Error{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// Field is one field's failure, for Invalid.
func Field(name, format string, args ...any) FieldError {
	return FieldError{Field: name, Message: fmt.Sprintf(format, args...)}
}

// Invalid is fault.Validation: a 422 whose detail joins the field messages.
func Invalid(fields ...FieldError) *Error {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Field + ": " + f.Message
	}
	detail := strings.Join(parts, "; ")
	if detail == "" {
		detail = "invalid request"
	}
	return &Error{Status: http.StatusUnprocessableEntity, Detail: detail, Fields: fields}
}

func fail(status int, format string, args ...any) *Error { return Fail(status, format, args...) }

func field(name, format string, args ...any) FieldError { return Field(name, format, args...) }

func invalid(fields ...FieldError) *Error { return Invalid(fields...) }

// collect merges field errors into one 422 (nil when there are none).
func collect(fields []FieldError) error {
	if len(fields) == 0 {
		return nil
	}
	return invalid(fields...)
}

// ---------------------------------------------------------------------------
// Round trips.

// send runs b on c as one pipelined round trip and hands its results, in
// queue order, to read.
func send(ctx context.Context, c *pgxpool.Conn, b *pgx.Batch, read func(br pgx.BatchResults) error) error {
	br := c.SendBatch(ctx, b)
	err := read(br)
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return err
}

// release returns c to the pool, first rolling back a transaction a failed
// batch left open or aborted (pgxpool would otherwise close the connection).
func release(c *pgxpool.Conn) {
	if c.Conn().PgConn().TxStatus() != 'I' && !c.Conn().IsClosed() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, _ = c.Exec(ctx, "ROLLBACK")
		cancel()
	}
	c.Release()
}

// run sends b as one round trip on a connection of its own.
func (core *Core) run(ctx context.Context, b *pgx.Batch, read func(br pgx.BatchResults) error) error {
	c, err := core.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire a connection: %w", err)
	}
	defer release(c)
	return send(ctx, c, b, read)
}

// pgCode is the SQLSTATE of err ("" when it is not a Postgres error).
func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// ---------------------------------------------------------------------------
// Shared helpers: ids, times, exact money (services/ledger/internal/money).

// newID is a random (version 4) UUID, as Foundry's ids are.
func newID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}

// now is the time records carry, to the microsecond the store keeps.
func now() time.Time { return time.Now().UTC().Truncate(time.Microsecond) }

func micros(t time.Time) int64 { return t.UnixMicro() }

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func optTime(us *int64) *string {
	if us == nil {
		return nil
	}
	s := rfc3339(fromMicros(*us))
	return &s
}

func nullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// microScale is money.Scale: micro-units in one unit.
const microScale = 1_000_000

// fromFloat is money.FromFloat: a JSON number to exact micro-units, read
// as its shortest decimal form; more than six decimals is refused.
func fromFloat(x float64) (int64, error) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, errors.New("must be a finite number")
	}
	if math.Abs(x) > 9e12 {
		return 0, errors.New("is too large")
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 6 {
		return 0, errors.New("must have at most 6 decimal places")
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || w > math.MaxInt64/microScale-1 {
		return 0, errors.New("is too large")
	}
	f := int64(0)
	if frac != "" {
		if f, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil {
			return 0, errors.New("is not a decimal number")
		}
	}
	m := w*microScale + f
	if neg {
		m = -m
	}
	return m, nil
}

// microsText is money.Micros.String: six decimals.
func microsText(m int64) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%d.%06d", sign, m/microScale, m%microScale)
}

func microsFloat(m int64) float64 { return float64(m) / microScale }

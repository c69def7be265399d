// Command bare is the baseline of the HTTP benchmark: one hop, net/http →
// pgxpool → Postgres, running the SQL statements Foundry's stores run for
// each benchmarked route against the same database and the same tables.
// Foundry answers the same routes through the REST gateway, gRPC, a use
// case and a repository; the ratio Foundry/bare is Foundry's overhead.
//
// Every request sends its statements as one pipelined round trip (a
// pgx.Batch) whenever the statements do not need an earlier statement's
// result in Go; a use case that Foundry runs in a transaction has BEGIN and
// COMMIT queued in the same batch. Where Foundry reads and then writes, the
// route's comment says how the bare server keeps it to one round trip (a
// data-modifying CTE, or values the request already knows) or, for the
// stake, why it needs two. Table names are schema-qualified (ledger.,
// portfolio., agent.), so one pool of -pool connections serves every schema.
//
// Only the standard library and pgx are used: Foundry's internal packages
// cannot be imported from this module, so the few domain rules a route needs
// (validation, the coherence score, the routing defaults, the journal's
// account names, the percentile rules) are re-implemented below, each next
// to the Foundry function it mirrors.
//
//	bare -database-url=postgres://user@host:5432/foundry -addr=127.0.0.1:8090 -pool=16
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"mime"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8090", "HTTP listen address")
	dbURL := flag.String("database-url", "", "Postgres URL of the database Foundry uses (required)")
	poolSize := flag.Int("pool", 16, "connections in the pool")
	flag.Parse()
	if *dbURL == "" {
		fmt.Fprintln(os.Stderr, "bare: -database-url is required")
		os.Exit(2)
	}
	if *poolSize < 1 || *poolSize > math.MaxInt32 {
		fmt.Fprintln(os.Stderr, "bare: -pool must be at least 1")
		os.Exit(2)
	}

	if err := run(*addr, *dbURL, *poolSize); err != nil {
		log.Fatalf("bare: %v", err)
	}
	log.Printf("bare: stopped")
}

// run serves until SIGINT or SIGTERM; its deferred clean-ups run on every
// return, which log.Fatalf inside it would skip.
func run(addr, dbURL string, poolSize int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	cfg, err := pgxpool.ParseConfig(dbURL)
	if err != nil {
		return fmt.Errorf("parse -database-url: %w", err)
	}
	cfg.MaxConns = int32(poolSize)
	cfg.ConnConfig.RuntimeParams["application_name"] = "foundry-bare"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open pool: %w", err)
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		return fmt.Errorf("database: %w", err)
	}

	s := &server{pool: pool}
	srv := &http.Server{
		Addr:              addr,
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Printf("bare: listening on http://%s (pool of %d connections to %s:%d/%s)",
		addr, poolSize, cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)

	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Printf("bare: shutdown: %v", err)
	}
	return nil
}

// ---------------------------------------------------------------------------
// HTTP plumbing: the gateway's conventions (JSON bodies of at most 1 MiB with
// unknown fields refused, {"detail", "errors"} error bodies, a 30 s request
// timeout), kept to what a hand-written server would do.

type server struct {
	pool *pgxpool.Pool
}

// requestTimeout is the gateway's default -request-timeout.
const requestTimeout = 30 * time.Second

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/contributions", s.createContribution)
	mux.HandleFunc("GET /api/ideas/{id}", s.getIdea)
	mux.HandleFunc("GET /api/ideas", s.listIdeas)
	mux.HandleFunc("POST /api/agent/tasks", s.createTask)
	mux.HandleFunc("PATCH /api/agent/tasks/{id}", s.updateTask)
	mux.HandleFunc("GET /api/agent/pipeline-status", s.pipelineStatus)
	mux.HandleFunc("GET /api/agent/metrics", s.metrics)
	mux.HandleFunc("POST /api/cc/stake", s.stake)
	mux.HandleFunc("POST /api/ideas/{idea_id}/stake", s.stake)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusNotFound, errorBody{Detail: "not found"})
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), requestTimeout)
		defer cancel()
		mux.ServeHTTP(w, r.WithContext(ctx))
	})
}

type fieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

type errorBody struct {
	Detail string       `json:"detail"`
	Errors []fieldError `json:"errors,omitempty"`
}

// apiError is a failure the caller is told about, with Foundry's status for
// its kind (gateway/errors.go: invalid 422, rejected 400, not found 404,
// conflict 409, unauthenticated 401, forbidden 403).
type apiError struct {
	status int
	detail string
	fields []fieldError
}

func (e *apiError) Error() string { return e.detail }

func fail(status int, format string, args ...any) *apiError {
	return &apiError{status: status, detail: fmt.Sprintf(format, args...)}
}

func field(name, format string, args ...any) fieldError {
	return fieldError{Field: name, Message: fmt.Sprintf(format, args...)}
}

// invalid is fault.Validation: a 422 whose detail joins the field messages.
func invalid(fields ...fieldError) *apiError {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = f.Field + ": " + f.Message
	}
	detail := strings.Join(parts, "; ")
	if detail == "" {
		detail = "invalid request"
	}
	return &apiError{status: http.StatusUnprocessableEntity, detail: detail, fields: fields}
}

// collect merges field errors into one 422 (nil when there are none).
func collect(fields []fieldError) error {
	if len(fields) == 0 {
		return nil
	}
	return invalid(fields...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		log.Printf("bare: encode response: %v", err)
		status, b = http.StatusInternalServerError, []byte(`{"detail":"internal error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		writeJSON(w, ae.status, errorBody{Detail: ae.detail, Errors: ae.fields})
		return
	}
	if errors.Is(err, context.DeadlineExceeded) {
		writeJSON(w, http.StatusGatewayTimeout, errorBody{Detail: "the request timed out"})
		return
	}
	log.Printf("bare: %s %s: %v", r.Method, r.URL.Path, err)
	writeJSON(w, http.StatusInternalServerError, errorBody{Detail: "internal error"})
}

// maxBody is the gateway's default -max-body-bytes.
const maxBody = 1 << 20

// decode reads a JSON body into dst as the gateway does: a body needs a JSON
// Content-Type, at most maxBody bytes, one JSON value, no unknown field; an
// empty body means no fields.
func decode(w http.ResponseWriter, r *http.Request, dst any) error {
	ct := r.Header.Get("Content-Type")
	if ct != "" || r.ContentLength > 0 {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return fail(http.StatusUnsupportedMediaType, "unsupported Content-Type: send the body as JSON with Content-Type: application/json")
		}
	}
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return fail(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes", maxBody)
		}
		return fail(http.StatusBadRequest, "could not read the request body")
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		return fail(http.StatusUnprocessableEntity, "malformed JSON: %v", err)
	}
	if dec.More() {
		return fail(http.StatusUnprocessableEntity, "malformed JSON: more than one value in the body")
	}
	return nil
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
func (s *server) run(ctx context.Context, b *pgx.Batch, read func(br pgx.BatchResults) error) error {
	c, err := s.pool.Acquire(ctx)
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

// ---------------------------------------------------------------------------
// 1. POST /api/contributions
//
// Mirrors ledger handler.CreateContribution (handler/attribution.go) →
// usecase.App.CreateContribution (usecase/attribution.go) →
// sqlstore.Identity.EnsureContributor (sqlstore/identity.go) and
// sqlstore.Attribution.AddContribution (sqlstore/attribution.go), in one
// transaction. One round trip: BEGIN, the contributor upsert, the asset
// UPDATE, the contribution INSERT, COMMIT.
//
// Deliberate difference: Foundry checks the UPDATE's row count in Go and, at
// zero, reads the asset (SELECT 1 FROM assets) to tell 404 from 400 before
// rolling back. Inside one batch the UPDATE is wrapped in a CTE that divides
// by its row count, so zero rows aborts the transaction (nothing is written,
// not even the contributor, as in Foundry); only on that error path does the
// bare server send Foundry's SELECT 1 FROM assets as a second round trip.
// The response is built from the request, as Foundry's is.

const (
	maxAmountMicros      = 1_000_000_000 * microScale // attribution.MaxAmount
	maxAssetTotalMicros  = 9_000_000_000 * microScale // attribution.MaxAssetTotal
	maxContributorIDLen  = 256
	maxMetadataBytes     = 4 << 10
	trustImplicit        = "implicit"
	sourceAPI            = "api"
	sqlEnsureContributor = `INSERT INTO ledger.contributors (id, handle, trust_level, created_at) VALUES ($1, NULL, $2, $3)
		ON CONFLICT (id) DO NOTHING`
	sqlAddToAssetChecked = `WITH added AS (UPDATE ledger.assets SET total_cost_micros = total_cost_micros + $2, contribution_count = contribution_count + 1
		WHERE id = $1 AND total_cost_micros <= $3 RETURNING 1)
		SELECT 1 / COUNT(*) FROM added`
	sqlAssetExists        = `SELECT 1 FROM ledger.assets WHERE id = $1`
	sqlInsertContribution = `INSERT INTO ledger.contributions (id, contributor_id, asset_id, cost_micros, coherence, metadata, source, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`
)

type contributionRequest struct {
	ContributorID string         `json:"contributor_id"`
	AssetID       string         `json:"asset_id"`
	CostAmount    *float64       `json:"cost_amount"`
	Metadata      map[string]any `json:"metadata"`
}

type contributionJSON struct {
	ID             string         `json:"id"`
	ContributorID  string         `json:"contributor_id"`
	AssetID        string         `json:"asset_id"`
	CostAmount     float64        `json:"cost_amount"`
	CoherenceScore float64        `json:"coherence_score"`
	Metadata       map[string]any `json:"metadata"`
	Source         string         `json:"source"`
	CreatedAt      string         `json:"created_at"`
}

// validContributorID is attribution.ValidateContributorID.
func validContributorID(id string) []fieldError {
	msg := ""
	switch {
	case strings.TrimSpace(id) == "":
		msg = "is required"
	case !utf8.ValidString(id):
		msg = "must be valid UTF-8"
	case utf8.RuneCountInString(id) > maxContributorIDLen:
		msg = fmt.Sprintf("must be at most %d characters", maxContributorIDLen)
	case strings.ContainsFunc(id, unicode.IsControl):
		msg = "must not contain control characters"
	}
	if msg == "" {
		return nil
	}
	return []fieldError{field("contributor_id", "%s", msg)}
}

// coherenceScore is attribution.Score: 500 thousandths, +200 with tests,
// +200 with docs, +100 for low complexity, capped at 1000.
func coherenceScore(meta map[string]any) (int64, []fieldError) {
	c := int64(500)
	var errs []fieldError
	award := func(key string, bonus int64) {
		v, ok := meta[key]
		if !ok || v == nil {
			return
		}
		b, isBool := v.(bool)
		if !isBool {
			errs = append(errs, field("metadata."+key, "must be a boolean"))
			return
		}
		if b {
			c += bonus
		}
	}
	award("has_tests", 200)
	award("has_docs", 200)
	if v, ok := meta["complexity"]; ok && v != nil {
		s, isString := v.(string)
		switch {
		case !isString:
			errs = append(errs, field("metadata.complexity", "must be a string"))
		case s == "low":
			c += 100
		}
	}
	return min(c, 1000), errs
}

func (s *server) createContribution(w http.ResponseWriter, r *http.Request) {
	var req contributionRequest
	if err := decode(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	meta := req.Metadata
	if meta == nil {
		meta = map[string]any{}
	}
	var cost int64
	var costErr []fieldError
	if req.CostAmount == nil {
		costErr = []fieldError{field("cost_amount", "is required")}
	} else {
		m, err := fromFloat(*req.CostAmount)
		switch {
		case err != nil:
			costErr = []fieldError{field("cost_amount", "%s", err.Error())}
		case m < 0:
			costErr = []fieldError{field("cost_amount", "must not be negative")}
		case m > maxAmountMicros:
			costErr = []fieldError{field("cost_amount", "must be at most %d", maxAmountMicros/microScale)}
		}
		cost = m
	}
	coherence, scoreErr := coherenceScore(meta)
	metaJSON, jerr := json.Marshal(meta)
	var fields []fieldError
	fields = append(fields, validContributorID(req.ContributorID)...)
	if req.AssetID == "" {
		fields = append(fields, field("asset_id", "is required"))
	}
	fields = append(fields, costErr...)
	fields = append(fields, scoreErr...)
	switch {
	case jerr != nil:
		fields = append(fields, field("metadata", "must be plain JSON (no NaN or infinite numbers)"))
	case len(metaJSON) > maxMetadataBytes:
		fields = append(fields, field("metadata", "must be at most %d bytes of JSON", maxMetadataBytes))
	}
	if err := collect(fields); err != nil {
		writeError(w, r, err)
		return
	}

	at := now()
	c := contributionJSON{
		ID: newID(), ContributorID: req.ContributorID, AssetID: req.AssetID, CostAmount: microsFloat(cost),
		CoherenceScore: float64(coherence) / 1000, Metadata: meta, Source: sourceAPI, CreatedAt: rfc3339(at),
	}
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sqlEnsureContributor, c.ContributorID, trustImplicit, micros(at))
	b.Queue(sqlAddToAssetChecked, c.AssetID, cost, maxAssetTotalMicros-cost)
	b.Queue(sqlInsertContribution, c.ID, c.ContributorID, c.AssetID, cost, coherence, string(metaJSON), sourceAPI, micros(at))
	b.Queue("COMMIT")
	err := s.run(r.Context(), b, func(br pgx.BatchResults) error {
		for range b.Len() {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	if pgCode(err) == "22012" { // the asset UPDATE matched no row
		err = s.contributionRefused(r.Context(), c.AssetID)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, c)
}

// contributionRefused tells a missing asset (404) from one whose total would
// pass the maximum (400), with Foundry's SELECT 1 FROM assets.
func (s *server) contributionRefused(ctx context.Context, assetID string) error {
	var one int
	err := s.pool.QueryRow(ctx, sqlAssetExists, assetID).Scan(&one)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fail(http.StatusNotFound, "asset %q not found", assetID)
	case err != nil:
		return fmt.Errorf("find asset: %w", err)
	}
	return fail(http.StatusBadRequest, "asset %q total_cost would exceed %d", assetID, maxAssetTotalMicros/microScale)
}

// ---------------------------------------------------------------------------
// 2. GET /api/ideas/{id} and 3. GET /api/ideas
//
// GetIdea mirrors portfolio handler.GetIdea (handler/handler.go) →
// usecase.App.Idea (usecase/ideas.go) → sqlstore.Ideas.Get → getIdea
// (store/sqlstore/ideas.go): one statement, the idea joined with its tags,
// one round trip on both servers.
//
// ListIdeas mirrors portfolio handler.ListIdeas → usecase.App.ListIdeas →
// sqlstore.Ideas.List (the page by score, the page's tags, the totals row
// for pagination.total, or a COUNT(*) when tags filter) and
// sqlstore.Ideas.Totals again for the summary. One round trip: the four
// statements in one batch. Deliberate difference: Foundry's tag query names
// the page's ids (IN ($1, …, $n)), which are known only once the page is
// read; the bare server's tag query selects the same page as a subquery
// (same WHERE, ORDER BY, LIMIT and OFFSET), so it needs no ids. The totals
// row is read twice, as Foundry reads it twice.

const ideaColumns = `id, name, description, potential_value, estimated_cost, actual_value, actual_cost,
	confidence, resistance_risk, stage, manifestation_status,
	cost_compute, cost_infrastructure, cost_human_attention,
	value_adoption, value_lineage, value_friction_avoided,
	open_question_count, task_count, parent_idea_id, merged_into_id, archived, created_at, updated_at`

const (
	// sqlGetIdea is getIdea's one statement: the idea with its tags, one
	// row per tag (a NULL tag when none).
	sqlGetIdea = `SELECT ` + ideaColumns + `, t.tag FROM portfolio.ideas LEFT JOIN portfolio.idea_tags t
		ON t.idea_id = ideas.id WHERE ideas.id = $1 ORDER BY t.tag`
	sqlIdeaTotals = `SELECT total_ideas, validated_ideas, potential_value_micros, actual_value_micros
		FROM portfolio.portfolio_totals WHERE id = 1`
	// Portfolio list limits (portfolio handler.DefaultLimit and MaxLimit).
	defaultIdeaLimit = 50
	maxIdeaLimit     = 500
	maxTags          = 32
)

// ideaRow is a row of ideaColumns.
type ideaRow struct {
	ID, Name, Description                                              string
	PotentialValue, EstimatedCost, ActualValue, ActualCost, Confidence float64
	ResistanceRisk                                                     float64
	Stage, Manifestation                                               string
	CostCompute, CostInfra, CostHuman                                  *float64
	ValueAdoption, ValueLineage, ValueFriction                         *float64
	OpenQuestions, TaskCount                                           int
	ParentID, MergedIntoID                                             *string
	Archived                                                           bool
	CreatedAt, UpdatedAt                                               int64
}

func scanIdea(row pgx.Row, extra ...any) (ideaRow, error) {
	var i ideaRow
	err := row.Scan(append([]any{&i.ID, &i.Name, &i.Description, &i.PotentialValue, &i.EstimatedCost, &i.ActualValue, &i.ActualCost,
		&i.Confidence, &i.ResistanceRisk, &i.Stage, &i.Manifestation,
		&i.CostCompute, &i.CostInfra, &i.CostHuman, &i.ValueAdoption, &i.ValueLineage, &i.ValueFriction,
		&i.OpenQuestions, &i.TaskCount, &i.ParentID, &i.MergedIntoID, &i.Archived, &i.CreatedAt, &i.UpdatedAt}, extra...)...)
	return i, err
}

type costVector struct {
	Compute        float64 `json:"compute"`
	Infrastructure float64 `json:"infrastructure"`
	HumanAttention float64 `json:"human_attention"`
}

type valueVector struct {
	Adoption        float64 `json:"adoption"`
	Lineage         float64 `json:"lineage"`
	FrictionAvoided float64 `json:"friction_avoided"`
}

type ideaJSON struct {
	ID                  string      `json:"id"`
	Name                string      `json:"name"`
	Description         string      `json:"description"`
	PotentialValue      float64     `json:"potential_value"`
	EstimatedCost       float64     `json:"estimated_cost"`
	ActualValue         float64     `json:"actual_value"`
	ActualCost          float64     `json:"actual_cost"`
	Confidence          float64     `json:"confidence"`
	ResistanceRisk      float64     `json:"resistance_risk"`
	Stage               string      `json:"stage"`
	ManifestationStatus string      `json:"manifestation_status"`
	Tags                []string    `json:"tags"`
	CostVector          costVector  `json:"cost_vector"`
	ValueVector         valueVector `json:"value_vector"`
	Score               float64     `json:"score"`
	OpenQuestionCount   int         `json:"open_question_count"`
	ParentIdeaID        *string     `json:"parent_idea_id"`
	Archived            bool        `json:"archived"`
	CreatedAt           string      `json:"created_at"`
	UpdatedAt           string      `json:"updated_at"`
}

// ideaOut is portfolio handler.toProto: the vectors default to splits of the
// estimates (idea.Costs, idea.Values) and the score (idea.Score) is shown
// to 4 decimals.
func ideaOut(i ideaRow, tags []string) ideaJSON {
	if tags == nil {
		tags = []string{}
	}
	cv := costVector{Compute: 0.60 * i.EstimatedCost, Infrastructure: 0.15 * i.EstimatedCost, HumanAttention: 0.25 * i.EstimatedCost}
	if i.CostCompute != nil && i.CostInfra != nil && i.CostHuman != nil {
		cv = costVector{Compute: *i.CostCompute, Infrastructure: *i.CostInfra, HumanAttention: *i.CostHuman}
	}
	vv := valueVector{Adoption: 0.50 * i.PotentialValue, Lineage: 0.30 * i.PotentialValue, FrictionAvoided: 0.20 * i.PotentialValue}
	if i.ValueAdoption != nil && i.ValueLineage != nil && i.ValueFriction != nil {
		vv = valueVector{Adoption: *i.ValueAdoption, Lineage: *i.ValueLineage, FrictionAvoided: *i.ValueFriction}
	}
	score := i.PotentialValue * i.Confidence / math.Max(i.EstimatedCost+i.ResistanceRisk, 0.5)
	return ideaJSON{
		ID: i.ID, Name: i.Name, Description: i.Description,
		PotentialValue: i.PotentialValue, EstimatedCost: i.EstimatedCost, ActualValue: i.ActualValue, ActualCost: i.ActualCost,
		Confidence: i.Confidence, ResistanceRisk: i.ResistanceRisk, Stage: i.Stage, ManifestationStatus: i.Manifestation,
		Tags: tags, CostVector: cv, ValueVector: vv, Score: math.Round(score*1e4) / 1e4,
		OpenQuestionCount: i.OpenQuestions, ParentIdeaID: i.ParentID, Archived: i.Archived,
		CreatedAt: rfc3339(fromMicros(i.CreatedAt)), UpdatedAt: rfc3339(fromMicros(i.UpdatedAt)),
	}
}

// readTags collects the (idea_id, tag) rows of a tags query.
func readTags(br pgx.BatchResults) (map[string][]string, error) {
	rows, err := br.Query()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var id, tag string
		if err := rows.Scan(&id, &tag); err != nil {
			return nil, err
		}
		out[id] = append(out[id], tag)
	}
	return out, rows.Err()
}

func (s *server) getIdea(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b := &pgx.Batch{}
	b.Queue(sqlGetIdea, id)
	var out ideaJSON
	err := s.run(r.Context(), b, func(br pgx.BatchResults) error {
		i, tags, found, err := readIdeaTags(br)
		if err != nil {
			return fmt.Errorf("load idea %s: %w", id, err)
		}
		if !found {
			return fail(http.StatusNotFound, "idea %s not found", id)
		}
		out = ideaOut(i, tags)
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}

var (
	tagPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
	spaceRuns  = regexp.MustCompile(`\s+`)
)

// normalizeTags is idea.NormalizeTags.
func normalizeTags(tags []string) ([]string, error) {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		n := spaceRuns.ReplaceAllString(strings.ToLower(strings.TrimSpace(t)), "-")
		if !tagPattern.MatchString(n) {
			return nil, fmt.Errorf("tag %q must be 1 to 40 letters, digits, _ or - after normalising", t)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > maxTags {
		return nil, fmt.Errorf("at most %d tags", maxTags)
	}
	return out, nil
}

type ideaSummary struct {
	TotalIdeas          int64   `json:"total_ideas"`
	UnvalidatedIdeas    int64   `json:"unvalidated_ideas"`
	ValidatedIdeas      int64   `json:"validated_ideas"`
	TotalPotentialValue float64 `json:"total_potential_value"`
	TotalActualValue    float64 `json:"total_actual_value"`
	TotalValueGap       float64 `json:"total_value_gap"`
}

type pagination struct {
	Limit   int   `json:"limit"`
	Offset  int   `json:"offset"`
	Total   int64 `json:"total"`
	HasMore bool  `json:"has_more"`
}

type listIdeasJSON struct {
	Ideas      []ideaJSON  `json:"ideas"`
	Summary    ideaSummary `json:"summary"`
	Pagination pagination  `json:"pagination"`
}

type ideaTotals struct{ ideas, validated, potential, actual int64 }

func scanTotals(row pgx.Row) (ideaTotals, error) {
	var t ideaTotals
	err := row.Scan(&t.ideas, &t.validated, &t.potential, &t.actual)
	return t, err
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

// intParam reads an optional integer query parameter.
func intParam(r *http.Request, name string) (*int, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(raw, 10, 32)
	if err != nil {
		return nil, invalid(field(name, "must be an integer"))
	}
	v := int(n)
	return &v, nil
}

func (s *server) listIdeas(w http.ResponseWriter, r *http.Request) {
	limit, offset := defaultIdeaLimit, 0
	lp, err := intParam(r, "limit")
	if err == nil && lp != nil {
		if *lp < 1 || *lp > maxIdeaLimit {
			err = invalid(field("limit", "must be between 1 and %d", maxIdeaLimit))
		}
		limit = *lp
	}
	var op *int
	if err == nil {
		op, err = intParam(r, "offset")
	}
	if err == nil && op != nil {
		if *op < 0 {
			err = invalid(field("offset", "must not be negative"))
		}
		offset = *op
	}
	onlyUnvalidated := false
	if raw := r.URL.Query().Get("only_unvalidated"); err == nil && raw != "" {
		if onlyUnvalidated, err = strconv.ParseBool(raw); err != nil {
			err = invalid(field("only_unvalidated", "must be true or false"))
		}
	}
	var tags []string
	if err == nil {
		if tags, err = normalizeTags(r.URL.Query()["tags"]); err != nil {
			err = invalid(field("tags", "%v", err))
		}
	}
	if err != nil {
		writeError(w, r, err)
		return
	}

	// The WHERE clause of sqlstore.Ideas.List.
	where := []string{"archived = FALSE"}
	var args []any
	if onlyUnvalidated {
		where = append(where, "manifestation_status <> 'validated'")
	}
	if len(tags) > 0 {
		ph := make([]string, len(tags))
		for k, t := range tags {
			args = append(args, t)
			ph[k] = "$" + strconv.Itoa(k+1)
		}
		where = append(where, `id IN (SELECT idea_id FROM portfolio.idea_tags WHERE tag IN (`+strings.Join(ph, ", ")+
			`) GROUP BY idea_id HAVING COUNT(*) = `+strconv.Itoa(len(tags))+`)`)
	}
	cond := strings.Join(where, " AND ")
	n := len(args)
	page := fmt.Sprintf(` ORDER BY score DESC, id LIMIT $%d OFFSET $%d`, n+1, n+2)
	pageArgs := append(slices.Clone(args), limit, offset)

	b := &pgx.Batch{}
	b.Queue(`SELECT `+ideaColumns+` FROM portfolio.ideas WHERE `+cond+page, pageArgs...)
	b.Queue(`SELECT idea_id, tag FROM portfolio.idea_tags WHERE idea_id IN (SELECT id FROM portfolio.ideas WHERE `+cond+page+
		`) ORDER BY idea_id, tag`, pageArgs...)
	if len(tags) == 0 {
		b.Queue(sqlIdeaTotals)
	} else {
		b.Queue(`SELECT COUNT(*) FROM portfolio.ideas WHERE `+cond, args...)
	}
	b.Queue(sqlIdeaTotals)

	var (
		ideas  []ideaRow
		byIdea map[string][]string
		total  int64
		totals ideaTotals
	)
	err = s.run(r.Context(), b, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("list ideas: %w", err)
		}
		for rows.Next() {
			i, err := scanIdea(rows)
			if err != nil {
				rows.Close()
				return fmt.Errorf("list ideas: %w", err)
			}
			ideas = append(ideas, i)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("list ideas: %w", err)
		}
		if byIdea, err = readTags(br); err != nil {
			return fmt.Errorf("load tags: %w", err)
		}
		if len(tags) == 0 {
			t, err := scanTotals(br.QueryRow())
			if err != nil {
				return fmt.Errorf("read totals: %w", err)
			}
			total = t.ideas
			if onlyUnvalidated {
				total = t.ideas - t.validated
			}
		} else if err := br.QueryRow().Scan(&total); err != nil {
			return fmt.Errorf("count ideas: %w", err)
		}
		if totals, err = scanTotals(br.QueryRow()); err != nil {
			return fmt.Errorf("read totals: %w", err)
		}
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	potential, actual := float64(totals.potential)/1e6, float64(totals.actual)/1e6
	out := listIdeasJSON{
		Ideas: make([]ideaJSON, 0, len(ideas)),
		Summary: ideaSummary{
			TotalIdeas: totals.ideas, ValidatedIdeas: totals.validated, UnvalidatedIdeas: totals.ideas - totals.validated,
			TotalPotentialValue: round6(potential), TotalActualValue: round6(actual), TotalValueGap: round6(potential - actual),
		},
		Pagination: pagination{Limit: limit, Offset: offset, Total: total, HasMore: int64(offset+len(ideas)) < total},
	}
	for _, i := range ideas {
		out.Ideas = append(out.Ideas, ideaOut(i, byIdea[i.ID]))
	}
	writeJSON(w, http.StatusOK, out)
}

// ---------------------------------------------------------------------------
// Agent tasks: shared shapes (services/agent/internal/store/sqlstore/tasks.go
// and handler.toProto).

const taskColumns = `id, direction, task_type, status, model, executor, tier, command, context, idea_id, prompt_variant,
	output, progress_pct, current_step, decision_prompt, error_summary, error_category,
	worker_id, lease_seconds, lease_expires_at, attempts, value_score, resource_cost, duration_seconds,
	created_at, updated_at, started_at, completed_at`

// taskRow is a row of taskColumns.
type taskRow struct {
	ID, Direction, Type, Status, Model, Executor, Tier, Command, Context string
	IdeaID, PromptVariant                                                *string
	Output                                                               string
	ProgressPct                                                          float64
	CurrentStep, DecisionPrompt                                          string
	ErrorSummary, ErrorCategory, WorkerID                                *string
	LeaseSeconds                                                         int
	LeaseExpiresAt                                                       *int64
	Attempts                                                             int
	ValueScore, ResourceCost, Duration                                   *float64
	CreatedAt, UpdatedAt                                                 int64
	StartedAt, CompletedAt                                               *int64
}

func scanTask(row pgx.Row) (taskRow, error) {
	var t taskRow
	err := row.Scan(&t.ID, &t.Direction, &t.Type, &t.Status, &t.Model, &t.Executor, &t.Tier, &t.Command, &t.Context,
		&t.IdeaID, &t.PromptVariant, &t.Output, &t.ProgressPct, &t.CurrentStep, &t.DecisionPrompt, &t.ErrorSummary,
		&t.ErrorCategory, &t.WorkerID, &t.LeaseSeconds, &t.LeaseExpiresAt, &t.Attempts, &t.ValueScore, &t.ResourceCost,
		&t.Duration, &t.CreatedAt, &t.UpdatedAt, &t.StartedAt, &t.CompletedAt)
	return t, err
}

type taskJSON struct {
	ID              string          `json:"id"`
	TaskID          string          `json:"task_id"`
	Direction       string          `json:"direction"`
	TaskType        string          `json:"task_type"`
	Status          string          `json:"status"`
	Model           string          `json:"model"`
	Executor        string          `json:"executor"`
	Command         string          `json:"command"`
	Output          string          `json:"output"`
	ProgressPct     float64         `json:"progress_pct"`
	CurrentStep     string          `json:"current_step"`
	DecisionPrompt  string          `json:"decision_prompt"`
	ErrorSummary    *string         `json:"error_summary"`
	ErrorCategory   *string         `json:"error_category"`
	Context         json.RawMessage `json:"context"`
	WorkerID        *string         `json:"worker_id"`
	PromptVariant   *string         `json:"prompt_variant"`
	ValueScore      *float64        `json:"value_score"`
	ResourceCost    *float64        `json:"resource_cost"`
	DurationSeconds *float64        `json:"duration_seconds"`
	CreatedAt       string          `json:"created_at"`
	UpdatedAt       string          `json:"updated_at"`
	StartedAt       *string         `json:"started_at"`
	CompletedAt     *string         `json:"completed_at"`
	Tier            string          `json:"tier"`
	Attempts        int             `json:"attempts"`
	LeaseExpiresAt  *string         `json:"lease_expires_at"`
}

func taskOut(t taskRow) taskJSON {
	ctx := json.RawMessage(t.Context)
	if !json.Valid(ctx) {
		ctx = json.RawMessage("{}")
	}
	return taskJSON{
		ID: t.ID, TaskID: t.ID, Direction: t.Direction, TaskType: t.Type, Status: t.Status,
		Model: t.Model, Executor: t.Executor, Command: t.Command, Output: t.Output, ProgressPct: t.ProgressPct,
		CurrentStep: t.CurrentStep, DecisionPrompt: t.DecisionPrompt, ErrorSummary: t.ErrorSummary,
		ErrorCategory: t.ErrorCategory, Context: ctx, WorkerID: t.WorkerID, PromptVariant: t.PromptVariant,
		ValueScore: t.ValueScore, ResourceCost: t.ResourceCost, DurationSeconds: t.Duration,
		CreatedAt: rfc3339(fromMicros(t.CreatedAt)), UpdatedAt: rfc3339(fromMicros(t.UpdatedAt)),
		StartedAt: optTime(t.StartedAt), CompletedAt: optTime(t.CompletedAt), Tier: t.Tier, Attempts: t.Attempts,
		LeaseExpiresAt: optTime(t.LeaseExpiresAt),
	}
}

// dayKey is sqlstore's day(): the UTC midnight of t, the daily rows' key.
func dayKey(t time.Time) int64 { return micros(t.UTC().Truncate(24 * time.Hour)) }

const sqlAddCount = `INSERT INTO agent.task_counts (status, task_type, n) VALUES ($1, $2, $3)
	ON CONFLICT (status, task_type) DO UPDATE SET n = task_counts.n + excluded.n`

// ---------------------------------------------------------------------------
// 4. POST /api/agent/tasks
//
// Mirrors agent handler.CreateTask (handler/handler.go) → usecase.App.Create
// (usecase/create.go): validateNew, routing.Default's route of the type, the
// prompt-variant read (sqlstore.Prompts.Arms, when the context names none),
// then one transaction: sqlstore.Tasks.Insert, sqlstore.Stats.AddCounts
// (pending +1) and sqlstore.Stats.AddDaily (created +1). One round trip:
// the arms SELECT, BEGIN, the three writes and COMMIT in one batch.
//
// Deliberate simplification: Foundry chooses a variant by Thompson sampling
// among the arms it read before inserting; in one batch the insert cannot
// wait for that read, so the bare server reads the same rows but stores the
// context's prompt_variant (or none). This is exactly Foundry's result when
// no variant is configured or recorded (the default, and the benchmark's
// database: prompt_variants stays empty unless tasks carry a variant).
// The route is routing.Default's, hard-coded (Foundry's default table).

const (
	maxDirection = 20000
	maxContext   = 64 << 10
	maxIdeaRef   = 200
	maxVariant   = 100
	maxWorkerID  = 200
	maxStep      = 1000
	maxDecision  = 20000

	sqlArms       = `SELECT variant, samples, sum_value, sum_cost, first_zeros FROM agent.prompt_variants ORDER BY variant`
	sqlInsertTask = `INSERT INTO agent.tasks (` + taskColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11,
		$12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $28)`
	sqlAddDaily = `INSERT INTO agent.task_daily (day, task_type, model, executor, created, completed, failed, timed_out,
		duration_sum, value_sum, cost_sum) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (day, task_type, model, executor) DO UPDATE SET
		created = task_daily.created + excluded.created, completed = task_daily.completed + excluded.completed,
		failed = task_daily.failed + excluded.failed, timed_out = task_daily.timed_out + excluded.timed_out,
		duration_sum = task_daily.duration_sum + excluded.duration_sum,
		value_sum = task_daily.value_sum + excluded.value_sum, cost_sum = task_daily.cost_sum + excluded.cost_sum`
)

// taskTypes lists the task types (task.Types).
var taskTypes = []string{"spec", "impl", "test", "review", "heal", "code-review", "merge", "deploy", "verify", "reflect"}

type route struct{ executor, tier, model, template string }

// defaultRoutes is routing.Default() decided for every type.
var defaultRoutes = func() map[string]route {
	claude := map[string]string{"fast": "claude-haiku-4-5", "balanced": "claude-sonnet-4-5", "strong": "claude-opus-4-1"}
	codex := map[string]string{"fast": "gpt-5-mini", "balanced": "gpt-5-codex", "strong": "gpt-5"}
	const claudeCmd, codexCmd = "claude -p {{direction}} --model {{model}}", "codex exec --model {{model}} {{direction}}"
	mk := func(executor, tier string) route {
		if executor == "claude" {
			return route{executor, tier, claude[tier], claudeCmd}
		}
		return route{executor, tier, codex[tier], codexCmd}
	}
	return map[string]route{
		"spec": mk("claude", "strong"), "impl": mk("codex", "balanced"), "test": mk("codex", "balanced"),
		"review": mk("claude", "balanced"), "heal": mk("claude", "balanced"), "code-review": mk("claude", "balanced"),
		"merge": mk("codex", "fast"), "deploy": mk("codex", "fast"), "verify": mk("claude", "fast"),
		"reflect": mk("claude", "strong"),
	}
}()

// command is routing.Command: the template filled, the direction quoted
// as one POSIX shell word.
func command(rt route, id, typ, direction string) string {
	quoted := "'" + strings.ReplaceAll(direction, "'", `'\''`) + "'"
	return strings.NewReplacer("{{direction}}", quoted, "{{model}}", rt.model, "{{task_id}}", id,
		"{{task_type}}", typ, "{{tier}}", rt.tier).Replace(rt.template)
}

type createTaskRequest struct {
	Direction string         `json:"direction"`
	TaskType  string         `json:"task_type"`
	Context   map[string]any `json:"context"`
}

// contextString is usecase.contextString: an optional non-blank string of
// at most maxLen characters.
func contextString(c map[string]any, key string, maxLen int) (string, []fieldError) {
	v, ok := c[key]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	switch {
	case !ok:
		return "", []fieldError{field("context."+key, "must be a string")}
	case strings.TrimSpace(s) == "":
		return "", []fieldError{field("context."+key, "must not be blank")}
	case utf8.RuneCountInString(s) > maxLen:
		return "", []fieldError{field("context."+key, "must be at most %d characters", maxLen)}
	}
	return s, nil
}

func (s *server) createTask(w http.ResponseWriter, r *http.Request) {
	var req createTaskRequest
	if err := decode(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	// usecase.validateNew
	var fields []fieldError
	switch d := strings.TrimSpace(req.Direction); {
	case d == "":
		fields = append(fields, field("direction", "is required"))
	case utf8.RuneCountInString(req.Direction) > maxDirection:
		fields = append(fields, field("direction", "must be at most %d characters", maxDirection))
	}
	if !slices.Contains(taskTypes, req.TaskType) {
		fields = append(fields, field("task_type", "must be one of %s", strings.Join(taskTypes, ", ")))
	}
	c := req.Context
	if c == nil {
		c = map[string]any{}
	}
	ideaID, e := contextString(c, "idea_id", maxIdeaRef)
	fields = append(fields, e...)
	variant, e := contextString(c, "prompt_variant", maxVariant)
	fields = append(fields, e...)
	raw, jerr := json.Marshal(c)
	switch {
	case jerr != nil:
		fields = append(fields, field("context", "must be a JSON object"))
	case len(raw) > maxContext:
		fields = append(fields, field("context", "must be at most %d bytes of JSON", maxContext))
	}
	if err := collect(fields); err != nil {
		writeError(w, r, err)
		return
	}
	rt := defaultRoutes[req.TaskType]

	at := now()
	t := taskRow{
		ID: newID(), Direction: req.Direction, Type: req.TaskType, Status: "pending",
		Model: rt.model, Executor: rt.executor, Tier: rt.tier, Context: string(raw),
		IdeaID: nullString(ideaID), PromptVariant: nullString(variant),
		CreatedAt: micros(at), UpdatedAt: micros(at),
	}
	t.Command = command(rt, t.ID, t.Type, t.Direction)

	b := &pgx.Batch{}
	if variant == "" {
		b.Queue(sqlArms)
	}
	b.Queue("BEGIN")
	b.Queue(sqlInsertTask, t.ID, t.Direction, t.Type, t.Status, t.Model, t.Executor, t.Tier, t.Command, t.Context,
		t.IdeaID, t.PromptVariant, t.Output, t.ProgressPct, t.CurrentStep, t.DecisionPrompt, nil, nil,
		nil, 0, nil, 0, nil, nil, nil, t.CreatedAt, t.UpdatedAt, nil, nil)
	b.Queue(sqlAddCount, t.Status, t.Type, 1)
	b.Queue(sqlAddDaily, dayKey(at), t.Type, t.Model, t.Executor, 1, 0, 0, 0, 0.0, 0.0, 0.0)
	b.Queue("COMMIT")
	err := s.run(r.Context(), b, func(br pgx.BatchResults) error {
		if variant == "" {
			rows, err := br.Query()
			if err != nil {
				return fmt.Errorf("read prompt variants: %w", err)
			}
			for rows.Next() {
				var (
					v                   string
					samples, firstZeros int
					sumValue, sumCost   float64
				)
				if err := rows.Scan(&v, &samples, &sumValue, &sumCost, &firstZeros); err != nil {
					rows.Close()
					return fmt.Errorf("read prompt variants: %w", err)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("read prompt variants: %w", err)
			}
		}
		for range 5 {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("create task: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, taskOut(t))
}

// ---------------------------------------------------------------------------
// 5. PATCH /api/agent/tasks/{id}
//
// Mirrors agent handler.UpdateTask → usecase.App.Update (usecase/update.go):
// Patch.validate, then one transaction: sqlstore.Tasks.Lock (SELECT … FOR
// UPDATE), the rule (usecase.App.apply, task.Claim, finish),
// sqlstore.Tasks.Save and usecase.App.changed: the task_counts deltas and,
// when the task finishes, sqlstore.Stats.AddDaily, AddFinished and
// AddDuration, the prompt A/B outcome (recordOutcome) and the idea outbox
// row (sqlstore.Outbox.Enqueue).
//
// One round trip: BEGIN, Foundry's Lock SELECT, one data-modifying CTE
// statement, COMMIT. Foundry decides the write in Go from the locked row;
// here the CTE's UPDATE carries the rule's precondition in its WHERE (claim:
// status = 'pending'; complete: not finished and not another worker's), the
// patch's optional fields as COALESCE($n, column), and the derived writes
// (counter deltas in (status, type) order, rollups, histogram bucket,
// outcome, outbox row) read the UPDATE's RETURNING, so they happen exactly
// when the task row changed. Go then applies Foundry's rule to the locked
// row to build the answer (or the 409/422) from the same facts. Deliberate
// differences: Save's SET list names only the columns the transition
// changes (the others keep their values, as Foundry rewrites them
// unchanged); the prompt arm's read-modify-write (LockArm + Record +
// SaveArm) is one upsert computing abtest.Arm.Record in SQL; the duration
// bucket (metrics.BucketOf) is computed with SQL's LN; the lease is
// Foundry's default (usecase.DefaultLease, 5 min).
//
// Supported: status "running" with worker_id (the claim, pending →
// running) and status "completed". A repeated claim by the worker that holds
// the task (Foundry's lease renewal) takes one more autocommit UPDATE.
// Other patches (no status, pending, failed, timed_out, needs_decision)
// answer 501: the benchmark does not send them.

const leaseSeconds = 300 // usecase.DefaultLease

const sqlLockTask = `SELECT ` + taskColumns + ` FROM agent.tasks WHERE id = $1 FOR UPDATE`

const sqlClaimTask = `WITH saved AS (
	UPDATE agent.tasks SET status = 'running', output = COALESCE($2, output), progress_pct = COALESCE($3, progress_pct),
		current_step = COALESCE($4, current_step), decision_prompt = COALESCE($5, decision_prompt),
		worker_id = $6, lease_seconds = $7, lease_expires_at = $8, attempts = attempts + 1,
		value_score = COALESCE($9, value_score), resource_cost = COALESCE($10, resource_cost),
		updated_at = $11, started_at = $11
	WHERE id = $1 AND status = 'pending'
	RETURNING task_type)
INSERT INTO agent.task_counts (status, task_type, n)
SELECT d.status, s.task_type, d.n FROM saved s CROSS JOIN (VALUES ('pending', -1), ('running', 1)) AS d (status, n)
ORDER BY d.status
ON CONFLICT (status, task_type) DO UPDATE SET n = task_counts.n + excluded.n`

const sqlCompleteTask = `WITH cur AS (SELECT id, status FROM agent.tasks WHERE id = $1),
saved AS (
	UPDATE agent.tasks t SET status = 'completed', output = COALESCE($2, t.output), progress_pct = COALESCE(CAST($3 AS DOUBLE PRECISION), 100),
		current_step = COALESCE($4, t.current_step), decision_prompt = COALESCE($5, t.decision_prompt),
		worker_id = COALESCE($6, t.worker_id), lease_expires_at = NULL,
		value_score = COALESCE($7, t.value_score), resource_cost = COALESCE($8, t.resource_cost),
		duration_seconds = GREATEST(CAST($9 - COALESCE(t.started_at, t.created_at) AS DOUBLE PRECISION) / 1000000, 0),
		updated_at = $9, completed_at = $9
	FROM cur
	WHERE t.id = cur.id AND cur.status IN ('pending', 'running', 'needs_decision')
		AND NOT (cur.status = 'running' AND CAST($6 AS TEXT) IS NOT NULL AND t.worker_id IS DISTINCT FROM CAST($6 AS TEXT))
	RETURNING t.task_type, t.model, t.executor, t.duration_seconds, t.value_score, t.resource_cost, t.prompt_variant,
		t.idea_id, cur.status AS old_status),
counted AS (
	INSERT INTO agent.task_counts (status, task_type, n)
	SELECT d.status, s.task_type, d.n FROM saved s CROSS JOIN LATERAL (VALUES (s.old_status, -1), ('completed', 1)) AS d (status, n)
	ORDER BY d.status
	ON CONFLICT (status, task_type) DO UPDATE SET n = task_counts.n + excluded.n),
daily AS (
	INSERT INTO agent.task_daily (day, task_type, model, executor, created, completed, failed, timed_out,
		duration_sum, value_sum, cost_sum)
	SELECT CAST($10 AS BIGINT), s.task_type, s.model, s.executor, 0, 1, 0, 0, COALESCE(s.duration_seconds, 0), COALESCE(s.value_score, 0),
		COALESCE(s.resource_cost, 0) FROM saved s
	ON CONFLICT (day, task_type, model, executor) DO UPDATE SET
		created = task_daily.created + excluded.created, completed = task_daily.completed + excluded.completed,
		failed = task_daily.failed + excluded.failed, timed_out = task_daily.timed_out + excluded.timed_out,
		duration_sum = task_daily.duration_sum + excluded.duration_sum,
		value_sum = task_daily.value_sum + excluded.value_sum, cost_sum = task_daily.cost_sum + excluded.cost_sum),
finished AS (
	INSERT INTO agent.task_finished_hourly (hour, completed, failed) SELECT CAST($11 AS BIGINT), 1, 0 FROM saved
	ON CONFLICT (hour) DO UPDATE SET completed = task_finished_hourly.completed + excluded.completed,
		failed = task_finished_hourly.failed + excluded.failed),
durations AS (
	INSERT INTO agent.task_durations (day, bucket, n)
	SELECT CAST($10 AS BIGINT), CASE WHEN s.duration_seconds > 0.001
		THEN GREATEST(1, CAST(CEIL(LN(s.duration_seconds / 0.001) / LN(1.02)) AS INTEGER)) ELSE 0 END, 1
	FROM saved s WHERE s.duration_seconds IS NOT NULL
	ON CONFLICT (day, bucket) DO UPDATE SET n = task_durations.n + 1),
outcome AS (
	INSERT INTO agent.prompt_outcomes (task_id, variant, value_score, resource_cost, created_at)
	SELECT $1, s.prompt_variant, COALESCE(s.value_score, 1), COALESCE(s.resource_cost, 0), $9
	FROM saved s WHERE s.prompt_variant IS NOT NULL
	ON CONFLICT (task_id) DO NOTHING
	RETURNING variant, value_score, resource_cost),
arm AS (
	INSERT INTO agent.prompt_variants (variant, samples, sum_value, sum_cost, first_zeros, updated_at)
	SELECT o.variant, 1, o.value_score, o.resource_cost, CASE WHEN o.value_score = 0 THEN 1 ELSE 0 END, $9 FROM outcome o
	ON CONFLICT (variant) DO UPDATE SET samples = prompt_variants.samples + 1,
		sum_value = prompt_variants.sum_value + excluded.sum_value, sum_cost = prompt_variants.sum_cost + excluded.sum_cost,
		first_zeros = prompt_variants.first_zeros + CASE WHEN prompt_variants.samples < 3 AND excluded.sum_value = 0 THEN 1 ELSE 0 END,
		updated_at = excluded.updated_at),
outbox AS (
	INSERT INTO agent.idea_outbox (task_id, idea_id, task_type, created_at, delivered_at, attempts, last_error, next_attempt_at)
	SELECT $1, s.idea_id, s.task_type, $9, NULL, 0, '', $9 FROM saved s WHERE s.idea_id IS NOT NULL
	ON CONFLICT (task_id) DO NOTHING)
SELECT s.duration_seconds FROM saved s`

// sqlRenewLease is Foundry's Save of a running task renewed by its worker,
// guarded so it writes only while the worker still holds the task.
const sqlRenewLease = `UPDATE agent.tasks SET output = COALESCE($2, output), progress_pct = COALESCE($3, progress_pct),
	current_step = COALESCE($4, current_step), decision_prompt = COALESCE($5, decision_prompt),
	value_score = COALESCE($6, value_score), resource_cost = COALESCE($7, resource_cost),
	lease_expires_at = $8, updated_at = $9
	WHERE id = $1 AND status = 'running' AND worker_id = $10`

type patchRequest struct {
	ID             string   `json:"id"`
	Status         *string  `json:"status"`
	Output         *string  `json:"output"`
	ProgressPct    *float64 `json:"progress_pct"`
	CurrentStep    *string  `json:"current_step"`
	DecisionPrompt *string  `json:"decision_prompt"`
	ErrorSummary   *string  `json:"error_summary"`
	ErrorCategory  *string  `json:"error_category"`
	WorkerID       *string  `json:"worker_id"`
	ValueScore     *float64 `json:"value_score"`
	ResourceCost   *float64 `json:"resource_cost"`
}

var taskStatuses = []string{"pending", "running", "completed", "failed", "timed_out", "needs_decision"}

func finished(status string) bool {
	return status == "completed" || status == "failed" || status == "timed_out"
}

// validate is usecase.Patch.validate.
func (p patchRequest) validate() error {
	if p.Status == nil && p.Output == nil && p.ProgressPct == nil && p.CurrentStep == nil && p.DecisionPrompt == nil &&
		p.ErrorSummary == nil && p.ErrorCategory == nil && p.WorkerID == nil && p.ValueScore == nil && p.ResourceCost == nil {
		return fail(http.StatusBadRequest, "empty update: give at least one field to change")
	}
	var fields []fieldError
	if p.Status != nil && !slices.Contains(taskStatuses, *p.Status) {
		fields = append(fields, field("status", "must be one of pending, running, completed, failed, timed_out, needs_decision"))
	}
	if p.ProgressPct != nil && (math.IsNaN(*p.ProgressPct) || *p.ProgressPct < 0 || *p.ProgressPct > 100) {
		fields = append(fields, field("progress_pct", "must be between 0 and 100"))
	}
	for _, m := range []struct {
		name string
		v    *float64
	}{{"value_score", p.ValueScore}, {"resource_cost", p.ResourceCost}} {
		if m.v != nil && (math.IsNaN(*m.v) || math.IsInf(*m.v, 0) || *m.v < 0) {
			fields = append(fields, field(m.name, "must be a number at least 0"))
		}
	}
	if c := p.ErrorCategory; c != nil && *c != "" && !slices.Contains(
		[]string{"timeout", "executor_crash", "provider_error", "validation_failure", "unknown"}, *c) {
		fields = append(fields, field("error_category",
			"must be one of timeout, executor_crash, provider_error, validation_failure, unknown"))
	}
	if p.WorkerID != nil {
		switch w := strings.TrimSpace(*p.WorkerID); {
		case w == "":
			fields = append(fields, field("worker_id", "must not be blank"))
		case utf8.RuneCountInString(w) > maxWorkerID:
			fields = append(fields, field("worker_id", "must be at most %d characters", maxWorkerID))
		}
	}
	if p.CurrentStep != nil && utf8.RuneCountInString(*p.CurrentStep) > maxStep {
		fields = append(fields, field("current_step", "must be at most %d characters", maxStep))
	}
	if p.DecisionPrompt != nil && utf8.RuneCountInString(*p.DecisionPrompt) > maxDecision {
		fields = append(fields, field("decision_prompt", "must be at most %d characters", maxDecision))
	}
	return collect(fields)
}

// unchanged is usecase.Patch.unchanged: every field the patch names already
// has its value (a repeated PATCH of a finished task).
func (p patchRequest) unchanged(t taskRow) bool {
	eqS := func(v *string, cur string) bool { return v == nil || *v == cur }
	eqF := func(v *float64, cur float64) bool { return v == nil || *v == cur }
	eqP := func(v, cur *float64) bool { return v == nil || (cur != nil && *v == *cur) }
	worker := p.WorkerID
	if worker != nil {
		w := strings.TrimSpace(*worker)
		worker = &w
	}
	return eqS(p.Status, t.Status) && eqS(p.Output, t.Output) && eqF(p.ProgressPct, t.ProgressPct) &&
		eqS(p.CurrentStep, t.CurrentStep) && eqS(p.DecisionPrompt, t.DecisionPrompt) &&
		eqS(p.ErrorSummary, deref(t.ErrorSummary)) && eqS(p.ErrorCategory, deref(t.ErrorCategory)) &&
		eqS(worker, deref(t.WorkerID)) && eqP(p.ValueScore, t.ValueScore) && eqP(p.ResourceCost, t.ResourceCost)
}

// write says which statement a patch's outcome needs.
type write int

const (
	writeNone write = iota
	writeClaim
	writeComplete
	writeRenew
)

// apply is usecase.App.apply for the claim and the completion: cur changed
// by p at at, which write it takes, or why not.
func (p patchRequest) apply(cur taskRow, at time.Time) (taskRow, write, error) {
	if finished(cur.Status) {
		if p.unchanged(cur) {
			return cur, writeNone, nil
		}
		return cur, writeNone, fail(http.StatusConflict, "task %s is %s: a finished task does not change", cur.ID, cur.Status)
	}
	target := *p.Status
	worker := ""
	if p.WorkerID != nil {
		worker = strings.TrimSpace(*p.WorkerID)
	}
	if cur.Status == "running" && p.WorkerID != nil && worker != deref(cur.WorkerID) {
		return cur, writeNone, fail(http.StatusConflict, "task already claimed by another worker")
	}
	if p.ErrorSummary != nil || p.ErrorCategory != nil {
		return cur, writeNone, invalid(field("error_summary", "is set only when the task fails or times out (status failed or timed_out)"))
	}
	next := cur
	if p.Output != nil {
		next.Output = *p.Output
	}
	if p.ProgressPct != nil {
		next.ProgressPct = *p.ProgressPct
	}
	if p.CurrentStep != nil {
		next.CurrentStep = *p.CurrentStep
	}
	if p.DecisionPrompt != nil {
		next.DecisionPrompt = *p.DecisionPrompt
	}
	if p.ValueScore != nil {
		next.ValueScore = p.ValueScore
	}
	if p.ResourceCost != nil {
		next.ResourceCost = p.ResourceCost
	}
	us := micros(at)
	w := writeNone
	switch target {
	case "running": // task.Claim, then claimed()
		switch {
		case worker == "":
			return cur, writeNone, invalid(field("worker_id", "is required to move a task to running"))
		case cur.Status == "running": // the same worker: a renewal
			w = writeRenew
		case cur.Status != "pending":
			return cur, writeNone, fail(http.StatusConflict, "a %s task cannot be claimed", cur.Status)
		default:
			w = writeClaim
			next.WorkerID = &worker
			next.Attempts++
			next.StartedAt = &us
			next.LeaseSeconds = leaseSeconds
		}
		lease := int64(next.LeaseSeconds)
		if lease <= 0 {
			lease = leaseSeconds
		}
		exp := us + lease*microScale
		next.LeaseExpiresAt = &exp
	case "completed": // finish()
		w = writeComplete
		if p.WorkerID != nil {
			next.WorkerID = &worker
		}
		if p.ProgressPct == nil {
			next.ProgressPct = 100
		}
		start := cur.CreatedAt
		if cur.StartedAt != nil {
			start = *cur.StartedAt
		}
		d := float64(max(us-start, 0)) / microScale
		next.Duration = &d
		next.CompletedAt = &us
		next.LeaseExpiresAt = nil
	}
	next.Status = target
	next.UpdatedAt = us
	return next, w, nil
}

func (s *server) updateTask(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	var p patchRequest
	if err := decode(w, r, &p); err != nil {
		writeError(w, r, err)
		return
	}
	if err := p.validate(); err != nil {
		writeError(w, r, err)
		return
	}
	if p.Status == nil || (*p.Status != "running" && *p.Status != "completed") {
		writeError(w, r, fail(http.StatusNotImplemented,
			"the bare baseline implements only status running (claim) and completed"))
		return
	}
	at := now()
	us := micros(at)
	var worker *string
	if p.WorkerID != nil {
		wk := strings.TrimSpace(*p.WorkerID)
		worker = &wk
	}
	// The write is queued only when the request itself allows it; otherwise
	// the rule refuses it whatever the row says (as apply would) and the
	// batch only reads the row.
	kind := writeNone
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(sqlLockTask, id)
	if p.ErrorSummary == nil && p.ErrorCategory == nil {
		switch {
		case *p.Status == "running" && worker != nil:
			kind = writeClaim
			b.Queue(sqlClaimTask, id, p.Output, p.ProgressPct, p.CurrentStep, p.DecisionPrompt, *worker, leaseSeconds,
				us+leaseSeconds*microScale, p.ValueScore, p.ResourceCost, us)
		case *p.Status == "completed":
			kind = writeComplete
			b.Queue(sqlCompleteTask, id, p.Output, p.ProgressPct, p.CurrentStep, p.DecisionPrompt, worker,
				p.ValueScore, p.ResourceCost, us, dayKey(at), micros(at.Truncate(time.Hour)))
		}
	}
	b.Queue("COMMIT")

	var (
		cur      taskRow
		found    bool
		written  bool
		duration *float64
	)
	err := s.run(r.Context(), b, func(br pgx.BatchResults) error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		var err error
		cur, err = scanTask(br.QueryRow())
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("read task %s: %w", id, err)
		default:
			found = true
		}
		switch kind {
		case writeClaim:
			tag, err := br.Exec()
			if err != nil {
				return fmt.Errorf("update task %s: %w", id, err)
			}
			written = tag.RowsAffected() > 0
		case writeComplete:
			rows, err := br.Query()
			if err != nil {
				return fmt.Errorf("update task %s: %w", id, err)
			}
			for rows.Next() {
				written = true
				if err := rows.Scan(&duration); err != nil {
					rows.Close()
					return fmt.Errorf("update task %s: %w", id, err)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("update task %s: %w", id, err)
			}
		}
		_, err = br.Exec()
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !found {
		writeError(w, r, fail(http.StatusNotFound, "task %s not found", id))
		return
	}
	next, want, err := p.apply(cur, at)
	switch {
	case err != nil && written:
		err = fmt.Errorf("task %s: the rule refused a write the database made", id)
	case err == nil && want == writeRenew:
		_, err = s.pool.Exec(r.Context(), sqlRenewLease, id, p.Output, p.ProgressPct, p.CurrentStep, p.DecisionPrompt,
			p.ValueScore, p.ResourceCost, *next.LeaseExpiresAt, next.UpdatedAt, *worker)
	case err == nil && want != writeNone && (want != kind || !written):
		err = fmt.Errorf("task %s: the %s task was not written", id, cur.Status)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	if want == writeComplete && duration != nil {
		next.Duration = duration // the stored value
	}
	writeJSON(w, http.StatusOK, taskOut(next))
}

// ---------------------------------------------------------------------------
// 6. GET /api/agent/pipeline-status
//
// Mirrors agent handler.GetPipelineStatus → usecase.App.PipelineStatus
// (usecase/report.go): sqlstore.Stats.Counts, sqlstore.Tasks.OldestPending,
// sqlstore.Tasks.LastFinished(3) and sqlstore.Stats.FinishedSince(the 7-day
// window rounded down to the hour), judged by attention.Judge with
// attention.Defaults. One round trip: the four reads in one batch (Foundry
// sends them one after the other on the pool).

const (
	sqlCounts        = `SELECT status, task_type, n FROM agent.task_counts WHERE n <> 0 ORDER BY status, task_type`
	sqlOldestPending = `SELECT created_at FROM agent.tasks WHERE status = 'pending' ORDER BY created_at, id LIMIT 1`
	sqlLastFinished  = `SELECT status FROM agent.tasks WHERE completed_at IS NOT NULL
		ORDER BY completed_at DESC, id DESC LIMIT $1`
	sqlFinishedSince = `SELECT CAST(COALESCE(SUM(completed), 0) AS BIGINT), CAST(COALESCE(SUM(failed), 0) AS BIGINT)
		FROM agent.task_finished_hourly WHERE hour >= $1`

	// attention.Defaults
	stuckAfter     = 10 * time.Minute
	failureStreak  = 3
	successWindow  = 7 * 24 * time.Hour
	minTasks       = 10
	minSuccessRate = 0.8
)

type attentionJSON struct {
	Stuck            bool     `json:"stuck"`
	RepeatedFailures bool     `json:"repeated_failures"`
	LowSuccessRate   bool     `json:"low_success_rate"`
	Flags            []string `json:"flags"`
}

type pipelineJSON struct {
	Pending               int64         `json:"pending"`
	Running               int64         `json:"running"`
	Completed             int64         `json:"completed"`
	Failed                int64         `json:"failed"`
	NeedsDecision         int64         `json:"needs_decision"`
	TimedOut              int64         `json:"timed_out"`
	Total                 int64         `json:"total"`
	LongestPendingSeconds *float64      `json:"longest_pending_seconds"`
	SuccessRate           *float64      `json:"success_rate"`
	Attention             attentionJSON `json:"attention"`
	GeneratedAt           string        `json:"generated_at"`
}

func (s *server) pipelineStatus(w http.ResponseWriter, r *http.Request) {
	at := now()
	b := &pgx.Batch{}
	b.Queue(sqlCounts)
	b.Queue(sqlOldestPending)
	b.Queue(sqlLastFinished, failureStreak)
	b.Queue(sqlFinishedSince, micros(at.Add(-successWindow).Truncate(time.Hour)))

	byStatus := map[string]int64{}
	var (
		total                    int64
		oldest                   *int64
		lastFailed               []bool
		windowDone, windowFailed int64
	)
	err := s.run(r.Context(), b, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("read task counts: %w", err)
		}
		for rows.Next() {
			var (
				status, typ string
				n           int64
			)
			if err := rows.Scan(&status, &typ, &n); err != nil {
				rows.Close()
				return fmt.Errorf("read task counts: %w", err)
			}
			byStatus[status] += n
			total += n
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read task counts: %w", err)
		}
		var us int64
		switch err := br.QueryRow().Scan(&us); {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("oldest pending task: %w", err)
		default:
			oldest = &us
		}
		if rows, err = br.Query(); err != nil {
			return fmt.Errorf("last finished tasks: %w", err)
		}
		for rows.Next() {
			var st string
			if err := rows.Scan(&st); err != nil {
				rows.Close()
				return fmt.Errorf("last finished tasks: %w", err)
			}
			lastFailed = append(lastFailed, st == "failed" || st == "timed_out")
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("last finished tasks: %w", err)
		}
		if err := br.QueryRow().Scan(&windowDone, &windowFailed); err != nil {
			return fmt.Errorf("read finished counts: %w", err)
		}
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}

	// attention.Judge
	out := pipelineJSON{
		Pending: byStatus["pending"], Running: byStatus["running"], Completed: byStatus["completed"],
		Failed: byStatus["failed"], NeedsDecision: byStatus["needs_decision"], TimedOut: byStatus["timed_out"],
		Total: total, Attention: attentionJSON{Flags: []string{}}, GeneratedAt: rfc3339(at),
	}
	var wait time.Duration
	if out.Pending > 0 && oldest != nil {
		wait = max(at.Sub(fromMicros(*oldest)), 0)
	}
	if out.Pending > 0 && out.Running == 0 && wait > stuckAfter {
		out.Attention.Stuck = true
		out.Attention.Flags = append(out.Attention.Flags, "stuck")
	}
	if len(lastFailed) >= failureStreak && !slices.Contains(lastFailed[:failureStreak], false) {
		out.Attention.RepeatedFailures = true
		out.Attention.Flags = append(out.Attention.Flags, "repeated_failures")
	}
	if n := windowDone + windowFailed; n >= minTasks && n > 0 && float64(windowDone)/float64(n) < minSuccessRate {
		out.Attention.LowSuccessRate = true
		out.Attention.Flags = append(out.Attention.Flags, "low_success_rate")
	}
	if oldest != nil {
		sec := wait.Seconds()
		out.LongestPendingSeconds = &sec
	}
	if n := windowDone + windowFailed; n > 0 {
		rate := float64(windowDone) / float64(n)
		out.SuccessRate = &rate
	}
	writeJSON(w, http.StatusOK, out)
}

// ---------------------------------------------------------------------------
// 7. GET /api/agent/metrics
//
// Mirrors agent handler.GetMetrics → usecase.App.Metrics (usecase/report.go)
// with usecase.App.windowSums (usecase/window.go): sqlstore.Stats.
// DurationsBetween (the duration histogram) and sqlstore.Stats.DailyBetween
// (the rollup by route) over the window, and, when the histogram counts at
// most usecase.DefaultExactSample (1000) durations, sqlstore.Tasks.Durations
// for exact percentiles. One round trip: three statements in one batch; the
// durations read is conditional in SQL (its WHERE compares the histogram's
// sum with 1000, an uncorrelated subquery the planner evaluates once) since
// the batch cannot wait for the histogram.
//
// Deliberately MORE work than Foundry: Foundry caches the closed days' sums
// (closedDays) and reads only the open day(s) on each report; the bare
// server has no cache and reads the whole window, [since, far), every time,
// with the same two statements Foundry uses for each part.

const (
	defaultWindowDays = 7
	maxWindowDays     = 365
	exactSample       = 1000
	closingGrace      = 10 * time.Minute

	sqlDurationsBetween = `SELECT bucket, CAST(SUM(n) AS BIGINT) FROM agent.task_durations WHERE day >= $1 AND day < $2
		GROUP BY bucket ORDER BY bucket`
	sqlDailyBetween = `SELECT task_type, model, executor, CAST(SUM(created) AS BIGINT), CAST(SUM(completed) AS BIGINT),
		CAST(SUM(failed) AS BIGINT), CAST(SUM(timed_out) AS BIGINT), SUM(duration_sum), SUM(value_sum), SUM(cost_sum)
		FROM agent.task_daily WHERE day >= $1 AND day < $2 GROUP BY task_type, model, executor ORDER BY task_type, model, executor`
	sqlExactDurations = `SELECT duration_seconds FROM agent.tasks
		WHERE completed_at IS NOT NULL AND completed_at >= $1
			AND (SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM agent.task_durations WHERE day >= $1 AND day < $3) <= $2
		ORDER BY completed_at DESC, id DESC LIMIT $2`
)

type bucket struct {
	index int
	n     int64
}

// The histogram's scheme (metrics.HistogramFloor, HistogramGrowth).
const (
	histFloor  = 0.001
	histGrowth = 1.02
)

// bucketBounds is metrics.BucketBounds.
func bucketBounds(b int) (lo, hi float64) {
	if b <= 0 {
		return 0, histFloor
	}
	lo = histFloor * math.Pow(histGrowth, float64(b-1))
	return lo, lo * histGrowth
}

// rankValue is metrics.rankValue: the k-th smallest duration's estimate.
func rankValue(buckets []bucket, k int64) float64 {
	var seen int64
	for _, b := range buckets {
		if b.n <= 0 {
			continue
		}
		if k < seen+b.n {
			lo, hi := bucketBounds(b.index)
			return lo + (hi-lo)*(float64(k-seen)+0.5)/float64(b.n)
		}
		seen += b.n
	}
	_, hi := bucketBounds(buckets[len(buckets)-1].index)
	return hi
}

// histogramPercentile is metrics.HistogramPercentile.
func histogramPercentile(buckets []bucket, p float64) float64 {
	var n int64
	for _, b := range buckets {
		n += max(b.n, 0)
	}
	r := p / 100 * float64(n-1)
	lo, hi := int64(math.Floor(r)), int64(math.Ceil(r))
	vlo := rankValue(buckets, lo)
	if lo == hi {
		return vlo
	}
	return vlo + (rankValue(buckets, hi)-vlo)*(r-float64(lo))
}

// percentileSorted is metrics.PercentileSorted.
func percentileSorted(s []float64, p float64) float64 {
	r := p / 100 * float64(len(s)-1)
	lo, hi := int(math.Floor(r)), int(math.Ceil(r))
	if lo == hi {
		return s[lo]
	}
	return s[lo] + (s[hi]-s[lo])*(r-float64(lo))
}

type rateJSON struct {
	Completed int64   `json:"completed"`
	Failed    int64   `json:"failed"`
	Rate      float64 `json:"rate"`
}

func (r *rateJSON) add(completed, failed int64) {
	r.Completed += completed
	r.Failed += failed
	r.Rate = 0
	if t := r.Completed + r.Failed; t > 0 {
		r.Rate = float64(r.Completed) / float64(t)
	}
}

type metricsJSON struct {
	ExecutionTime struct {
		P50Seconds  *float64 `json:"p50_seconds"`
		P95Seconds  *float64 `json:"p95_seconds"`
		SampleCount int      `json:"sample_count"`
		Exact       bool     `json:"exact"`
	} `json:"execution_time"`
	SuccessRate struct {
		Overall    rateJSON             `json:"overall"`
		ByTaskType map[string]*rateJSON `json:"by_task_type"`
		ByModel    map[string]*rateJSON `json:"by_model"`
		ByExecutor map[string]*rateJSON `json:"by_executor"`
	} `json:"success_rate"`
	Usage struct {
		TasksCreated         int64            `json:"tasks_created"`
		TasksFinished        int64            `json:"tasks_finished"`
		TotalDurationSeconds float64          `json:"total_duration_seconds"`
		TotalResourceCost    float64          `json:"total_resource_cost"`
		TotalValueScore      float64          `json:"total_value_score"`
		TasksByModel         map[string]int64 `json:"tasks_by_model"`
		TasksByExecutor      map[string]int64 `json:"tasks_by_executor"`
	} `json:"usage"`
	WindowDays  int    `json:"window_days"`
	WindowStart string `json:"window_start"`
}

func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	days := defaultWindowDays
	wp, err := intParam(r, "window_days")
	if err == nil && wp != nil {
		if *wp < 1 || *wp > maxWindowDays {
			err = invalid(field("window_days", "must be between 1 and %d", maxWindowDays))
		}
		days = *wp
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	at := now()
	since := at.UTC().Truncate(24*time.Hour).AddDate(0, 0, -days) // metricsSince
	until := at.UTC().Add(-closingGrace).Truncate(24 * time.Hour) // closedUntil
	if until.Before(since) {
		until = since
	}
	far := until.AddDate(1, 0, 0) // past any open day, as windowSums reads
	b := &pgx.Batch{}
	b.Queue(sqlDurationsBetween, micros(since), micros(far))
	b.Queue(sqlDailyBetween, micros(since), micros(far))
	b.Queue(sqlExactDurations, micros(since), exactSample, micros(far))

	var out metricsJSON
	out.WindowDays, out.WindowStart = days, rfc3339(since)
	sr, u := &out.SuccessRate, &out.Usage
	sr.ByTaskType, sr.ByModel, sr.ByExecutor = map[string]*rateJSON{}, map[string]*rateJSON{}, map[string]*rateJSON{}
	u.TasksByModel, u.TasksByExecutor = map[string]int64{}, map[string]int64{}
	var (
		hist      []bucket
		durations []float64
	)
	err = s.run(r.Context(), b, func(br pgx.BatchResults) error {
		rows, err := br.Query()
		if err != nil {
			return fmt.Errorf("read the duration histogram: %w", err)
		}
		for rows.Next() {
			var bk bucket
			if err := rows.Scan(&bk.index, &bk.n); err != nil {
				rows.Close()
				return fmt.Errorf("read the duration histogram: %w", err)
			}
			hist = append(hist, bk)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read the duration histogram: %w", err)
		}
		if rows, err = br.Query(); err != nil {
			return fmt.Errorf("read task rollup: %w", err)
		}
		rate := func(m map[string]*rateJSON, key string, completed, failed int64) {
			if m[key] == nil {
				m[key] = &rateJSON{}
			}
			m[key].add(completed, failed)
		}
		for rows.Next() {
			var (
				typ, model, executor                 string
				created, completed, failed, timedOut int64
				durationSum, valueSum, costSum       float64
			)
			if err := rows.Scan(&typ, &model, &executor, &created, &completed, &failed, &timedOut,
				&durationSum, &valueSum, &costSum); err != nil {
				rows.Close()
				return fmt.Errorf("read task rollup: %w", err)
			}
			sr.Overall.add(completed, failed+timedOut)
			if completed+failed+timedOut > 0 {
				rate(sr.ByTaskType, typ, completed, failed+timedOut)
				rate(sr.ByModel, model, completed, failed+timedOut)
				rate(sr.ByExecutor, executor, completed, failed+timedOut)
			}
			u.TasksCreated += created
			u.TasksFinished += completed + failed + timedOut
			u.TotalDurationSeconds += durationSum
			u.TotalResourceCost += costSum
			u.TotalValueScore += valueSum
			if created > 0 {
				u.TasksByModel[model] += created
				u.TasksByExecutor[executor] += created
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read task rollup: %w", err)
		}
		if rows, err = br.Query(); err != nil {
			return fmt.Errorf("durations of finished tasks: %w", err)
		}
		for rows.Next() {
			var d *float64
			if err := rows.Scan(&d); err != nil {
				rows.Close()
				return fmt.Errorf("durations of finished tasks: %w", err)
			}
			if d != nil {
				durations = append(durations, *d)
			}
		}
		rows.Close()
		return rows.Err()
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	// usecase.App.percentiles
	var n int64
	for _, bk := range hist {
		n += bk.n
	}
	et := &out.ExecutionTime
	switch {
	case n == 0:
	case n <= exactSample && len(durations) > 0:
		slices.Sort(durations)
		p50, p95 := percentileSorted(durations, 50), percentileSorted(durations, 95)
		et.P50Seconds, et.P95Seconds, et.SampleCount, et.Exact = &p50, &p95, len(durations), true
	default:
		p50, p95 := histogramPercentile(hist, 50), histogramPercentile(hist, 95)
		et.P50Seconds, et.P95Seconds, et.SampleCount = &p50, &p95, int(n)
	}
	writeJSON(w, http.StatusOK, out)
}

// ---------------------------------------------------------------------------
// 8. POST /api/cc/stake (and POST /api/ideas/{idea_id}/stake)
//
// Mirrors ledger handler.Stake (handler/credit.go: positive, owner →
// authenticate → sqlstore.Identity.SessionByTokenHash, idem) →
// usecase.App.Stake (usecase/money.go): the idea from the portfolio (over
// gRPC in Foundry, which runs the portfolio's sqlstore.Ideas.Get: the idea
// row and its tags; the bare server runs that SELECT on portfolio.ideas
// directly), then the stake's transaction [with an Idempotency-Key: the
// idempotency_keys read first and the record saved last]: the ledger's mode
// lock taken shared (a freeze takes it exclusively), the economy's mode,
// then the contributor's two accounts in descending account-name order (the
// staked one upserted, then the available one debited only when it holds
// the amount: Apply's order, which an unstake's lock of the staked account
// shares), the
// entry (audit_seq 0), its two lines and its audit entry queued in
// ledger.audit_queue. No stake reads or writes the economy row, so stakes
// from different contributors do not wait for each other.
//
// Two round trips: round trip 1 is the session, the idea, BEGIN, [the
// idempotency read,] and every statement of the transaction. Go then checks
// the session, the owner, the idea, [the key,] the mode and the debit's row;
// round trip 2 is [the idempotency record and] COMMIT, or on a refusal the
// ROLLBACK that release sends. The writes need no result in Go, but COMMIT
// must wait for the checks.
//
// Deliberate difference: Foundry authenticates and reads the idea before it
// opens the transaction, and checks the mode and the debit before the next
// write; here the writes share round trip 1 with those reads and a refused
// stake's are rolled back: the same answer and the same database, the
// contributor's rows held for one round trip more on a refusal. A
// concurrent request that saved the same Idempotency-Key first makes the
// record's INSERT fail: as idempotency.Runner does, the transaction is
// rolled back and the stored answer replayed.
// dry_run is one round trip of reads (the idea, the contributor twice, the
// balances, the due cooling lots, the positions), as Foundry's dry run.

// minMovementMicros is credit.MinMovement: the least CC one movement may
// move (0.01 CC).
const minMovementMicros = microScale / 100

// checkMovement is usecase.checkMovement: an idea id that is not blank and
// at least credit.MinMovement, checked after the request's fields (and,
// for a stake that is not a dry run, after the caller's refusal).
func checkMovement(amount int64, ideaID string) error {
	var fields []fieldError
	if strings.TrimSpace(ideaID) == "" {
		fields = append(fields, field("idea_id", "is required"))
	}
	if amount < minMovementMicros {
		fields = append(fields, field("amount_cc", "must be at least 0.01 (the least CC one movement may move)"))
	}
	return collect(fields)
}

// modeLockClass is the ledger's sqlstore modeLockClass; keep equal. The
// lock's second key is the hash of the ledger's schema, as the ledger
// takes it (its search_path is its schema; bare's tables are qualified).
const modeLockClass int32 = 0x466f756d

const (
	maxCCMicros = 1_000_000_000 * microScale // handler maxCC
	maxIdemKey  = 200
	sqlSession  = `SELECT s.token_hash, s.created_at, s.expires_at, c.id, c.handle, c.trust_level, c.created_at
		FROM ledger.sessions s JOIN ledger.contributors c ON c.id = s.contributor_id
		WHERE s.token_hash = $1`
	sqlContributor = `SELECT id, handle, trust_level, created_at FROM ledger.contributors WHERE id = $1`
	sqlDueCooling  = `SELECT id, idea_id, amount, available_at, entry_id, created_at FROM ledger.cc_cooling
		WHERE contributor_id = $1 AND released_entry_id IS NULL AND available_at <= $2
		ORDER BY available_at, id`
	sqlIdempotency = `SELECT scope, key, request_hash, response, created_at FROM ledger.idempotency_keys
		WHERE scope = $1 AND key = $2`
	sqlSaveIdempotency = `INSERT INTO ledger.idempotency_keys (scope, key, request_hash, response, created_at)
		VALUES ($1, $2, $3, $4, $5)`
	sqlModeLock       = `SELECT pg_advisory_xact_lock_shared($1, hashtext('ledger'))`
	sqlMode           = `SELECT mode FROM ledger.economy WHERE id = 1`
	sqlDebitAvailable = `UPDATE ledger.cc_accounts SET balance = balance - $2 WHERE account = $1 AND balance >= $2
		RETURNING balance`
	sqlCreditStaked = `INSERT INTO ledger.cc_accounts (account, bucket, contributor_id, idea_id, balance)
		VALUES ($1, 'staked', $2, $3, $4)
		ON CONFLICT (account) DO UPDATE SET balance = ledger.cc_accounts.balance + excluded.balance RETURNING balance`
	sqlStakeEntry = `INSERT INTO ledger.cc_entries (id, kind, contributor_id, idea_id, amount, audit_seq, created_at)
		VALUES ($1, 'stake', $2, $3, $4, 0, $5)`
	sqlStakeLines = `INSERT INTO ledger.cc_lines (entry_id, account, bucket, contributor_id, idea_id, delta)
		VALUES ($1, $2, 'available', $3, NULL, $4), ($1, $5, 'staked', $3, $6, $7)`
	sqlQueueAudit = `INSERT INTO ledger.audit_queue (id, entry_id, kind, at, actor, subject, amount, attrs)
		VALUES ($1, $2, 'stake', $3, $4, $4, $5, $6)`
	sqlBalances = `SELECT bucket, COALESCE(SUM(balance), 0) FROM ledger.cc_accounts
		WHERE contributor_id = $1 GROUP BY bucket`
	sqlPositions = `SELECT a.idea_id, a.balance,
			(SELECT MIN(e.created_at) FROM ledger.cc_lines l JOIN ledger.cc_entries e ON e.id = l.entry_id WHERE l.account = a.account)
		FROM ledger.cc_accounts a
		WHERE a.contributor_id = $1 AND a.bucket = 'staked' AND a.balance > 0
		ORDER BY a.balance DESC, a.idea_id`
)

// nameEscaper is credit's: a stake's contributor has '%' and ':' escaped.
var nameEscaper = strings.NewReplacer("%", "%25", ":", "%3A")

// availableAccount and stakedAccount are credit.Account.Name of
// credit.Available(contributor) and credit.Staked(contributor, idea).
func availableAccount(contributor string) string { return "available:" + contributor }

func stakedAccount(contributor, idea string) string {
	return "staked:" + nameEscaper.Replace(contributor) + ":" + idea
}

// --- the stake ---------------------------------------------------------------

type stakeRequest struct {
	ContributorID string  `json:"contributor_id"`
	IdeaID        string  `json:"idea_id"`
	AmountCC      float64 `json:"amount_cc"`
	DryRun        bool    `json:"dry_run"`
}

type projection struct {
	LowMultiplier  float64
	HighMultiplier float64
	StageUnlockPct float64
}

// stakeResult is usecase.StakeResult, field for field: its JSON is what an
// Idempotency-Key stores, so a replay decodes Foundry's records too.
type stakeResult struct {
	DryRun         bool
	ContributorID  string
	IdeaID         string
	AmountCC       int64
	PositionCC     int64
	AvailableAfter int64
	Projection     projection
	Stage          string
	CreatedAt      time.Time
}

type stakeJSON struct {
	DryRun           bool    `json:"dry_run"`
	ContributorID    string  `json:"contributor_id"`
	IdeaID           string  `json:"idea_id"`
	AmountCC         float64 `json:"amount_cc"`
	PositionCC       float64 `json:"position_cc"`
	AvailableCCAfter float64 `json:"available_cc_after"`
	Stage            string  `json:"stage"`
	Projection       struct {
		LowMultiplier  float64 `json:"low_multiplier"`
		HighMultiplier float64 `json:"high_multiplier"`
		StageUnlockPct float64 `json:"stage_unlock_pct"`
	} `json:"projection"`
}

// stageProjections and project are credit.Project.
var stageProjections = map[string]projection{
	"none":         {0.5, 3.0, 0},
	"specced":      {0.6, 2.6, 0.2},
	"implementing": {0.7, 2.2, 0.4},
	"testing":      {0.8, 1.8, 0.6},
	"reviewing":    {0.9, 1.5, 0.8},
	"complete":     {1.0, 1.2, 1},
}

func project(stage string, coherence float64) projection {
	p, ok := stageProjections[stage]
	if !ok {
		p = stageProjections["none"]
	}
	coherence = min(max(coherence, 0), 1)
	if up := p.HighMultiplier - 1; up > 0 {
		x := (1 + up*2*coherence) * 10_000
		p.HighMultiplier = float64(int64(x+0.5)) / 10_000
	}
	p.HighMultiplier = max(p.HighMultiplier, p.LowMultiplier)
	return p
}

// stakeRequestHash is handler.idem's request hash: SHA-256 of the
// StakeRequest's deterministic protobuf encoding (fields 1..4, zero values
// left out), written by hand.
func stakeRequestHash(req stakeRequest) string {
	var b []byte
	str := func(tag byte, s string) {
		if s != "" {
			b = append(b, tag)
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	str(0x0a, req.ContributorID)
	str(0x12, req.IdeaID)
	if bits := math.Float64bits(req.AmountCC); bits != 0 {
		b = append(b, 0x19)
		b = binary.LittleEndian.AppendUint64(b, bits)
	}
	if req.DryRun {
		b = append(b, 0x20, 0x01)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// bearerToken is rpcmeta.BearerToken.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func (res stakeResult) json() stakeJSON {
	out := stakeJSON{DryRun: res.DryRun, ContributorID: res.ContributorID, IdeaID: res.IdeaID,
		AmountCC: microsFloat(res.AmountCC), PositionCC: microsFloat(res.PositionCC),
		AvailableCCAfter: microsFloat(res.AvailableAfter), Stage: res.Stage}
	out.Projection.LowMultiplier = res.Projection.LowMultiplier
	out.Projection.HighMultiplier = res.Projection.HighMultiplier
	out.Projection.StageUnlockPct = res.Projection.StageUnlockPct
	return out
}

type coolingLot struct {
	id, ideaID string
	amount     int64
}

// readRows drains one result of the batch, scanning each row with scan.
func readRows(br pgx.BatchResults, scan func(pgx.Rows) error) error {
	rows, err := br.Query()
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// readBalances is sqlstore.Credit.Balances' rows: available, staked, cooling.
func readBalances(br pgx.BatchResults) (available, staked, cooling int64, err error) {
	err = readRows(br, func(rows pgx.Rows) error {
		var (
			bucket string
			sum    int64
		)
		if err := rows.Scan(&bucket, &sum); err != nil {
			return err
		}
		switch bucket {
		case "available":
			available = sum
		case "staked":
			staked = sum
		case "cooling":
			cooling = sum
		}
		return nil
	})
	return available, staked, cooling, err
}

// readPosition is usecase.App.positionOn over sqlstore.Credit.Positions' rows.
func readPosition(br pgx.BatchResults, ideaID string) (int64, error) {
	var position int64
	err := readRows(br, func(rows pgx.Rows) error {
		var (
			idea   string
			amount int64
			since  *int64
		)
		if err := rows.Scan(&idea, &amount, &since); err != nil {
			return err
		}
		if idea == ideaID {
			position = amount
		}
		return nil
	})
	return position, err
}

// readCooling is sqlstore.Credit.DueCooling's rows.
func readCooling(br pgx.BatchResults) ([]coolingLot, error) {
	var lots []coolingLot
	err := readRows(br, func(rows pgx.Rows) error {
		var (
			l                  coolingLot
			available, created int64
			entryID            string
		)
		if err := rows.Scan(&l.id, &l.ideaID, &l.amount, &available, &entryID, &created); err != nil {
			return err
		}
		lots = append(lots, l)
		return nil
	})
	return lots, err
}

// readIdeaTags reads the result of sqlGetIdea: the idea and its tags.
func readIdeaTags(br pgx.BatchResults) (ideaRow, []string, bool, error) {
	rows, err := br.Query()
	if err != nil {
		return ideaRow{}, nil, false, err
	}
	defer rows.Close()
	var (
		first ideaRow
		tags  []string
		found bool
	)
	for rows.Next() {
		var tag *string
		i, err := scanIdea(rows, &tag)
		if err != nil {
			return ideaRow{}, nil, false, err
		}
		if !found {
			first, found = i, true
		}
		if tag != nil {
			tags = append(tags, *tag)
		}
	}
	return first, tags, found, rows.Err()
}

// readIdea reads the portfolio's GetIdea statement for the stake.
func readIdea(br pgx.BatchResults) (ideaRow, bool, error) {
	i, _, found, err := readIdeaTags(br)
	if err != nil {
		return ideaRow{}, false, fmt.Errorf("load idea: %w", err)
	}
	return i, found, nil
}

// readContributor reads GetContributor's row: whether it exists.
func readContributor(br pgx.BatchResults) (bool, error) {
	var (
		id, trust string
		handle    *string
		created   int64
	)
	err := br.QueryRow().Scan(&id, &handle, &trust, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("get contributor: %w", err)
	}
	return true, nil
}
func (s *server) stake(w http.ResponseWriter, r *http.Request) {
	var req stakeRequest
	if err := decode(w, r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	if id := r.PathValue("idea_id"); id != "" {
		req.IdeaID = id
	}
	if q := r.URL.Query(); q.Has("dry_run") { // the gateway's dryRunFromQuery
		dry, err := true, error(nil)
		if raw := q.Get("dry_run"); raw != "" {
			if dry, err = strconv.ParseBool(raw); err != nil {
				writeError(w, r, invalid(field("dry_run", "must be true or false")))
				return
			}
		}
		req.DryRun = dry
	}
	// handler.positive and the required fields
	var fields []fieldError
	if req.ContributorID == "" {
		fields = append(fields, field("contributor_id", "is required"))
	}
	if req.IdeaID == "" {
		fields = append(fields, field("idea_id", "is required"))
	}
	amount, err := fromFloat(req.AmountCC)
	switch {
	case err != nil:
		fields = append(fields, field("amount_cc", "%s", err.Error()))
	case amount <= 0:
		fields = append(fields, field("amount_cc", "must be more than 0"))
	case amount > maxCCMicros:
		fields = append(fields, field("amount_cc", "must be at most %d", maxCCMicros/microScale))
	}
	if err := collect(fields); err != nil {
		writeError(w, r, err)
		return
	}
	if req.DryRun {
		if err := checkMovement(amount, req.IdeaID); err != nil {
			writeError(w, r, err)
			return
		}
		s.stakeDryRun(w, r, req, amount)
		return
	}
	token, ok := bearerToken(r)
	if !ok {
		writeError(w, r, fail(http.StatusUnauthorized, "missing or malformed Authorization header: want Bearer <session_token>"))
		return
	}
	tokenSum := sha256.Sum256([]byte(token)) // identity.HashToken
	idemKey := strings.TrimSpace(r.Header.Get("Idempotency-Key"))
	res, status, err := s.stakeTx(r.Context(), req, amount, hex.EncodeToString(tokenSum[:]), idemKey)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, status, res.json())
}

// stakeTx runs the stake's transaction (see the route's comment).
func (s *server) stakeTx(ctx context.Context, req stakeRequest, amount int64, tokenHash, idemKey string) (stakeResult, int, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return stakeResult{}, 0, fmt.Errorf("acquire a connection: %w", err)
	}
	defer release(c) // rolls back whatever a refusal or a failure left open
	at := now()
	scope := "stake:" + req.ContributorID // the owner is the session's contributor
	entryID := newID()
	available, staked := availableAccount(req.ContributorID), stakedAccount(req.ContributorID, req.IdeaID)
	// usecase.App.move's audit attrs: the entry, the idea, each line's delta.
	attrs, err := json.Marshal(map[string]string{"entry_id": entryID, "idea_id": req.IdeaID,
		"line:" + available: strconv.FormatInt(-amount, 10), "line:" + staked: strconv.FormatInt(amount, 10), "unit": "micro_cc"})
	if err != nil {
		return stakeResult{}, 0, fmt.Errorf("encode audit attrs: %w", err)
	}

	// Round trip 1.
	b := &pgx.Batch{}
	b.Queue(sqlSession, tokenHash)
	b.Queue(sqlGetIdea, req.IdeaID)
	b.Queue("BEGIN")
	if idemKey != "" {
		b.Queue(sqlIdempotency, scope, idemKey)
	}
	b.Queue(sqlModeLock, modeLockClass)
	b.Queue(sqlMode)
	b.Queue(sqlCreditStaked, staked, req.ContributorID, req.IdeaID, amount)
	b.Queue(sqlDebitAvailable, available, amount)
	b.Queue(sqlStakeEntry, entryID, req.ContributorID, req.IdeaID, amount, micros(at))
	b.Queue(sqlStakeLines, entryID, available, req.ContributorID, -amount, staked, req.IdeaID, amount)
	b.Queue(sqlQueueAudit, newID(), entryID, micros(at), req.ContributorID, amount, string(attrs))
	var (
		sessionOK        bool
		sessionOwner     string
		sessionExpiresAt *int64
		idea             ideaRow
		ideaFound        bool
		prev             *idemRecord
		mode             string
		debited          bool
		res              = stakeResult{ContributorID: req.ContributorID, AmountCC: amount}
	)
	err = send(ctx, c, b, func(br pgx.BatchResults) error {
		var (
			th, trust        string
			handle           *string
			created, cCreate int64
		)
		err := br.QueryRow().Scan(&th, &created, &sessionExpiresAt, &sessionOwner, &handle, &trust, &cCreate)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return fmt.Errorf("find session: %w", err)
		default:
			sessionOK = true
		}
		if idea, ideaFound, err = readIdea(br); err != nil {
			return err
		}
		if _, err := br.Exec(); err != nil {
			return err
		}
		if idemKey != "" {
			if prev, err = readIdempotency(br.QueryRow()); err != nil {
				return err
			}
		}
		if _, err := br.Exec(); err != nil {
			return fmt.Errorf("take the mode lock: %w", err)
		}
		if err := br.QueryRow().Scan(&mode); err != nil {
			return fmt.Errorf("read the mode: %w", err)
		}
		if err := br.QueryRow().Scan(&res.PositionCC); err != nil {
			return fmt.Errorf("credit %s: %w", staked, err)
		}
		switch err := br.QueryRow().Scan(&res.AvailableAfter); {
		case errors.Is(err, pgx.ErrNoRows): // less than amount available
		case err != nil:
			return fmt.Errorf("debit %s: %w", available, err)
		default:
			debited = true
		}
		for range 3 { // the entry, its lines, its audit entry
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	// A contributor without an available account (never funded): the
	// debit matched no row and the lines' INSERT, queued behind it, names
	// that missing account. As Foundry's Apply (whose batch stops at the
	// refused line), that is a short balance, answered by the checks below
	// (the transaction is rolled back on release).
	if err != nil && !(pgCode(err) == "23503" && !debited) {
		return stakeResult{}, 0, err
	}

	// The checks, in Foundry's order.
	switch {
	case !sessionOK:
		return stakeResult{}, 0, fail(http.StatusUnauthorized, "invalid session token")
	case sessionExpiresAt != nil && !time.Now().Before(fromMicros(*sessionExpiresAt)):
		return stakeResult{}, 0, fail(http.StatusUnauthorized, "session expired")
	case sessionOwner != req.ContributorID:
		return stakeResult{}, 0, fail(http.StatusForbidden, "the session's contributor may move only its own CC")
	case len(idemKey) > maxIdemKey:
		return stakeResult{}, 0, invalid(field("Idempotency-Key", "must be at most %d characters", maxIdemKey))
	}
	if err := checkMovement(amount, req.IdeaID); err != nil { // after the caller's refusal, as Foundry
		return stakeResult{}, 0, err
	}
	if !ideaFound {
		return stakeResult{}, 0, fail(http.StatusNotFound, "idea %s not found", req.IdeaID)
	}
	requestHash := ""
	if idemKey != "" {
		requestHash = stakeRequestHash(req)
		if prev != nil {
			return prev.replay(requestHash)
		}
	}
	switch {
	case mode == "frozen" || mode == "read_only": // usecase.allowed
		return stakeResult{}, 0, fail(http.StatusBadRequest, "%s", mode)
	case !debited:
		return stakeResult{}, 0, fail(http.StatusBadRequest, "insufficient balance: %s CC is more than is available",
			microsText(amount))
	}
	res.IdeaID, res.Projection, res.Stage, res.CreatedAt = idea.ID, project(idea.Stage, idea.Confidence), idea.Stage, at

	// Round trip 2: [the record and] COMMIT.
	b = &pgx.Batch{}
	if idemKey != "" {
		stored, err := json.Marshal(res)
		if err != nil {
			return stakeResult{}, 0, fmt.Errorf("encode idempotent response: %w", err)
		}
		b.Queue(sqlSaveIdempotency, scope, idemKey, requestHash, string(stored), micros(at))
	}
	b.Queue("COMMIT")
	err = send(ctx, c, b, func(br pgx.BatchResults) error {
		for range b.Len() {
			if _, err := br.Exec(); err != nil {
				return err
			}
		}
		return nil
	})
	if idemKey != "" && pgCode(err) == "23505" { // a concurrent request saved the key first
		if _, err := c.Exec(ctx, "ROLLBACK"); err != nil {
			return stakeResult{}, 0, err
		}
		prev, err := readIdempotency(c.QueryRow(ctx, sqlIdempotency, scope, idemKey))
		if err != nil {
			return stakeResult{}, 0, fmt.Errorf("read the idempotency key a concurrent request stored: %w", err)
		}
		if prev == nil {
			return stakeResult{}, 0, errors.New("the idempotency key a concurrent request stored is gone")
		}
		return prev.replay(requestHash)
	}
	if err != nil {
		return stakeResult{}, 0, err
	}
	return res, http.StatusCreated, nil
}

// idemRecord is a stored idempotency record: the request's hash and the
// answer it got.
type idemRecord struct {
	requestHash, response string
}

// readIdempotency reads sqlIdempotency's row (nil when there is none).
func readIdempotency(row pgx.Row) (*idemRecord, error) {
	var (
		scope, key string
		rec        idemRecord
		createdAt  int64
	)
	switch err := row.Scan(&scope, &key, &rec.requestHash, &rec.response, &createdAt); {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("find idempotency key: %w", err)
	}
	return &rec, nil
}

// replay is idempotency's replay: the stored answer for the same request,
// a 422 for another.
func (rec idemRecord) replay(requestHash string) (stakeResult, int, error) {
	if rec.requestHash != requestHash {
		return stakeResult{}, 0, invalid(field("Idempotency-Key", "was used before with a different request body"))
	}
	var res stakeResult
	if err := json.Unmarshal([]byte(rec.response), &res); err != nil {
		return stakeResult{}, 0, err
	}
	return res, http.StatusCreated, nil
}

// stakeDryRun is usecase.App.Stake with DryRun: reads only, one round trip.
func (s *server) stakeDryRun(w http.ResponseWriter, r *http.Request, req stakeRequest, amount int64) {
	at := now()
	b := &pgx.Batch{}
	b.Queue(sqlGetIdea, req.IdeaID)
	b.Queue(sqlContributor, req.ContributorID) // mustExist
	b.Queue(sqlContributor, req.ContributorID) // Balances' mustExist
	b.Queue(sqlBalances, req.ContributorID)
	b.Queue(sqlDueCooling, req.ContributorID, micros(at))
	b.Queue(sqlPositions, req.ContributorID)
	var (
		idea                ideaRow
		ideaFound, exists   bool
		available, position int64
	)
	err := s.run(r.Context(), b, func(br pgx.BatchResults) error {
		var err error
		if idea, ideaFound, err = readIdea(br); err != nil {
			return err
		}
		if exists, err = readContributor(br); err != nil {
			return err
		}
		if _, err = readContributor(br); err != nil {
			return err
		}
		if available, _, _, err = readBalances(br); err != nil {
			return fmt.Errorf("read balances: %w", err)
		}
		due, err := readCooling(br)
		if err != nil {
			return fmt.Errorf("read cooling unstakes: %w", err)
		}
		for _, l := range due {
			available += l.amount
		}
		if position, err = readPosition(br, idea.ID); err != nil {
			return fmt.Errorf("read positions: %w", err)
		}
		return nil
	})
	switch {
	case err != nil:
	case !ideaFound:
		err = fail(http.StatusNotFound, "idea %s not found", req.IdeaID)
	case !exists:
		err = fail(http.StatusNotFound, "contributor %s not found", req.ContributorID)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	res := stakeResult{DryRun: true, ContributorID: req.ContributorID, IdeaID: idea.ID, AmountCC: amount,
		PositionCC: position + amount, AvailableAfter: available - amount,
		Projection: project(idea.Stage, idea.Confidence), Stage: idea.Stage}
	writeJSON(w, http.StatusOK, res.json())
}

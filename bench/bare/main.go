// Command bare is the baseline of the HTTP benchmark: one hop, net/http →
// pgxpool → Postgres, running the SQL statements Foundry's stores run for
// each benchmarked route against the same database and the same tables.
// Foundry answers the same routes through the REST gateway, gRPC, a use
// case and a repository; the ratio Foundry/bare is Foundry's overhead.
//
// The routes' work (the statements, each request's as one pipelined round
// trip, and the domain rules they need, each next to the Foundry function
// it mirrors) is package sqlcore's, which bench/twohop's gRPC back end runs
// too; this file is the HTTP side: it decodes each request (package
// httpjson: the gateway's conventions), calls sqlcore and writes its answer
// as JSON. Only the standard library and pgx are used.
//
//	bare -database-url=postgres://user@host:5432/foundry -addr=127.0.0.1:8090 -pool=16
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/foundryhq/foundry/bench/bare/httpjson"
	"github.com/foundryhq/foundry/bench/bare/sqlcore"
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

	pool, err := sqlcore.Open(ctx, dbURL, poolSize, "foundry-bare")
	if err != nil {
		return err
	}
	defer pool.Close()
	cfg := pool.Config()

	s := &server{core: sqlcore.New(pool)}
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
// The routes: each decodes its request, calls sqlcore and answers.

type server struct {
	core *sqlcore.Core
}

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
	mux.HandleFunc("/", httpjson.NotFound)
	return httpjson.WithTimeout(mux)
}

// answer writes v with status, or err.
func answer(w http.ResponseWriter, r *http.Request, status int, v any, err error) {
	if err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	httpjson.WriteJSON(w, status, v)
}

// 1. POST /api/contributions
func (s *server) createContribution(w http.ResponseWriter, r *http.Request) {
	var req sqlcore.ContributionRequest
	if err := httpjson.Decode(w, r, &req); err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	out, err := s.core.CreateContribution(r.Context(), req)
	answer(w, r, http.StatusCreated, out, err)
}

// 2. GET /api/ideas/{id}
func (s *server) getIdea(w http.ResponseWriter, r *http.Request) {
	out, err := s.core.GetIdea(r.Context(), r.PathValue("id"))
	answer(w, r, http.StatusOK, out, err)
}

// 3. GET /api/ideas: each parameter read and checked in turn, the first
// bad one answered.
func (s *server) listIdeas(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	var q sqlcore.IdeaQuery
	lp, err := httpjson.IntParam(query, "limit")
	if err == nil {
		q.Limit, err = sqlcore.IdeaLimit(lp)
	}
	var op *int
	if err == nil {
		op, err = httpjson.IntParam(query, "offset")
	}
	if err == nil {
		q.Offset, err = sqlcore.IdeaOffset(op)
	}
	if err == nil {
		q.OnlyUnvalidated, err = httpjson.BoolParam(query, "only_unvalidated")
	}
	if err == nil {
		q.Tags, err = sqlcore.IdeaTags(query["tags"])
	}
	if err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	out, err := s.core.ListIdeas(r.Context(), q)
	answer(w, r, http.StatusOK, out, err)
}

// 4. POST /api/agent/tasks
func (s *server) createTask(w http.ResponseWriter, r *http.Request) {
	var req sqlcore.CreateTaskRequest
	if err := httpjson.Decode(w, r, &req); err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	out, err := s.core.CreateTask(r.Context(), req)
	answer(w, r, http.StatusCreated, out, err)
}

// 5. PATCH /api/agent/tasks/{id}
func (s *server) updateTask(w http.ResponseWriter, r *http.Request) {
	var p sqlcore.TaskPatch
	if err := httpjson.Decode(w, r, &p); err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	out, err := s.core.UpdateTask(r.Context(), r.PathValue("id"), p)
	answer(w, r, http.StatusOK, out, err)
}

// 6. GET /api/agent/pipeline-status
func (s *server) pipelineStatus(w http.ResponseWriter, r *http.Request) {
	out, err := s.core.PipelineStatus(r.Context())
	answer(w, r, http.StatusOK, out, err)
}

// 7. GET /api/agent/metrics
func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	wp, err := httpjson.IntParam(r.URL.Query(), "window_days")
	var days int
	if err == nil {
		days, err = sqlcore.WindowDays(wp)
	}
	if err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	out, err := s.core.Metrics(r.Context(), days)
	answer(w, r, http.StatusOK, out, err)
}

// 8. POST /api/cc/stake and POST /api/ideas/{idea_id}/stake
func (s *server) stake(w http.ResponseWriter, r *http.Request) {
	var req sqlcore.StakeRequest
	if err := httpjson.Decode(w, r, &req); err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	if id := r.PathValue("idea_id"); id != "" {
		req.IdeaID = id
	}
	if err := httpjson.DryRun(r.URL.Query(), &req.DryRun); err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	out, status, err := s.core.Stake(r.Context(), req, httpjson.BearerToken(r), r.Header.Get("Idempotency-Key"))
	answer(w, r, status, out, err)
}

// Command front is the near side of the HTTP benchmark's two-hop baseline:
// a net/http server that answers Foundry's hot REST routes by calling
// bench/twohop/back, a bare gRPC server of Foundry's own services, over one
// loopback connection. It decodes each request by hand (encoding/json into
// the small structs bench/bare decodes into, the gateway's conventions:
// package httpjson), fills the proto request field by field, and renders
// the proto answer to the JSON bench/bare answers (package convert, then
// encoding/json): no grpc-gateway, no protojson, no middleware, no
// authentication, no interceptors. It is the limit of Foundry's
// architecture — an HTTP edge, a gRPC hop, a service — as bench/bare is the
// limit of a single hop.
//
// GET /routes lists the routes it serves ("METHOD /pattern", one a line),
// so bench-http reports a route it lacks as such; GET /ready answers 200
// once the back end answers.
//
//	front -addr=127.0.0.1:8091 -backend=127.0.0.1:9090
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/foundryhq/foundry/bench/bare/httpjson"
	"github.com/foundryhq/foundry/bench/bare/sqlcore"
	"github.com/foundryhq/foundry/bench/twohop/convert"
	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// windowBytes is platform/grpcserver's flow-control window (both ends).
const windowBytes = 1 << 20

func main() {
	addr := flag.String("addr", "127.0.0.1:8091", "HTTP listen address")
	backend := flag.String("backend", "127.0.0.1:9090", "gRPC address of bench/twohop/back")
	flag.Parse()
	httpjson.Name = "twohop-front"
	if err := run(*addr, *backend); err != nil {
		log.Fatalf("twohop-front: %v", err)
	}
	log.Printf("twohop-front: stopped")
}

func run(addr, backend string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, err := grpc.NewClient(backend, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(windowBytes), grpc.WithInitialConnWindowSize(windowBytes))
	if err != nil {
		return fmt.Errorf("dial %s: %w", backend, err)
	}
	defer conn.Close()
	f := &front{
		portfolio: portfoliov1.NewPortfolioServiceClient(conn),
		ledger:    ledgerv1.NewLedgerServiceClient(conn),
		agent:     agentv1.NewAgentServiceClient(conn),
		health:    healthpb.NewHealthClient(conn),
	}
	srv := &http.Server{Addr: addr, Handler: f.routes(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.ListenAndServe() }()
	log.Printf("twohop-front: listening on http://%s, calling %s", addr, backend)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		log.Printf("twohop-front: shutdown: %v", err)
	}
	return nil
}

type front struct {
	portfolio portfoliov1.PortfolioServiceClient
	ledger    ledgerv1.LedgerServiceClient
	agent     agentv1.AgentServiceClient
	health    healthpb.HealthClient
}

func (f *front) routes() http.Handler {
	mux := http.NewServeMux()
	var patterns []string
	handle := func(pattern string, h http.HandlerFunc) {
		mux.HandleFunc(pattern, h)
		patterns = append(patterns, pattern)
	}
	handle("POST /api/contributions", f.createContribution)
	handle("GET /api/ideas/{id}", f.getIdea)
	handle("GET /api/ideas", f.listIdeas)
	handle("POST /api/agent/tasks", f.createTask)
	handle("PATCH /api/agent/tasks/{id}", f.updateTask)
	handle("GET /api/agent/pipeline-status", f.pipelineStatus)
	handle("GET /api/agent/metrics", f.metrics)
	handle("POST /api/cc/stake", f.stake)
	handle("POST /api/ideas/{idea_id}/stake", f.stake)
	list := strings.Join(patterns, "\n") + "\n"
	mux.HandleFunc("GET /routes", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte(list))
	})
	mux.HandleFunc("GET /ready", f.ready)
	mux.HandleFunc("/", httpjson.NotFound)
	return httpjson.WithTimeout(mux)
}

func (f *front) ready(w http.ResponseWriter, r *http.Request) {
	resp, err := f.health.Check(r.Context(), &healthpb.HealthCheckRequest{})
	if err == nil && resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		err = errors.New(resp.GetStatus().String())
	}
	if err != nil {
		httpjson.WriteJSON(w, http.StatusServiceUnavailable, httpjson.ErrorBody{Detail: "back end: " + err.Error()})
		return
	}
	httpjson.WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}

// fail answers a call's failure with the status its code maps to.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	httpjson.WriteError(w, r, convert.FromStatus(err))
}

// 1. POST /api/contributions
func (f *front) createContribution(w http.ResponseWriter, r *http.Request) {
	var req sqlcore.ContributionRequest
	if err := httpjson.Decode(w, r, &req); err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	meta, err := convert.Struct(req.Metadata)
	if err != nil {
		httpjson.WriteError(w, r, sqlcore.Invalid(sqlcore.Field("metadata", "%v", err)))
		return
	}
	resp, err := f.ledger.CreateContribution(r.Context(), &ledgerv1.CreateContributionRequest{ContributorId: req.ContributorID,
		AssetId: req.AssetID, CostAmount: req.CostAmount, Metadata: meta})
	if err != nil {
		fail(w, r, err)
		return
	}
	httpjson.WriteJSON(w, http.StatusCreated, convert.Contribution(resp.GetContribution()))
}

// 2. GET /api/ideas/{id}
func (f *front) getIdea(w http.ResponseWriter, r *http.Request) {
	resp, err := f.portfolio.GetIdea(r.Context(), &portfoliov1.GetIdeaRequest{Id: r.PathValue("id")})
	if err != nil {
		fail(w, r, err)
		return
	}
	httpjson.WriteJSON(w, http.StatusOK, convert.Idea(resp.GetIdea()))
}

// 3. GET /api/ideas: the query parsed here (its words and numbers), checked
// by the back end.
func (f *front) listIdeas(w http.ResponseWriter, r *http.Request) {
	query := r.URL.Query()
	req := &portfoliov1.ListIdeasRequest{Tags: query["tags"]}
	lp, err := httpjson.IntParam(query, "limit")
	var op *int
	if err == nil {
		op, err = httpjson.IntParam(query, "offset")
	}
	if err == nil {
		req.OnlyUnvalidated, err = httpjson.BoolParam(query, "only_unvalidated")
	}
	if err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	if lp != nil {
		l := int32(*lp)
		req.Limit = &l
	}
	if op != nil {
		req.Offset = int32(*op)
	}
	resp, err := f.portfolio.ListIdeas(r.Context(), req)
	if err != nil {
		fail(w, r, err)
		return
	}
	httpjson.WriteJSON(w, http.StatusOK, convert.IdeaList(resp))
}

// 4. POST /api/agent/tasks
func (f *front) createTask(w http.ResponseWriter, r *http.Request) {
	var req sqlcore.CreateTaskRequest
	if err := httpjson.Decode(w, r, &req); err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	taskCtx, err := convert.Struct(req.Context)
	if err != nil {
		httpjson.WriteError(w, r, sqlcore.Invalid(sqlcore.Field("context", "%v", err)))
		return
	}
	resp, err := f.agent.CreateTask(r.Context(), &agentv1.CreateTaskRequest{Direction: req.Direction, TaskType: req.TaskType,
		Context: taskCtx})
	if err != nil {
		fail(w, r, err)
		return
	}
	f.task(w, r, http.StatusCreated, resp.GetTask())
}

// task answers a task with status.
func (f *front) task(w http.ResponseWriter, r *http.Request, status int, p *agentv1.AgentTask) {
	t, err := convert.Task(p)
	if err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	httpjson.WriteJSON(w, status, t)
}

// 5. PATCH /api/agent/tasks/{id}
func (f *front) updateTask(w http.ResponseWriter, r *http.Request) {
	var p sqlcore.TaskPatch
	if err := httpjson.Decode(w, r, &p); err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	resp, err := f.agent.UpdateTask(r.Context(), convert.TaskPatchPB(r.PathValue("id"), p))
	if err != nil {
		fail(w, r, err)
		return
	}
	f.task(w, r, http.StatusOK, resp.GetTask())
}

// 6. GET /api/agent/pipeline-status
func (f *front) pipelineStatus(w http.ResponseWriter, r *http.Request) {
	resp, err := f.agent.GetPipelineStatus(r.Context(), &agentv1.GetPipelineStatusRequest{})
	if err != nil {
		fail(w, r, err)
		return
	}
	httpjson.WriteJSON(w, http.StatusOK, convert.Pipeline(resp))
}

// 7. GET /api/agent/metrics
func (f *front) metrics(w http.ResponseWriter, r *http.Request) {
	wp, err := httpjson.IntParam(r.URL.Query(), "window_days")
	if err != nil {
		httpjson.WriteError(w, r, err)
		return
	}
	req := &agentv1.GetMetricsRequest{}
	if wp != nil {
		d := int32(*wp)
		req.WindowDays = &d
	}
	resp, err := f.agent.GetMetrics(r.Context(), req)
	if err != nil {
		fail(w, r, err)
		return
	}
	httpjson.WriteJSON(w, http.StatusOK, convert.Metrics(resp))
}

// 8. POST /api/cc/stake and POST /api/ideas/{idea_id}/stake: the session
// token and the Idempotency-Key travel as the call's metadata.
func (f *front) stake(w http.ResponseWriter, r *http.Request) {
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
	ctx := r.Context()
	var md []string
	if token := httpjson.BearerToken(r); token != "" {
		md = append(md, "authorization", "Bearer "+token)
	}
	if key := r.Header.Get("Idempotency-Key"); key != "" {
		md = append(md, "idempotency-key", key)
	}
	if len(md) > 0 {
		ctx = metadata.AppendToOutgoingContext(ctx, md...)
	}
	resp, err := f.ledger.Stake(ctx, &ledgerv1.StakeRequest{ContributorId: req.ContributorID, IdeaId: req.IdeaID,
		AmountCc: req.AmountCC, DryRun: req.DryRun})
	if err != nil {
		fail(w, r, err)
		return
	}
	status := http.StatusCreated
	if req.DryRun {
		status = http.StatusOK
	}
	httpjson.WriteJSON(w, status, convert.Stake(resp))
}

// Command back is the far side of the HTTP benchmark's two-hop baseline: a
// bare gRPC server of Foundry's own services (the protos of proto/gen/go;
// only the methods the benchmarked routes use) that runs, for each call,
// what bench/bare runs for the route (package sqlcore: the same statements
// against the same database, the same rules). Nothing else: no
// interceptors, no authentication, no stats handlers, the default codec;
// of Foundry's transport settings only the fixed 1 MiB flow-control windows
// (platform/grpcserver's, which turn off the bandwidth estimator's pings),
// so the hop costs what Foundry's would cost without its own additions.
// bench/twohop/front calls it over loopback.
//
//	back -database-url=postgres://user@host:5432/foundry -addr=127.0.0.1:9090 -pool=16
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"

	"github.com/foundryhq/foundry/bench/bare/sqlcore"
	"github.com/foundryhq/foundry/bench/twohop/convert"
	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// windowBytes is platform/grpcserver's flow-control window.
const windowBytes = 1 << 20

func main() {
	addr := flag.String("addr", "127.0.0.1:9090", "gRPC listen address")
	dbURL := flag.String("database-url", "", "Postgres URL of the database Foundry uses (required)")
	poolSize := flag.Int("pool", 16, "connections in the pool")
	flag.Parse()
	if *dbURL == "" {
		fmt.Fprintln(os.Stderr, "twohop-back: -database-url is required")
		os.Exit(2)
	}
	if err := run(*addr, *dbURL, *poolSize); err != nil {
		log.Fatalf("twohop-back: %v", err)
	}
	log.Printf("twohop-back: stopped")
}

func run(addr, dbURL string, poolSize int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	pool, err := sqlcore.Open(ctx, dbURL, poolSize, "foundry-bare-twohop")
	if err != nil {
		return err
	}
	defer pool.Close()
	core := sqlcore.New(pool)

	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := grpc.NewServer(grpc.InitialWindowSize(windowBytes), grpc.InitialConnWindowSize(windowBytes))
	portfoliov1.RegisterPortfolioServiceServer(srv, &portfolio{core: core})
	ledgerv1.RegisterLedgerServiceServer(srv, &ledger{core: core})
	agentv1.RegisterAgentServiceServer(srv, &agent{core: core})
	// For the front's readiness check only; no call of the benchmark
	// touches it.
	healthpb.RegisterHealthServer(srv, health.NewServer())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	cfg := pool.Config().ConnConfig
	log.Printf("twohop-back: gRPC on %s (pool of %d connections to %s:%d/%s)", addr, poolSize, cfg.Host, cfg.Port, cfg.Database)
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	srv.GracefulStop()
	return nil
}

// answer is a call's failure as gRPC carries it; a failure of the server
// itself is logged, as bench/bare logs it.
func answer(method string, err error) error {
	out, internal := convert.ToStatus(err)
	if internal {
		log.Printf("twohop-back: %s: %v", method, err)
	}
	return out
}

// ---------------------------------------------------------------------------
// foundry.portfolio.v1.PortfolioService

type portfolio struct {
	portfoliov1.UnimplementedPortfolioServiceServer
	core *sqlcore.Core
}

func (s *portfolio) GetIdea(ctx context.Context, req *portfoliov1.GetIdeaRequest) (*portfoliov1.GetIdeaResponse, error) {
	i, err := s.core.GetIdea(ctx, req.GetId())
	if err != nil {
		return nil, answer("GetIdea", err)
	}
	return &portfoliov1.GetIdeaResponse{Idea: convert.IdeaPB(i)}, nil
}

// ListIdeas checks the query as bench/bare does, each field in turn: the
// front parsed it (as the gateway parses a query into the request).
func (s *portfolio) ListIdeas(ctx context.Context, req *portfoliov1.ListIdeasRequest) (*portfoliov1.ListIdeasResponse, error) {
	var lp *int
	if req.Limit != nil {
		l := int(req.GetLimit())
		lp = &l
	}
	offset := int(req.GetOffset())
	q := sqlcore.IdeaQuery{OnlyUnvalidated: req.GetOnlyUnvalidated()}
	var err error
	if q.Limit, err = sqlcore.IdeaLimit(lp); err == nil {
		if q.Offset, err = sqlcore.IdeaOffset(&offset); err == nil {
			q.Tags, err = sqlcore.IdeaTags(req.GetTags())
		}
	}
	if err != nil {
		return nil, answer("ListIdeas", err)
	}
	l, err := s.core.ListIdeas(ctx, q)
	if err != nil {
		return nil, answer("ListIdeas", err)
	}
	return convert.IdeaListPB(l), nil
}

// ---------------------------------------------------------------------------
// foundry.ledger.v1.LedgerService

type ledger struct {
	ledgerv1.UnimplementedLedgerServiceServer
	core *sqlcore.Core
}

func (s *ledger) CreateContribution(ctx context.Context, req *ledgerv1.CreateContributionRequest) (*ledgerv1.CreateContributionResponse, error) {
	c, err := s.core.CreateContribution(ctx, sqlcore.ContributionRequest{ContributorID: req.GetContributorId(),
		AssetID: req.GetAssetId(), CostAmount: req.CostAmount, Metadata: req.GetMetadata().AsMap()})
	if err != nil {
		return nil, answer("CreateContribution", err)
	}
	out, err := convert.ContributionPB(c)
	if err != nil {
		return nil, answer("CreateContribution", err)
	}
	return &ledgerv1.CreateContributionResponse{Contribution: out}, nil
}

// Stake reads the session token and the idempotency key from the call's
// metadata (authorization: Bearer <token>, idempotency-key), where the
// front puts the request's headers.
func (s *ledger) Stake(ctx context.Context, req *ledgerv1.StakeRequest) (*ledgerv1.StakeResponse, error) {
	var token, idemKey string
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		if v := md.Get("authorization"); len(v) > 0 {
			if scheme, t, ok := strings.Cut(strings.TrimSpace(v[0]), " "); ok && strings.EqualFold(scheme, "Bearer") {
				token = strings.TrimSpace(t)
			}
		}
		if v := md.Get("idempotency-key"); len(v) > 0 {
			idemKey = v[0]
		}
	}
	st, _, err := s.core.Stake(ctx, sqlcore.StakeRequest{ContributorID: req.GetContributorId(), IdeaID: req.GetIdeaId(),
		AmountCC: req.GetAmountCc(), DryRun: req.GetDryRun()}, token, idemKey)
	if err != nil {
		return nil, answer("Stake", err)
	}
	return convert.StakePB(st), nil
}

// ---------------------------------------------------------------------------
// foundry.agent.v1.AgentService

type agent struct {
	agentv1.UnimplementedAgentServiceServer
	core *sqlcore.Core
}

func (s *agent) CreateTask(ctx context.Context, req *agentv1.CreateTaskRequest) (*agentv1.CreateTaskResponse, error) {
	t, err := s.core.CreateTask(ctx, sqlcore.CreateTaskRequest{Direction: req.GetDirection(), TaskType: req.GetTaskType(),
		Context: req.GetContext().AsMap()})
	if err != nil {
		return nil, answer("CreateTask", err)
	}
	out, err := convert.TaskPB(t)
	if err != nil {
		return nil, answer("CreateTask", err)
	}
	return &agentv1.CreateTaskResponse{Task: out}, nil
}

func (s *agent) UpdateTask(ctx context.Context, req *agentv1.UpdateTaskRequest) (*agentv1.UpdateTaskResponse, error) {
	t, err := s.core.UpdateTask(ctx, req.GetId(), convert.TaskPatch(req))
	if err != nil {
		return nil, answer("UpdateTask", err)
	}
	out, err := convert.TaskPB(t)
	if err != nil {
		return nil, answer("UpdateTask", err)
	}
	return &agentv1.UpdateTaskResponse{Task: out}, nil
}

func (s *agent) GetPipelineStatus(ctx context.Context, _ *agentv1.GetPipelineStatusRequest) (*agentv1.GetPipelineStatusResponse, error) {
	st, err := s.core.PipelineStatus(ctx)
	if err != nil {
		return nil, answer("GetPipelineStatus", err)
	}
	return convert.PipelinePB(st), nil
}

func (s *agent) GetMetrics(ctx context.Context, req *agentv1.GetMetricsRequest) (*agentv1.GetMetricsResponse, error) {
	var wp *int
	if req.WindowDays != nil {
		d := int(req.GetWindowDays())
		wp = &d
	}
	days, err := sqlcore.WindowDays(wp)
	if err != nil {
		return nil, answer("GetMetrics", err)
	}
	m, err := s.core.Metrics(ctx, days)
	if err != nil {
		return nil, answer("GetMetrics", err)
	}
	return convert.MetricsPB(m), nil
}

// Package app runs Foundry modules. A module is one deployable part (a
// service, or the gateway); a process runs any set of them, chosen with
// -target, on one gRPC server, one public HTTP server and one admin server.
// Modules reach each other only through gRPC clients from Host.Dial, also
// when they share a process, so a laptop run takes the path Kubernetes takes.
package app

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	grpcprom "github.com/grpc-ecosystem/go-grpc-middleware/providers/prometheus"
	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"

	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/clientip"
	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/grpcserver"
	"github.com/foundryhq/foundry/services/platform/logging"
	"github.com/foundryhq/foundry/services/platform/migrate"
	"github.com/foundryhq/foundry/services/platform/observability"
	"github.com/foundryhq/foundry/services/platform/periodic"
	"github.com/foundryhq/foundry/services/platform/servicecred"
)

// Module is one deployable part of Foundry.
type Module struct {
	// Name is the target name ("ledger") and, for modules with a database,
	// the Postgres schema and SQLite file name.
	Name string
	// Service is the fully qualified gRPC service the module serves, whose
	// health status the process reports; empty for none. A module with a
	// service is one other modules may dial (see Peers).
	Service string
	// Peers are the modules this one dials (Host.Dial refuses any other).
	// A process gets a -<peer>-addr flag for each, and the deployment's
	// checks (deploy/) hold the network policies and the peer addresses
	// of the manifests against them.
	Peers []string
	// Routes, for a module with a REST surface, registers its routes on
	// the gateway's mux, calling the module through conn: the generated
	// Register<Service>Handler of its API. The gateway serves the routes
	// of every module it is given that declares them.
	Routes func(ctx context.Context, mux *runtime.ServeMux, conn *grpc.ClientConn) error
	// Migrations, when set, gives the module its own database: directories
	// "postgres" and "sqlite" of NNNN_name.sql files.
	Migrations fs.FS
	// Flags registers the module's own settings.
	Flags func(fs *config.FlagSet)
	// Start registers the module's gRPC services and starts its work. It
	// must not block.
	Start func(ctx context.Context, h *Host) error
}

// tokenVerifier is the module every process dials to verify tokens
// (authz.LedgerLookup), whatever modules it runs: the ledger keeps the
// sessions and API tokens.
const tokenVerifier = "ledger"

// Peers returns the modules a process that knows these modules may dial,
// each once: every module serving a gRPC service, then every peer a module
// declares, then the token verifier (the ledger). The process has a
// -<name>-addr flag for each. A binary of one module thus takes the
// addresses of what that module dials, and the all-in-one binary those of
// every service.
func Peers(modules []Module) []string {
	var out []string
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, m := range modules {
		if m.Service != "" {
			add(m.Name)
		}
	}
	for _, m := range modules {
		for _, p := range m.Peers {
			add(p)
		}
	}
	add(tokenVerifier)
	return out
}

// Settings are shared by every module of a process.
type Settings struct {
	Target      string
	GRPCAddr    string
	HTTPAddr    string
	AdminAddr   string
	DataDir     string
	DatabaseURL string
	// DatabaseOwnerURL is, for migrate only, the URL the migrated service
	// connects with: its user becomes the schema's owner role
	// (migrate.EnsureOwner).
	DatabaseOwnerURL string
	AutoMigrate      bool
	// MigrationWait is how long a process that does not migrate waits for
	// its schema to be current before it refuses to start (waitForSchema).
	MigrationWait   time.Duration
	AdminKey        string
	LogFormat       string
	LogLevel        string
	HealthInterval  time.Duration
	ShutdownDelay   time.Duration
	ShutdownTimeout time.Duration
	// Pprof serves net/http/pprof's profiles on the admin address.
	Pprof bool
	// Reflection serves gRPC server reflection on the gRPC address.
	Reflection bool
	// TrustedProxies is FOUNDRY_TRUSTED_PROXIES as given (comma-separated
	// CIDRs); Proxies is its parsed form, which modules use.
	TrustedProxies string
	Proxies        clientip.Proxies
	// PeerAddrs maps a peer module (Peers) to its gRPC address, or to
	// several comma-separated replicas that calls are spread over; empty
	// means "this process", which must then run that module.
	PeerAddrs map[string]*string
	// peers are PeerAddrs' keys, in Peers' order.
	peers []string
	// ServiceKey is the credential every Foundry process presents to and
	// requires of the others over gRPC (servicecred).
	ServiceKey string
	// ServiceKeyAccept and AdminKeyAccept are other keys accepted, never
	// presented, while a key rotates (comma-separated; servicecred.Matches
	// gives the steps). Empty outside a rotation.
	ServiceKeyAccept string
	AdminKeyAccept   string
	// PrincipalSigningKey is the key a gateway signs the principals it
	// forwards with; PrincipalVerifierKeys (comma-separated) the gateways'
	// keys a service believes forwarded principals from (principal.go).
	PrincipalSigningKey   string
	PrincipalVerifierKeys string
	// GRPCTLS are the PEM files of mutual TLS between processes; none
	// given means plaintext gRPC.
	GRPCTLS servicecred.TLSFiles
	// PublicReads lets callers without a credential read (every method whose
	// policy allows viewers); false makes reads need a viewer's token.
	PublicReads bool
	// MaxConnectionAge makes clients reconnect (and so rebalance) this
	// often; see grpcserver.Options.
	MaxConnectionAge time.Duration

	// AdminKeyPath is the file the administrator key was read from or
	// saved to when none was configured; "" otherwise.
	AdminKeyPath string

	// adminKeyGiven and serviceKeyGiven are true when the key was given at
	// all, even empty: then an empty key is a mistake, not a request to
	// generate one.
	adminKeyGiven, serviceKeyGiven bool
}

func (s *Settings) register(fs *config.FlagSet, all []Module) {
	if len(all) > 1 {
		fs.String(&s.Target, "target", "FOUNDRY_TARGET", "all", "comma-separated modules to run, or all")
	}
	fs.String(&s.GRPCAddr, "grpc-addr", "FOUNDRY_GRPC_ADDR", "127.0.0.1:9090", "gRPC listen address")
	fs.String(&s.HTTPAddr, "http-addr", "FOUNDRY_HTTP_ADDR", "127.0.0.1:8080", "REST gateway listen address")
	fs.String(&s.AdminAddr, "admin-addr", "FOUNDRY_ADMIN_ADDR", "127.0.0.1:9100", "admin listen address (/metrics, /healthz, /readyz); empty disables")
	fs.String(&s.DataDir, "data-dir", "FOUNDRY_DATA_DIR", "data", "directory of the SQLite files")
	fs.String(&s.DatabaseURL, "database-url", "FOUNDRY_DATABASE_URL", "", "postgres:// URL; empty uses embedded SQLite under -data-dir")
	fs.String(&s.DatabaseOwnerURL, "database-owner-url", "FOUNDRY_DATABASE_OWNER_URL", "",
		"migrate only (Postgres, one module): the postgres:// URL the service connects with; migrate makes its user the one role "+
			"with rights on the module's schema, creating it with the URL's password when missing (deploy/README.md)")
	fs.Bool(&s.AutoMigrate, "auto-migrate", "FOUNDRY_AUTO_MIGRATE", true, "apply pending schema migrations at startup")
	fs.Duration(&s.MigrationWait, "migration-wait", "FOUNDRY_MIGRATION_WAIT", 5*time.Minute,
		"with -auto-migrate=false: how long to wait at startup for the schema to have this build's migrations (run by foundry migrate) before giving up")
	fs.String(&s.AdminKey, "admin-key", "FOUNDRY_ADMIN_KEY", "", "administrator key (X-API-Key); generated and printed when not set at all, refused when set but empty")
	fs.String(&s.LogFormat, "log-format", "FOUNDRY_LOG_FORMAT", "auto", "json, console, or auto (console on a terminal)")
	fs.String(&s.LogLevel, "log-level", "FOUNDRY_LOG_LEVEL", "info", "debug, info, warn or error")
	fs.Duration(&s.HealthInterval, "health-interval", "FOUNDRY_HEALTH_INTERVAL", 5*time.Second, "how often database health is checked")
	fs.Duration(&s.ShutdownDelay, "shutdown-delay", "FOUNDRY_SHUTDOWN_DELAY", 0, "time between reporting NOT_SERVING and draining, for load balancers to notice")
	fs.Duration(&s.ShutdownTimeout, "shutdown-timeout", "FOUNDRY_SHUTDOWN_TIMEOUT", 15*time.Second, "how long draining may take before connections are cut")
	fs.Bool(&s.Pprof, "pprof", "FOUNDRY_PPROF", false, "serve Go profiles (/debug/pprof/) on the admin address")
	fs.Bool(&s.Reflection, "grpc-reflection", "FOUNDRY_GRPC_REFLECTION", true,
		"serve gRPC server reflection (service listing for grpcurl and the like); false hides the service descriptions")
	fs.String(&s.ServiceKey, "service-key", "FOUNDRY_SERVICE_KEY", "",
		"key every Foundry process presents to and requires of the others over gRPC (the same value everywhere); "+
			"generated when not set at all and this process runs every service itself")
	fs.String(&s.ServiceKeyAccept, "service-key-accept", "FOUNDRY_SERVICE_KEY_ACCEPT", "",
		"other service keys accepted from callers (comma-separated), never presented: set during a rotation, then cleared (deploy/README.md)")
	fs.String(&s.AdminKeyAccept, "admin-key-accept", "FOUNDRY_ADMIN_KEY_ACCEPT", "",
		"other administrator keys accepted (comma-separated): the old key while a new one rolls out, then cleared (deploy/README.md)")
	fs.String(&s.PrincipalSigningKey, "principal-signing-key", "FOUNDRY_PRINCIPAL_SIGNING_KEY", "",
		"gateway: the Ed25519 key (foundry gateway keygen) that signs the principals it forwards to the services; "+
			"made for the run when neither principal key is set and this process runs every service itself")
	fs.String(&s.PrincipalVerifierKeys, "principal-verifier-keys", "FOUNDRY_PRINCIPAL_VERIFIER_KEYS", "",
		"services: the gateways' verifier keys (comma-separated) a forwarded principal must be signed by")
	fs.String(&s.GRPCTLS.Cert, "grpc-tls-cert", "FOUNDRY_GRPC_TLS_CERT", "", "PEM certificate this process presents over gRPC, as server and as client (mutual TLS; with -grpc-tls-key and -grpc-tls-ca)")
	fs.String(&s.GRPCTLS.Key, "grpc-tls-key", "FOUNDRY_GRPC_TLS_KEY", "", "PEM private key of -grpc-tls-cert")
	fs.String(&s.GRPCTLS.CA, "grpc-tls-ca", "FOUNDRY_GRPC_TLS_CA", "", "PEM certificate authority that signed every Foundry process's certificate; only its certificates are accepted")
	fs.Duration(&s.MaxConnectionAge, "grpc-max-connection-age", "FOUNDRY_GRPC_MAX_CONNECTION_AGE", 5*time.Minute,
		"close each gRPC client connection after this long (calls in flight finish) so clients reconnect and reach new replicas; 0 never")
	fs.Bool(&s.PublicReads, "public-reads", "FOUNDRY_PUBLIC_READS", true,
		"let requests without a credential read; false makes every read need a token (viewer or above)")
	fs.String(&s.TrustedProxies, "trusted-proxies", "FOUNDRY_TRUSTED_PROXIES", "",
		"comma-separated CIDRs of proxies whose X-Forwarded-For is believed (the ingress, the gateway's pods); empty: none")
	s.PeerAddrs = map[string]*string{}
	s.peers = Peers(all)
	for _, p := range s.peers {
		addr := new(string)
		s.PeerAddrs[p] = addr
		fs.String(addr, p+"-addr", "FOUNDRY_"+strings.ToUpper(p)+"_ADDR", "", "gRPC address of the "+p+" service; empty when this process runs it")
	}
}

// Host is what a module gets from the process it runs in.
type Host struct {
	// Log is the module's logger.
	Log *zap.Logger
	// Settings are the process-wide settings.
	Settings *Settings
	// DB is the module's database, when it declared migrations.
	DB *database.DB
	// Metrics registers the module's Prometheus collectors.
	Metrics prometheus.Registerer

	proc   *Process
	module Module
}

// RegisterService registers a gRPC service implementation.
func (h *Host) RegisterService(desc *grpc.ServiceDesc, impl any) {
	h.proc.grpc.RegisterService(desc, impl)
}

// Dial returns a client connection to a peer module ("portfolio", ...),
// one the module declares in its Peers. Connections are shared and closed
// when the process stops.
func (h *Host) Dial(peer string) (*grpc.ClientConn, error) {
	// Refused even when the process could dial it (the all-in-one run knows
	// every address): the module's binary alone would have no address for
	// it, and the network policies would drop the calls.
	if !slices.Contains(h.module.Peers, peer) {
		return nil, fmt.Errorf("the %s module dials %s, which it does not declare: add %q to its app.Module Peers", h.module.Name, peer, peer)
	}
	return h.proc.dial(peer)
}

// Verifier turns a request's credentials into its principal (the
// gateway's edge authentication); one per process, so its cache is shared.
func (h *Host) Verifier() *authz.Verifier { return h.proc.verifier }

// Forwarder signs the principals the gateway forwards to the services;
// an error when this process was given no signing key.
func (h *Host) Forwarder() (*authz.Forwarder, error) {
	if h.proc.forwarder == nil {
		return nil, errors.New("the gateway signs the principals it forwards, and this process has no key to sign them with: " +
			"set FOUNDRY_PRINCIPAL_SIGNING_KEY (-principal-signing-key; foundry gateway keygen makes one) and give the services its verifier key")
	}
	return h.proc.forwarder, nil
}

// ServeHTTP makes handler the process's public HTTP handler (the gateway).
func (h *Host) ServeHTTP(handler http.Handler) {
	h.proc.httpHandler = handler
}

// Go runs fn in the background until the process stops; fn must return when
// ctx is done.
func (h *Host) Go(fn func(ctx context.Context)) {
	h.proc.loops.Go(func() { fn(h.proc.loopCtx) })
}

// OnStop runs fn when the process stops, after the servers have drained.
func (h *Host) OnStop(fn func()) {
	h.proc.onStop = append(h.proc.onStop, fn)
}

// AddCheck adds a health check to the module's gRPC service status: it is
// SERVING only while every check passes.
func (h *Host) AddCheck(name string, check func(ctx context.Context) error) {
	h.proc.checks = append(h.proc.checks, healthCheck{service: h.module.Service, name: name, fn: check})
}

type healthCheck struct {
	service string
	name    string
	fn      func(ctx context.Context) error
}

// Process is a running set of modules.
type Process struct {
	// GRPCAddr, HTTPAddr and AdminAddr are the bound addresses ("" when not
	// serving).
	GRPCAddr  string
	HTTPAddr  string
	AdminAddr string
	// Settings are the parsed settings.
	Settings *Settings
	// Log is the process logger.
	Log *zap.Logger

	modules     []Module
	grpc        *grpc.Server
	health      *health.Server
	httpHandler http.Handler
	httpSrv     *http.Server
	adminSrv    *http.Server
	checks      []healthCheck
	onStop      []func()
	dbs         map[string]*database.DB // by module name

	verifier      *authz.Verifier
	forwarder     *authz.Forwarder // nil without a principal signing key
	clientMetrics *grpcprom.ClientMetrics
	clientCreds   grpcserver.ClientCredentials
	stopTracing   func(context.Context) error

	connMu sync.Mutex
	conns  map[string]*grpc.ClientConn

	loopCtx    context.Context
	loopCancel context.CancelFunc
	loops      sync.WaitGroup

	errs     chan error
	stopOnce sync.Once
	stopErr  error
}

// Options tune Start; the zero value reads the real environment.
type Options struct {
	// Getenv replaces os.Getenv (tests); it cannot tell an empty variable
	// from an absent one, so with it an empty variable counts as absent.
	Getenv func(string) string
	// LookupEnv replaces os.LookupEnv (tests); it wins over Getenv.
	LookupEnv func(string) (string, bool)
}

// Parse builds the settings of a process running the given modules from args
// and the environment. It returns the selected modules and the positional
// arguments left over.
func Parse(program string, all []Module, args []string, opts Options) (*Settings, []Module, []string, error) {
	fs := config.New(program)
	s := &Settings{}
	s.register(fs, all)
	for _, m := range all {
		if m.Flags != nil {
			m.Flags(fs)
		}
	}
	lookupEnv := opts.LookupEnv
	if lookupEnv == nil && opts.Getenv != nil {
		lookupEnv = func(k string) (string, bool) { v := opts.Getenv(k); return v, v != "" }
	}
	rest, err := fs.ParseLookup(args, lookupEnv)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, nil, err
		}
		return nil, nil, nil, UsageError{err}
	}
	s.adminKeyGiven = fs.Given("admin-key")
	s.serviceKeyGiven = fs.Given("service-key")
	if s.Proxies, err = clientip.Parse(s.TrustedProxies); err != nil {
		return nil, nil, nil, fmt.Errorf("FOUNDRY_TRUSTED_PROXIES: %w", err)
	}
	selected, err := selectModules(all, s.Target)
	if err != nil {
		return nil, nil, nil, err
	}
	return s, selected, rest, nil
}

func selectModules(all []Module, target string) ([]Module, error) {
	if len(all) == 1 || target == "" || target == "all" {
		return all, nil
	}
	var out []Module
	for _, name := range strings.Split(target, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(all, func(m Module) bool { return m.Name == name })
		if i < 0 {
			names := make([]string, len(all))
			for j, m := range all {
				names[j] = m.Name
			}
			return nil, fmt.Errorf("unknown target %q: want all or some of %s", name, strings.Join(names, ","))
		}
		if !slices.ContainsFunc(out, func(m Module) bool { return m.Name == name }) {
			out = append(out, all[i])
		}
	}
	return out, nil
}

// Start runs the modules with the settings and returns once every server is
// listening. Stop the process with Stop. When a module has a database, the
// process also serves foundry.internal.platform.v1.StorageService, which describes
// each module's storage (see storage.go).
func Start(ctx context.Context, s *Settings, modules []Module) (_ *Process, err error) {
	log, err := logging.New(s.LogFormat, s.LogLevel)
	if err != nil {
		return nil, err
	}
	applyGCPercent(log, os.Getenv)
	if err := applyMemoryLimit(log, os.Getenv); err != nil {
		return nil, err
	}
	if err := s.checkAdminKey(); err != nil {
		return nil, err
	}
	if s.AdminKey == "" {
		s.localAdminKey(log)
	}
	serverTLS, clientTLS, err := s.serviceCredentials(log)
	if err != nil {
		return nil, err
	}
	stopTracing, err := observability.Start(ctx, serviceName(modules), log.Named("telemetry"))
	if err != nil {
		return nil, err
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	observability.RegisterBuildInfo(reg)
	loopCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &Process{
		Settings: s, Log: log, modules: modules,
		clientMetrics: grpcserver.NewClientMetrics(reg), stopTracing: stopTracing,
		clientCreds: grpcserver.ClientCredentials{ServiceKey: s.ServiceKey, TLS: clientTLS},
		conns:       map[string]*grpc.ClientConn{}, dbs: map[string]*database.DB{}, loopCtx: loopCtx, loopCancel: cancel,
		errs: make(chan error, 3),
	}
	// Tokens are verified by the ledger, which keeps sessions and API
	// tokens: over gRPC like every other call between modules, also when
	// this process runs the ledger itself.
	ledger := func() (*grpc.ClientConn, error) { return p.dial(tokenVerifier) }
	p.verifier = authz.NewVerifier(authz.VerifierOptions{AdminKey: s.AdminKey, AcceptedAdminKeys: splitList(s.AdminKeyAccept),
		Lookup: authz.LedgerLookup(ledger), LookupMany: authz.LedgerLookupMany(ledger)})
	var trust *authz.Trust
	p.forwarder, trust, err = s.principalKeys(log)
	if err != nil {
		cancel()
		return nil, err
	}
	enforcer, err := authz.NewEnforcer(p.verifier, s.PublicReads, trust)
	if err != nil {
		cancel()
		return nil, err
	}
	srv := grpcserver.New(log.Named("grpc"), reg, grpcserver.Options{
		Reflection: s.Reflection, ServiceKey: s.ServiceKey, AcceptedServiceKeys: splitList(s.ServiceKeyAccept), TLS: serverTLS,
		MaxConnectionAge: s.MaxConnectionAge, Authz: enforcer,
	})
	p.grpc, p.health = srv.Server, srv.Health
	defer func() {
		if err != nil {
			p.release()
		}
	}()

	lis, err := net.Listen("tcp", s.GRPCAddr)
	if err != nil {
		return nil, fmt.Errorf("listen gRPC on %s: %w", s.GRPCAddr, err)
	}
	p.GRPCAddr = lis.Addr().String()

	for _, m := range modules {
		if m.Service != "" {
			srv.Health.SetServingStatus(m.Service, healthpb.HealthCheckResponse_NOT_SERVING)
		}
	}
	srv.Health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	for _, m := range modules {
		if err := p.startModule(ctx, m, reg); err != nil {
			_ = lis.Close()
			return nil, fmt.Errorf("start %s: %w", m.Name, err)
		}
	}
	p.registerStorage()
	srv.InitializeMetrics()

	go func() { p.errs <- srv.Serve(lis) }()
	if p.httpHandler != nil {
		if p.httpSrv, p.HTTPAddr, err = p.serveHTTP(s.HTTPAddr, p.httpHandler); err != nil {
			return nil, fmt.Errorf("listen HTTP on %s: %w", s.HTTPAddr, err)
		}
	}
	if s.AdminAddr != "" {
		if p.adminSrv, p.AdminAddr, err = p.serveHTTP(s.AdminAddr, p.adminHandler(reg)); err != nil {
			return nil, fmt.Errorf("listen admin on %s: %w", s.AdminAddr, err)
		}
	}
	p.checkHealth(ctx)
	p.loops.Go(p.healthLoop)
	// The tokens clients are using, kept fresh in one call per half a
	// second (authz.Verifier.Run).
	p.loops.Go(func() { p.verifier.Run(p.loopCtx) })
	return p, nil
}

func (p *Process) startModule(ctx context.Context, m Module, reg prometheus.Registerer) error {
	h := &Host{
		Log:      p.Log.Named(m.Name),
		Settings: p.Settings,
		Metrics:  prometheus.WrapRegistererWith(prometheus.Labels{"module": m.Name}, reg),
		proc:     p,
		module:   m,
	}
	if m.Migrations != nil {
		db, err := database.Open(ctx, database.Config{URL: p.Settings.DatabaseURL, DataDir: p.Settings.DataDir, Schema: m.Name,
			Trace: observability.Active()})
		if err != nil {
			return err
		}
		p.dbs[m.Name] = db
		h.Metrics.MustRegister(db.Collector())
		if p.Settings.AutoMigrate {
			n, err := migrate.Up(ctx, db, m.Migrations)
			if err != nil {
				return fmt.Errorf("migrate %s database: %w", m.Name, err)
			}
			v, _ := migrate.Version(ctx, db)
			h.Log.Info("database ready", zap.String("engine", string(db.Engine())), zap.String("target", db.Target()),
				zap.Int("applied_migrations", n), zap.Int("schema_version", v))
		} else if err := waitForSchema(ctx, h.Log, db, m.Migrations, p.Settings.MigrationWait); err != nil {
			return fmt.Errorf("%s database: %w", m.Name, err)
		}
		h.DB = db
		h.AddCheck("database", db.Ping)
	}
	if m.Start == nil {
		return nil
	}
	return m.Start(ctx, h)
}

func (p *Process) serveHTTP(addr string, handler http.Handler) (*http.Server, string, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          zap.NewStdLog(p.Log.Named("http")),
	}
	go func() {
		if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.errs <- err
		}
	}()
	return srv, lis.Addr().String(), nil
}

func (p *Process) adminHandler(reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		resp, err := p.health.Check(r.Context(), &healthpb.HealthCheckRequest{})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			http.Error(w, "not serving", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	if p.Settings.Pprof {
		// Off by default: a profile shows the process's internals, and a
		// CPU profile costs while it runs. The admin address is loopback
		// unless the deployment says otherwise.
		mux.HandleFunc("GET /debug/pprof/", pprof.Index)
		mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	}
	return mux
}

// healthLoop re-runs the checks until the process stops.
func (p *Process) healthLoop() {
	periodic.After(p.loopCtx, p.Settings.HealthInterval, func() { p.checkHealth(p.loopCtx) })
}

// checkHealth sets each module's service SERVING when all its checks pass,
// and the overall ("") status SERVING when every service is.
func (p *Process) checkHealth(ctx context.Context) {
	failing := map[string]bool{}
	for _, c := range p.checks {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := c.fn(cctx)
		cancel()
		if err != nil {
			if !failing[c.service] {
				p.Log.Warn("health check failing", zap.String("service", c.service), zap.String("check", c.name), zap.Error(err))
			}
			failing[c.service] = true
		}
	}
	if ctx.Err() != nil {
		return // stopping: Shutdown owns the status now
	}
	all := healthpb.HealthCheckResponse_SERVING
	for _, m := range p.modules {
		if m.Service == "" {
			continue
		}
		st := healthpb.HealthCheckResponse_SERVING
		if failing[m.Service] {
			st, all = healthpb.HealthCheckResponse_NOT_SERVING, healthpb.HealthCheckResponse_NOT_SERVING
		}
		p.health.SetServingStatus(m.Service, st)
	}
	p.health.SetServingStatus("", all)
}

func (p *Process) dial(peer string) (*grpc.ClientConn, error) {
	addrPtr, known := p.Settings.PeerAddrs[peer]
	if !known {
		return nil, fmt.Errorf("unknown peer %q", peer)
	}
	addr := *addrPtr
	if addr == "" {
		if !slices.ContainsFunc(p.modules, func(m Module) bool { return m.Name == peer }) {
			return nil, fmt.Errorf("no address for the %s service: set -%s-addr (FOUNDRY_%s_ADDR)", peer, peer, strings.ToUpper(peer))
		}
		addr = p.GRPCAddr
	}
	p.connMu.Lock()
	defer p.connMu.Unlock()
	if c, ok := p.conns[addr]; ok {
		return c, nil
	}
	target, opts := addr, grpcserver.ClientOptions(p.clientMetrics, p.clientCreds)
	if replicas := splitList(addr); len(replicas) > 1 {
		// Several replicas: a resolver of this connection's own hands gRPC
		// the list, and round robin (ClientOptions) spreads calls over
		// those that answer. Each address keeps its host as the TLS server
		// name, as when it is dialled alone.
		r := manual.NewBuilderWithScheme("foundry-replicas")
		var state resolver.State
		for _, a := range replicas {
			host, _, _ := net.SplitHostPort(a)
			state.Addresses = append(state.Addresses, resolver.Address{Addr: a, ServerName: host})
		}
		r.InitialState(state)
		target, opts = r.Scheme()+":///"+peer, append(opts, grpc.WithResolvers(r))
	}
	c, err := grpc.NewClient(target, opts...)
	if err != nil {
		return nil, fmt.Errorf("dial %s at %s: %w", peer, addr, err)
	}
	p.conns[addr] = c
	return c, nil
}

// Done delivers the first fatal server error.
func (p *Process) Done() <-chan error { return p.errs }

// Stop reports NOT_SERVING, waits the shutdown delay, drains the HTTP and
// gRPC servers (cutting them off after the shutdown timeout), stops the
// background loops and closes the databases. It is safe to call twice.
func (p *Process) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() {
		p.health.Shutdown()
		if d := p.Settings.ShutdownDelay; d > 0 {
			p.Log.Info("reported NOT_SERVING; waiting before draining", zap.Duration("delay", d))
			select {
			case <-time.After(d):
			case <-ctx.Done():
			}
		}
		dctx, cancel := context.WithTimeout(ctx, p.Settings.ShutdownTimeout)
		defer cancel()
		var errs []error
		for _, srv := range []*http.Server{p.httpSrv, p.adminSrv} {
			if srv != nil {
				if err := srv.Shutdown(dctx); err != nil {
					errs = append(errs, err)
				}
			}
		}
		drained := make(chan struct{})
		go func() { p.grpc.GracefulStop(); close(drained) }()
		select {
		case <-drained:
		case <-dctx.Done():
			p.grpc.Stop()
			errs = append(errs, errors.New("gRPC drain timed out"))
		}
		p.release()
		p.stopErr = errors.Join(errs...)
		p.Log.Info("stopped")
		_ = p.Log.Sync()
	})
	return p.stopErr
}

// release stops the loops and frees every resource; also used when Start
// fails half-way.
func (p *Process) release() {
	for _, srv := range []*http.Server{p.httpSrv, p.adminSrv} {
		if srv != nil {
			_ = srv.Close()
		}
	}
	p.loopCancel()
	p.loops.Wait()
	for i := len(p.onStop) - 1; i >= 0; i-- {
		p.onStop[i]()
	}
	p.connMu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[string]*grpc.ClientConn{}
	p.connMu.Unlock()
	for _, db := range p.dbs {
		db.Close()
	}
	p.dbs = map[string]*database.DB{}
	p.grpc.Stop()
	if p.stopTracing != nil {
		// Flush the spans of the last requests; a collector that is gone
		// must not hold the exit up for long.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := p.stopTracing(ctx); err != nil {
			p.Log.Warn("flush traces", zap.Error(err))
		}
		cancel()
		p.stopTracing = nil
	}
	// The JSON log is buffered (logging.New): what a start that failed
	// half-way logged is written before its error ends the process.
	_ = p.Log.Sync()
}

// serviceName is the tracing service of a process running modules:
// "foundry-<module>" for one module (a Kubernetes Deployment),
// "foundry" for several (the laptop run). OTEL_SERVICE_NAME overrides it.
func serviceName(modules []Module) string {
	if len(modules) == 1 {
		return "foundry-" + modules[0].Name
	}
	return "foundry"
}

// AdminKeyFile is where a process without a configured administrator key
// keeps the one it generated, under its data directory: the next run
// reuses it, and the CLI finds it there (docs/cli.md).
const AdminKeyFile = "admin.key"

// localAdminKey gives a process with no administrator key configured (a
// laptop's make run) the key in <data-dir>/admin.key, generating and
// writing it (mode 0600) the first time, so the key survives restarts and
// local tools can read it instead of copying it from a log. A data
// directory that cannot be written (a read-only container) only costs
// that: the generated key still works for this run.
func (s *Settings) localAdminKey(log *zap.Logger) {
	path := filepath.Join(s.DataDir, AdminKeyFile)
	s.AdminKeyPath = path
	if raw, err := os.ReadFile(path); err == nil && strings.TrimSpace(string(raw)) != "" {
		s.AdminKey = strings.TrimSpace(string(raw))
		log.Info("no administrator key configured: using the one in "+path, zap.String("path", path))
		return
	}
	s.AdminKey = generateKey()
	err := os.MkdirAll(s.DataDir, 0o700)
	if err == nil {
		err = os.WriteFile(path, []byte(s.AdminKey+"\n"), 0o600)
	}
	if err != nil {
		s.AdminKeyPath = ""
		log.Warn("no administrator key configured: generated one for this run (it could not be saved)",
			zap.String("admin_key", s.AdminKey), zap.Error(err))
		return
	}
	log.Warn("no administrator key configured: generated one and saved it in "+path, zap.String("path", path))
}

// checkAdminKey refuses a key that was set but is empty or blank. Generating
// one then would be wrong twice over: each replica would make up its own
// key (so the administrator's key works on one pod in N), and the mistake
// (an empty Kubernetes Secret value) would go unnoticed. Only a key not set
// at all, the laptop run, is generated.
//
// A key shorter than MinKeyBytes is refused too, as are the keys accepted
// beside it while one rotates: the administrator key is the bootstrap
// admin credential, and a 2-character one is guessed in a few hundred
// requests. The rule is the freeze signers' (secrets of 32 bytes or more).
func (s *Settings) checkAdminKey() error {
	if s.adminKeyGiven && strings.TrimSpace(s.AdminKey) == "" {
		return errors.New("FOUNDRY_ADMIN_KEY (-admin-key) is set but empty: give it a value (check the Secret it comes from), " +
			"or leave it unset entirely for a local run to generate one")
	}
	key := ""
	if s.adminKeyGiven {
		key = s.AdminKey
	}
	return checkKeyLengths("FOUNDRY_ADMIN_KEY (-admin-key)", key, "FOUNDRY_ADMIN_KEY_ACCEPT (-admin-key-accept)", s.AdminKeyAccept)
}

// MinKeyBytes is the least length of an administrator or service key: 32
// bytes, as for the freeze signers' secrets (`openssl rand -hex 24` gives
// 48 characters).
const MinKeyBytes = 32

// checkKeyLengths refuses a key (none when "") or any key of its
// comma-separated accepted list shorter than MinKeyBytes, naming the
// setting and never the key.
func checkKeyLengths(setting, key, acceptSetting, accepted string) error {
	short := func(name, k string) error {
		if n := len(strings.TrimSpace(k)); n < MinKeyBytes {
			return fmt.Errorf("%s is too short: %d bytes where at least %d are needed, since a short key is guessed "+
				"(make one with `openssl rand -hex 24`)", name, n, MinKeyBytes)
		}
		return nil
	}
	if key != "" {
		if err := short(setting, key); err != nil {
			return err
		}
	}
	for _, k := range splitList(accepted) {
		if err := short("a key of "+acceptSetting, k); err != nil {
			return err
		}
	}
	return nil
}

// serviceCredentials settles how this process proves itself to its peers
// and checks its callers (see servicecred), returning the TLS configs when
// mutual TLS is configured.
//
// A key set but empty is refused, as the administrator key is. A key not
// set at all is generated only for a process that names no peer address
// (the laptop run: every gRPC call it makes is to itself). A process that
// names one calls, and is called by, other processes that cannot know a
// key it made up, so it must be given one (or certificates).
func (s *Settings) serviceCredentials(log *zap.Logger) (serverTLS, clientTLS *tls.Config, err error) {
	if s.GRPCTLS.Enabled() {
		if serverTLS, clientTLS, err = s.GRPCTLS.Configs(); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case s.serviceKeyGiven && strings.TrimSpace(s.ServiceKey) == "":
		return nil, nil, errors.New("FOUNDRY_SERVICE_KEY (-service-key) is set but empty: give every Foundry process the same value " +
			"(check the Secret it comes from), or leave it unset entirely for a single-process run")
	case s.ServiceKey != "":
		if err := checkKeyLengths("FOUNDRY_SERVICE_KEY (-service-key)", s.ServiceKey,
			"FOUNDRY_SERVICE_KEY_ACCEPT (-service-key-accept)", s.ServiceKeyAccept); err != nil {
			return nil, nil, err
		}
		return serverTLS, clientTLS, nil
	case serverTLS != nil:
		return serverTLS, clientTLS, nil
	}
	if peer, addr := s.remotePeer(); peer != "" {
		return nil, nil, fmt.Errorf("FOUNDRY_SERVICE_KEY (-service-key) is not set, and this process talks to other Foundry processes "+
			"(the %s service at %s): give every process the same service key, or configure mutual TLS (FOUNDRY_GRPC_TLS_*)",
			peer, addr)
	}
	// Neither logged nor shown: it is the process's own (people call gRPC
	// with their own credential), and logs are shipped and kept.
	s.ServiceKey = generateKey()
	log.Info("no service key configured: generated one for this run, which only its own calls present")
	return nil, nil, nil
}

// remotePeer is the first peer this process reaches at an address of its
// own, and that address; "" when it runs every peer itself.
func (s *Settings) remotePeer() (name, addr string) {
	for _, peer := range s.peers {
		if a := *s.PeerAddrs[peer]; a != "" {
			return peer, a
		}
	}
	return "", ""
}

// splitList returns the non-blank items of a comma-separated setting.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func generateKey() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

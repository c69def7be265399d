// Package allinonetest starts the whole of Foundry inside a test, on
// loopback ports the OS picks, so black-box tests talk to it over real HTTP
// and gRPC exactly as a client would.
package allinonetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/servicecred"
)

// AdminKey is the administrator key every test system is started with.
const AdminKey = "test-admin-key-0123456789abcdef0123"

// AuditSigningKey is the audit signing key every process NewProc and
// StartModules start is given (FOUNDRY_AUDIT_SIGNING_KEY): replicas of
// one test system are one ledger, which trusts only checkpoints its own
// key signed, and a ledger beside other processes refuses to start
// without one. A test key, made by foundry audit keygen for the tests.
const AuditSigningKey = "PRIVATE+KEY+foundry-test+b31d5e36+AZUfPHyftkaMu2K0uJMnIAyHKobx5//aXaf8wSx4afb5"

// ServiceKey is the service key every test system is started with, so
// systems started separately (StartModules) can call each other.
const ServiceKey = "test-service-key-0123456789abcdef01"

// PrincipalSigningKey and PrincipalVerifierKey are the gateway key pair
// every test system is started with (foundry gateway keygen made them for
// the tests), so a gateway started apart from the services
// (StartModules, NewProc) forwards principals the services believe.
const (
	PrincipalSigningKey  = "PRIVATE+KEY+foundry-test-gateway+f27245c5+AfxWL4Fi8NhKwcyxi3R8BOt3zAKdjwWYle7ehQnKF4TY"
	PrincipalVerifierKey = "foundry-test-gateway+f27245c5+AelaUmaB1SUALSMiOrAIABxZfX2T6e15AfTIiY8A1axL"
)

// System is a running Foundry.
type System struct {
	// BaseURL is the gateway's root, e.g. http://127.0.0.1:41234.
	BaseURL string
	// GRPCAddr is the gRPC server's address.
	GRPCAddr string
	// Storage describes where the data lives; Restart reuses it.
	Storage Storage

	t    testing.TB
	args []string
	proc *app.Process
}

// Storage is a test system's data location.
type Storage struct {
	Engine      database.Engine
	DataDir     string
	DatabaseURL string
}

// NewStorage makes empty storage on engine: a temporary directory for
// SQLite, a fresh database (dropped after the test) on the Postgres test
// server.
func NewStorage(t testing.TB, engine database.Engine) Storage {
	t.Helper()
	s := Storage{Engine: engine, DataDir: t.TempDir()}
	if engine != database.Postgres {
		return s
	}
	base := dbtest.PostgresURL()
	if base == "" {
		t.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to the Postgres test server: %v", err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	name := "foundry_e2e_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		_ = conn.Close(ctx)
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if _, err := conn.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
		_ = conn.Close(context.Background())
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", dbtest.URLEnv, err)
	}
	u.Path = "/" + name
	s.DatabaseURL = u.String()
	return s
}

// Start runs every module on storage with extra flags appended (for
// example "-register-rate-per-min=3") and stops it when the test ends.
func Start(t testing.TB, storage Storage, extra ...string) *System {
	t.Helper()
	args := []string{
		"-grpc-addr=127.0.0.1:0", "-http-addr=127.0.0.1:0", "-admin-addr=",
		"-data-dir=" + storage.DataDir, "-database-url=" + storage.DatabaseURL,
		"-admin-key=" + AdminKey, "-service-key=" + ServiceKey, "-log-format=json", "-log-level=error",
		"-principal-signing-key=" + PrincipalSigningKey, "-principal-verifier-keys=" + PrincipalVerifierKey,
		// Every test client is 127.0.0.1: the throttles per client address
		// would make one test's deliberate failures another's 429s. Tests
		// of the throttles pass their own limit.
		"-register-rate-per-min=0", "-auth-failures-per-min=0", "-reads-per-min=0",
		// The economy monitor would change the economy's mode under a test that
		// did not ask for it; tests that want it pass -monitor-interval.
		"-monitor-interval=0",
	}
	sys := &System{t: t, Storage: storage, args: append(args, extra...)}
	sys.start()
	t.Cleanup(sys.Stop)
	return sys
}

// StartModules runs only the modules in target (comma-separated, e.g.
// "ledger" or "portfolio,agent,ops,gateway") on storage, with extra flags
// appended. With a fixed "-grpc-addr=" + FreeAddr(t) among them, the modules
// keep their address across Stop and Restart, so another system started
// with "-ledger-addr=..." (say) finds them again: a test can stop one
// service and bring it back.
//
// Each is given AuditSigningKey (extra may override it): a ledger that runs
// beside other Foundry processes needs one.
func StartModules(t testing.TB, storage Storage, target string, extra ...string) *System {
	t.Helper()
	return Start(t, storage, append([]string{"-target=" + target, "-audit-signing-key=" + AuditSigningKey}, extra...)...)
}

// FreeAddr returns a loopback address that nothing listens on right now.
// The port comes from below the kernel's ephemeral range when it can: a
// port from that range, free now, may be taken by the next outgoing
// connection (to Postgres, say) before the process that is to listen on it
// starts, and then fails with "address already in use".
func FreeAddr(t testing.TB) string {
	t.Helper()
	low := ephemeralLow()
	for range 50 {
		if low <= 10000 {
			break
		}
		addr := fmt.Sprintf("127.0.0.1:%d", 10000+mrand.IntN(low-10000))
		if lis, err := net.Listen("tcp", addr); err == nil {
			_ = lis.Close()
			return addr
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("find a free port: %v", err)
	}
	addr := lis.Addr().String()
	if err := lis.Close(); err != nil {
		t.Fatalf("free port %s: %v", addr, err)
	}
	return addr
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux),
// or 0 when unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	fields := strings.Fields(string(b))
	if len(fields) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(fields[0])
	return n
}

// Running reports whether the system is running (not stopped).
func (s *System) Running() bool { return s.proc != nil }

func (s *System) start() {
	s.t.Helper()
	settings, modules, _, err := app.Parse("foundry", allinone.Modules(), s.args, app.Options{Getenv: func(string) string { return "" }})
	if err != nil {
		s.t.Fatalf("parse settings: %v", err)
	}
	proc, err := app.Start(context.Background(), settings, modules)
	if err != nil {
		s.t.Fatalf("start foundry: %v", err)
	}
	s.proc = proc
	s.BaseURL = "http://" + proc.HTTPAddr
	s.GRPCAddr = proc.GRPCAddr
}

// Stop stops the system; safe to call more than once.
func (s *System) Stop() {
	if s.proc == nil {
		return
	}
	if err := s.proc.Stop(context.Background()); err != nil {
		s.t.Errorf("stop foundry: %v", err)
	}
	s.proc = nil
}

// Restart stops the system (unless already stopped) and starts it again on
// the same storage, as an operator restarting `make run` would: on new
// ports, or on the same ones when the flags fix them.
func (s *System) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Dial returns a gRPC connection to the system that presents the service
// key, as another Foundry process would; it is closed when the test ends.
func (s *System) Dial(t testing.TB) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(s.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(servicecred.PerRPC(ServiceKey, false)))
	if err != nil {
		t.Fatalf("dial %s: %v", s.GRPCAddr, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// URL joins the base URL and a path.
func (s *System) URL(path string) string { return fmt.Sprintf("%s%s", s.BaseURL, path) }

// ServiceNames are the names of Foundry's services (allinone.Services), in
// start order: tests that start each service in a process of its own, or
// expect one row per service, take them from here rather than typing them.
func ServiceNames() []string {
	var names []string
	for _, m := range allinone.Services() {
		names = append(names, m.Name)
	}
	return names
}

// ReadinessChecks are the checks GET /api/ready reports in a whole
// Foundry: ops's own database and each service ops probes, every service
// but ops itself.
func ReadinessChecks() []string {
	checks := []string{"ops database"}
	for _, name := range ServiceNames() {
		if name != "ops" {
			checks = append(checks, name)
		}
	}
	return checks
}

package app_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	platforminternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/platform/v1"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/servicecred"
)

var migrations = fstest.MapFS{
	"postgres/0001_t.sql": {Data: []byte("CREATE TABLE t (id INTEGER PRIMARY KEY);")},
	"sqlite/0001_t.sql":   {Data: []byte("CREATE TABLE t (id INTEGER PRIMARY KEY);")},
}

// module is a minimal module with a database, a flag and an HTTP handler.
func module(started *string) app.Module {
	var greeting string
	return app.Module{
		Name:       "demo",
		Service:    "demo.v1.DemoService",
		Migrations: migrations,
		Flags: func(fs *config.FlagSet) {
			fs.String(&greeting, "greeting", "DEMO_GREETING", "hello", "greeting")
		},
		Start: func(_ context.Context, h *app.Host) error {
			*started = greeting
			h.ServeHTTP(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(greeting)) }))
			return nil
		},
	}
}

func settings(t *testing.T, mods []app.Module, args ...string) (*app.Settings, []app.Module) {
	t.Helper()
	base := []string{"-grpc-addr=127.0.0.1:0", "-http-addr=127.0.0.1:0", "-admin-addr=127.0.0.1:0",
		"-data-dir=" + t.TempDir(), "-log-level=error", "-log-format=json"}
	s, selected, rest, err := app.Parse("test", mods, append(base, args...), app.Options{Getenv: func(string) string { return "" }})
	require.NoError(t, err)
	require.Empty(t, rest)
	return s, selected
}

func TestStartServesAndStops(t *testing.T) {
	t.Parallel()
	var started string
	s, mods := settings(t, []app.Module{module(&started)}, "-greeting=hi")
	p, err := app.Start(context.Background(), s, mods)
	require.NoError(t, err)
	require.Equal(t, "hi", started, "the module saw its own flag")
	require.NotEmpty(t, s.AdminKey, "an admin key is generated when none is set")

	resp, err := http.Get("http://" + p.HTTPAddr + "/")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	conn, err := grpc.NewClient(p.GRPCAddr, asPeer(p)...)
	require.NoError(t, err)
	defer conn.Close()
	hc := healthpb.NewHealthClient(conn)
	for _, svc := range []string{"", "demo.v1.DemoService"} {
		hr, err := hc.Check(context.Background(), &healthpb.HealthCheckRequest{Service: svc})
		require.NoError(t, err)
		require.Equal(t, healthpb.HealthCheckResponse_SERVING, hr.GetStatus(), "service %q", svc)
	}
	for path, want := range map[string]int{"/healthz": 200, "/readyz": 200, "/metrics": 200} {
		r, err := http.Get("http://" + p.AdminAddr + path)
		require.NoError(t, err)
		r.Body.Close()
		require.Equal(t, want, r.StatusCode, path)
	}
	r, err := http.Get("http://" + p.AdminAddr + "/metrics")
	require.NoError(t, err)
	scrape, err := io.ReadAll(r.Body)
	r.Body.Close()
	require.NoError(t, err)
	for _, want := range []string{
		`grpc_server_handled_total{grpc_code="OK",grpc_method="Check",grpc_service="grpc.health.v1.Health",grpc_type="unary"} 2`,
		`grpc_server_handled_total{grpc_code="OK",grpc_method="DescribeStorage",grpc_service="foundry.internal.platform.v1.StorageService",grpc_type="unary"} 0`,
		`foundry_build_info{go_version="go`,
		`go_sql_open_connections{db_name="demo",module="demo"}`,
	} {
		require.Contains(t, string(scrape), want)
	}
	r, err = http.Get("http://" + p.AdminAddr + "/debug/pprof/")
	require.NoError(t, err)
	r.Body.Close()
	require.Equal(t, http.StatusNotFound, r.StatusCode, "profiles are off unless -pprof")

	require.NoError(t, p.Stop(context.Background()))
	require.NoError(t, p.Stop(context.Background()), "stopping twice is harmless")
	closed, err := http.Get("http://" + p.HTTPAddr + "/")
	if err == nil {
		closed.Body.Close()
	}
	require.Error(t, err, "the HTTP server is closed")
}

func TestStartFailsCleanlyWhenAPortIsTaken(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer lis.Close()
	var started string
	s, mods := settings(t, []app.Module{module(&started)}, "-http-addr="+lis.Addr().String())
	p, err := app.Start(context.Background(), s, mods)
	require.ErrorContains(t, err, "listen HTTP")
	require.Nil(t, p)
}

func TestTargetSelection(t *testing.T) {
	t.Parallel()
	a := app.Module{Name: "a"}
	b := app.Module{Name: "b"}
	for target, want := range map[string][]string{"all": {"a", "b"}, "b": {"b"}, "b,a,b": {"b", "a"}} {
		_, mods, _, err := app.Parse("t", []app.Module{a, b}, []string{"-target=" + target}, app.Options{Getenv: func(string) string { return "" }})
		require.NoError(t, err)
		var got []string
		for _, m := range mods {
			got = append(got, m.Name)
		}
		require.Equal(t, want, got, "target %q", target)
	}
	_, _, _, err := app.Parse("t", []app.Module{a, b}, []string{"-target=c"}, app.Options{Getenv: func(string) string { return "" }})
	require.ErrorContains(t, err, `unknown target "c"`)
}

func TestDialNeedsAnAddressForAnAbsentPeer(t *testing.T) {
	t.Parallel()
	var dialErr error
	m := app.Module{Name: "solo", Peers: []string{"ledger"}, Start: func(_ context.Context, h *app.Host) error {
		_, dialErr = h.Dial("ledger")
		return nil
	}}
	s, mods := settings(t, []app.Module{m})
	p, err := app.Start(context.Background(), s, mods)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Stop(context.Background())) })
	require.ErrorContains(t, dialErr, "-ledger-addr")
}

// TestDialRefusesAnUndeclaredPeer: a module dials only the peers it
// declares, also in a process that runs the peer itself, where the call
// would work but the module's own binary would have no address for it.
func TestDialRefusesAnUndeclaredPeer(t *testing.T) {
	t.Parallel()
	var dialErr error
	target := app.Module{Name: "target", Service: "target.v1.Target"}
	m := app.Module{Name: "solo", Start: func(_ context.Context, h *app.Host) error {
		_, dialErr = h.Dial("target")
		return nil
	}}
	s, mods := settings(t, []app.Module{target, m})
	p, err := app.Start(context.Background(), s, mods)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Stop(context.Background())) })
	require.ErrorContains(t, dialErr, `the solo module dials target, which it does not declare: add "target" to its app.Module Peers`)
}

// TestPeersFollowTheModules: a process takes the address of each module
// serving gRPC among those it knows, of each peer they declare and of the
// ledger (which verifies tokens for every process), and of nothing else.
func TestPeersFollowTheModules(t *testing.T) {
	t.Parallel()
	a := app.Module{Name: "a", Service: "a.v1.A"}
	b := app.Module{Name: "b", Service: "b.v1.B", Peers: []string{"c", "a"}}
	front := app.Module{Name: "front", Peers: []string{"b"}}
	require.Equal(t, []string{"a", "b", "c", "ledger"}, app.Peers([]app.Module{a, b, front}))
	require.Equal(t, []string{"b", "ledger"}, app.Peers([]app.Module{front}), "a module without a service is no peer")
	require.Equal(t, []string{"ledger"}, app.Peers(nil))

	env := map[string]string{"FOUNDRY_LEDGER_ADDR": "10.0.0.2:9090", "FOUNDRY_A_ADDR": "10.0.0.3:9090"}
	opts := app.Options{Getenv: func(k string) string { return env[k] }}
	s, _, _, err := app.Parse("front", []app.Module{front}, []string{"-b-addr=10.0.0.1:9090"}, opts)
	require.NoError(t, err)
	require.Equal(t, []string{"b", "ledger"}, slices.Sorted(maps.Keys(s.PeerAddrs)))
	require.Equal(t, "10.0.0.1:9090", *s.PeerAddrs["b"])
	require.Equal(t, "10.0.0.2:9090", *s.PeerAddrs["ledger"])

	_, _, _, err = app.Parse("front", []app.Module{front}, []string{"-a-addr=10.0.0.1:9090"}, opts)
	require.ErrorContains(t, err, "-a-addr", "a module that dials no a takes no address for it")
}

func TestAdminKeyRule(t *testing.T) {
	t.Parallel()
	const (
		envKey  = "k-env-0123456789abcdef0123456789ab"
		flagKey = "k-flag-0123456789abcdef0123456789a"
		empty   = "FOUNDRY_ADMIN_KEY (-admin-key) is set but empty"
	)
	base := []string{"-grpc-addr=127.0.0.1:0", "-http-addr=127.0.0.1:0", "-admin-addr=", "-log-level=error", "-log-format=json"}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string
		wantKey string // "" means "a generated one"
	}{
		{"not set at all: generated (the laptop run)", nil, nil, "", ""},
		{"set in the environment", nil, map[string]string{"FOUNDRY_ADMIN_KEY": envKey}, "", envKey},
		{"set as a flag", []string{"-admin-key=" + flagKey}, nil, "", flagKey},
		{"an empty variable (an empty Secret value)", nil, map[string]string{"FOUNDRY_ADMIN_KEY": ""}, empty, ""},
		{"a blank variable", nil, map[string]string{"FOUNDRY_ADMIN_KEY": " \n"}, empty, ""},
		{"an empty flag", []string{"-admin-key="}, nil, empty, ""},
		{"a blank flag", []string{"-admin-key=  "}, nil, empty, ""},
		{"an empty flag does not fall back to the variable", []string{"-admin-key="}, map[string]string{"FOUNDRY_ADMIN_KEY": envKey}, empty, ""},
		// The issue's: a 2-character admin key was accepted at startup.
		{"a short key", []string{"-admin-key=ab"}, nil, "FOUNDRY_ADMIN_KEY (-admin-key) is too short: 2 bytes where at least 32 are needed", ""},
		{"31 bytes", nil, map[string]string{"FOUNDRY_ADMIN_KEY": envKey[:31]}, "is too short: 31 bytes where at least 32", ""},
		{"a short key accepted while rotating", []string{"-admin-key=" + flagKey, "-admin-key-accept=" + envKey + ",short"}, nil,
			"a key of FOUNDRY_ADMIN_KEY_ACCEPT (-admin-key-accept) is too short: 5 bytes", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := append(append([]string{"-data-dir=" + t.TempDir()}, base...), tt.args...)
			s, mods, _, err := app.Parse("test", []app.Module{{Name: "demo"}}, args, app.Options{
				LookupEnv: func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok },
			})
			require.NoError(t, err)
			p, err := app.Start(context.Background(), s, mods)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.Nil(t, p, "nothing runs")
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = p.Stop(context.Background()) })
			if tt.wantKey == "" {
				require.Len(t, s.AdminKey, 48, "a generated key: got %q", s.AdminKey)
				return
			}
			require.Equal(t, tt.wantKey, s.AdminKey)
			require.Empty(t, s.AdminKeyPath, "a configured key is written nowhere")
		})
	}
}

// TestGeneratedAdminKeyIsKept: a laptop run with no key configured saves
// the one it generates in <data-dir>/admin.key (only its owner may read
// it), and the next run uses it again.
func TestGeneratedAdminKeyIsKept(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	start := func() string {
		t.Helper()
		s, mods, _, err := app.Parse("test", []app.Module{{Name: "demo"}}, []string{"-data-dir=" + dir, "-grpc-addr=127.0.0.1:0",
			"-http-addr=127.0.0.1:0", "-admin-addr=", "-log-level=error", "-log-format=json"},
			app.Options{LookupEnv: func(string) (string, bool) { return "", false }})
		require.NoError(t, err)
		p, err := app.Start(context.Background(), s, mods)
		require.NoError(t, err)
		require.NoError(t, p.Stop(context.Background()))
		require.Equal(t, filepath.Join(dir, "admin.key"), s.AdminKeyPath)
		return s.AdminKey
	}
	first := start()
	raw, err := os.ReadFile(filepath.Join(dir, "admin.key"))
	require.NoError(t, err)
	require.Equal(t, first+"\n", string(raw))
	info, err := os.Stat(filepath.Join(dir, "admin.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), info.Mode().Perm())
	require.Equal(t, first, start(), "the next run reads it back")
}

func TestTrustedProxiesSetting(t *testing.T) {
	t.Parallel()
	noEnv := app.Options{Getenv: func(string) string { return "" }}
	s, _, _, err := app.Parse("test", []app.Module{{Name: "demo"}}, []string{"-trusted-proxies=10.0.0.0/8, 192.168.1.1"}, noEnv)
	require.NoError(t, err)
	require.Equal(t, "10.0.0.0/8,192.168.1.1/32", s.Proxies.String())
	_, _, _, err = app.Parse("test", []app.Module{{Name: "demo"}}, []string{"-trusted-proxies=ingress"}, noEnv)
	require.ErrorContains(t, err, "FOUNDRY_TRUSTED_PROXIES")
}

// TestReflectionSetting: reflection is served by default (grpcurl works on a
// laptop) and absent with -grpc-reflection=false.
func TestReflectionSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want bool
	}{{nil, true}, {[]string{"-grpc-reflection=false"}, false}} {
		var started string
		s, mods := settings(t, []app.Module{module(&started)}, tc.args...)
		p, err := app.Start(context.Background(), s, mods)
		require.NoError(t, err)
		conn, err := grpc.NewClient(p.GRPCAddr, asPeer(p)...)
		require.NoError(t, err)
		stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(context.Background())
		require.NoError(t, err)
		// Without reflection the server may end the stream before the
		// request is sent: Send then reports io.EOF, and Recv the status.
		if err := stream.Send(&reflectionpb.ServerReflectionRequest{
			MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			require.ErrorIs(t, err, io.EOF, "%v", tc.args)
		}
		resp, err := stream.Recv()
		if tc.want {
			require.NoError(t, err, "%v", tc.args)
			var names []string
			for _, svc := range resp.GetListServicesResponse().GetService() {
				names = append(names, svc.GetName())
			}
			require.Contains(t, names, "grpc.health.v1.Health")
		} else {
			require.Equal(t, codes.Unimplemented, status.Code(err), "%v", tc.args)
		}
		require.NoError(t, conn.Close())
		require.NoError(t, p.Stop(context.Background()))
	}
}

// asPeer are the dial options of another Foundry process calling p: they
// present p's service key (generated, as the tests give none).
func asPeer(p *app.Process) []grpc.DialOption {
	return []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithPerRPCCredentials(servicecred.PerRPC(p.Settings.ServiceKey, false))}
}

// TestServiceKeySettings: a key set but empty is refused; a process that
// names a peer address needs a key (or certificates) given to it; a process
// that names none generates one, which its gRPC server then requires.
func TestServiceKeySettings(t *testing.T) {
	t.Parallel()
	var started string
	s, mods := settings(t, []app.Module{module(&started)}, "-service-key=")
	_, err := app.Start(context.Background(), s, mods)
	require.ErrorContains(t, err, "FOUNDRY_SERVICE_KEY (-service-key) is set but empty")

	s, mods = settings(t, []app.Module{module(&started)}, "-ledger-addr=10.0.0.7:9090")
	_, err = app.Start(context.Background(), s, mods)
	require.ErrorContains(t, err, "the ledger service at 10.0.0.7:9090")

	// The issue's: a 1-character service key was accepted at startup.
	s, mods = settings(t, []app.Module{module(&started)}, "-service-key=k")
	_, err = app.Start(context.Background(), s, mods)
	require.ErrorContains(t, err, "FOUNDRY_SERVICE_KEY (-service-key) is too short: 1 bytes where at least 32")
	s, mods = settings(t, []app.Module{module(&started)}, "-service-key="+strings.Repeat("s", 32), "-service-key-accept=old")
	_, err = app.Start(context.Background(), s, mods)
	require.ErrorContains(t, err, "a key of FOUNDRY_SERVICE_KEY_ACCEPT (-service-key-accept) is too short: 3 bytes")

	s, mods = settings(t, []app.Module{module(&started)}, "-grpc-tls-cert=/nonexistent.pem")
	_, err = app.Start(context.Background(), s, mods)
	require.ErrorContains(t, err, "FOUNDRY_GRPC_TLS_KEY", "half a TLS configuration is refused")

	s, mods = settings(t, []app.Module{module(&started)})
	p, err := app.Start(context.Background(), s, mods)
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Stop(context.Background())) }()
	require.Len(t, s.ServiceKey, 48, "a key is generated for a process naming no peer")
	plain, err := grpc.NewClient(p.GRPCAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer plain.Close()
	_, err = platforminternalv1.NewStorageServiceClient(plain).DescribeStorage(context.Background(), &platforminternalv1.DescribeStorageRequest{Service: "demo"})
	require.Equal(t, codes.Unauthenticated, status.Code(err), "the generated key is required")
	peer, err := grpc.NewClient(p.GRPCAddr, asPeer(p)...)
	require.NoError(t, err)
	defer peer.Close()
	got, err := platforminternalv1.NewStorageServiceClient(peer).DescribeStorage(context.Background(), &platforminternalv1.DescribeStorageRequest{Service: "demo"})
	require.NoError(t, err)
	require.Equal(t, "demo", got.GetService())
}

// TestMigrateCommand: "migrate [up|status] [flags]" reads its flags after
// the action and refuses anything else; "migrate status -data-dir X" once
// applied every migration to ./data, the flags after "status" dropped.
func TestMigrateCommand(t *testing.T) {
	t.Parallel()
	var started string
	mods := []app.Module{module(&started)}
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := app.Run(context.Background(), "test", mods, append([]string{"migrate"}, args...), &out)
		return out.String(), err
	}
	out, err := run("status", "-data-dir", dir, "-log-level=error")
	require.NoError(t, err)
	require.Equal(t, "demo ("+filepath.Join(dir, "demo.db")+"): schema version 0, 1 pending: 0001_t\n", out)
	out, err = run("-data-dir", dir, "-log-level=error")
	require.NoError(t, err)
	require.Equal(t, "demo ("+filepath.Join(dir, "demo.db")+"): applied 1, schema version 1\n", out, "up is the default")
	out, err = run("status", "-data-dir="+dir, "-log-level=error")
	require.NoError(t, err)
	require.Equal(t, "demo ("+filepath.Join(dir, "demo.db")+"): schema version 1, 0 pending\n", out)

	for _, args := range [][]string{{"sideways"}, {"status", "-data-dir", dir, "extra"}, {"up", "status"}} {
		_, err := run(args...)
		var usage app.UsageError
		require.ErrorAs(t, err, &usage, "%v", args)
	}
	_, err = run("status", "-no-such-flag")
	require.ErrorAs(t, err, new(app.UsageError), "a bad flag is a usage error too")

	// A schema owner role: Postgres, migrate up, one module.
	for args, want := range map[string][]string{
		"needs Postgres": {"-data-dir", dir, "-database-owner-url=postgres://demo:pw@db/foundry"},
		"goes with migrate up": {"status", "-database-url=postgres://admin@db/foundry",
			"-database-owner-url=postgres://demo:pw@db/foundry"},
	} {
		_, err := run(want...)
		require.ErrorAs(t, err, new(app.UsageError), args)
		require.ErrorContains(t, err, args)
	}
}

// TestMigrateHandsTheSchemaToItsRole: with -database-owner-url, migrate up
// leaves the module's schema owned by that URL's role (migrate.EnsureOwner
// has the details and their test).
func TestMigrateHandsTheSchemaToItsRole(t *testing.T) {
	t.Parallel()
	base := dbtest.PostgresURL()
	if base == "" {
		t.Skipf("%s is not set: skipping Postgres", dbtest.URLEnv)
	}
	var started string
	schema := dbtest.UniqueSchema("demo")
	mods := []app.Module{module(&started)}
	mods[0].Name = schema
	role := schema + "_role"
	u, err := url.Parse(base)
	require.NoError(t, err)
	u.User = url.UserPassword(role, "pw")
	admin, err := database.Open(context.Background(), database.Config{URL: base, Schema: schema})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), `DROP OWNED BY `+role)
		_, _ = admin.Exec(context.Background(), `DROP ROLE IF EXISTS `+role)
		_, _ = admin.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+schema+` CASCADE`)
		admin.Close()
	})
	var out bytes.Buffer
	require.NoError(t, app.Run(context.Background(), "test", mods,
		[]string{"migrate", "-database-url=" + base, "-database-owner-url=" + u.String(), "-log-level=error"}, &out))
	require.Contains(t, out.String(), schema+": schema "+schema+" owned by role "+role+", closed to every other role\n")
	var owner string
	require.NoError(t, admin.QueryRow(context.Background(), `SELECT pg_get_userbyid(nspowner) FROM pg_namespace WHERE nspname = $1`,
		schema).Scan(&owner))
	require.Equal(t, role, owner)
}

package allinonetest

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/platform/app"
)

// childEnv marks a run of a test binary as a Foundry process (see Main).
const childEnv = "FOUNDRY_TEST_RUN_FOUNDRY"

// hooked is set by Main: without it, a Proc would start the test binary
// running its tests again instead of Foundry.
var hooked bool

// Main is the TestMain of a test package that starts Foundry processes
// (Proc). A process is the test binary itself, run again with childEnv set:
// Main then runs Foundry with the arguments instead of the tests. That
// saves building a second binary, and under -race the processes run with
// the race detector too.
func Main(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		app.Main("foundry", allinone.Modules()...)
		return
	}
	hooked = true
	os.Exit(m.Run())
}

// Proc is a Foundry process: the test binary run again as Foundry (Main).
type Proc struct {
	// Name labels the process in failures ("ledger-1").
	Name string
	// HTTPAddr, GRPCAddr and AdminAddr are its fixed loopback addresses.
	HTTPAddr, GRPCAddr, AdminAddr string

	t    testing.TB
	args []string
	env  []string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// syncBuffer collects a process's output from two pipes at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// NewProc prepares a process running target on storage, on addresses of
// its own, with the test keys (AuditSigningKey and the principal keys in
// its environment) and
// extra flags; Start runs it. A process
// still running when the test ends is killed.
func NewProc(t testing.TB, name, target string, storage Storage, extra ...string) *Proc {
	t.Helper()
	p := &Proc{Name: name, HTTPAddr: FreeAddr(t), GRPCAddr: FreeAddr(t), AdminAddr: FreeAddr(t), t: t,
		env: []string{"FOUNDRY_AUDIT_SIGNING_KEY=" + AuditSigningKey,
			"FOUNDRY_PRINCIPAL_SIGNING_KEY=" + PrincipalSigningKey, "FOUNDRY_PRINCIPAL_VERIFIER_KEYS=" + PrincipalVerifierKey}}
	p.args = append([]string{
		"-target=" + target,
		"-grpc-addr=" + p.GRPCAddr, "-http-addr=" + p.HTTPAddr, "-admin-addr=" + p.AdminAddr,
		"-data-dir=" + storage.DataDir, "-database-url=" + storage.DatabaseURL,
		"-admin-key=" + AdminKey, "-service-key=" + ServiceKey, "-log-format=json", "-log-level=warn",
		// Every test client is 127.0.0.1: the throttles per client address
		// would make one test's deliberate failures another's 429s. Tests
		// of the throttles pass their own limit.
		"-register-rate-per-min=0", "-auth-failures-per-min=0", "-reads-per-min=0",
	}, extra...)
	t.Cleanup(func() {
		if p.Running() {
			p.Kill()
		}
		if t.Failed() && p.out != nil {
			t.Logf("output of %s:\n%s", p.Name, p.Output())
		}
	})
	return p
}

// With appends flags; call it before Start.
func (p *Proc) With(args ...string) *Proc {
	p.args = append(p.args, args...)
	return p
}

// WithEnv adds variables to the process's environment (after the test's
// own, so they win); call it before Start.
func (p *Proc) WithEnv(env ...string) *Proc {
	p.env = append(p.env, env...)
	return p
}

// Start runs the process and waits until its admin /readyz answers 200.
func (p *Proc) Start() {
	p.t.Helper()
	p.Launch()
	p.WaitReady(60 * time.Second)
}

// Launch runs the process without waiting for it to be ready, so several
// can start at once (WaitReady each afterwards).
func (p *Proc) Launch() {
	p.t.Helper()
	if !hooked {
		p.t.Fatal("allinonetest.Proc needs the test package's TestMain to call allinonetest.Main")
	}
	p.cmd = exec.Command(os.Args[0], p.args...)
	// A restarted process writes after what it wrote before: a failed
	// test shows every run's output (a chaos run kills and restarts
	// processes, and the run before the last is often the one that says
	// why).
	if p.out == nil {
		p.out = &syncBuffer{}
	} else {
		_, _ = fmt.Fprintf(p.out, "\n--- %s started again ---\n", p.Name)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Env = append(append(append(os.Environ(), "OTEL_SDK_DISABLED=true"), p.env...), childEnv+"=1")
	if err := p.cmd.Start(); err != nil {
		p.t.Fatalf("start %s: %v", p.Name, err)
	}
	p.done = make(chan struct{})
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
}

// WaitReady waits until the process reports ready, failing the test if it
// exits or does not within d.
func (p *Proc) WaitReady(d time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(d)
	client := &http.Client{Timeout: time.Second}
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			p.t.Fatalf("%s exited while starting (%v):\n%s", p.Name, p.err, p.Output())
		default:
		}
		if resp, err := client.Get("http://" + p.AdminAddr + "/readyz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatalf("%s not ready after %s:\n%s", p.Name, d, p.Output())
}

// Running reports whether the process was started and has not exited.
func (p *Proc) Running() bool {
	if p.done == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Signal sends sig to the process.
func (p *Proc) Signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %s: %v", p.Name, err)
	}
}

// Kill SIGKILLs the process and waits for it to go.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// Wait waits up to d for the process to exit: exited is false when it is
// still running after d, err its exit error (nil for status 0).
func (p *Proc) Wait(d time.Duration) (exited bool, err error) {
	select {
	case <-p.done:
		return true, p.err
	case <-time.After(d):
		return false, nil
	}
}

// Output is everything the process wrote so far.
func (p *Proc) Output() string {
	if p.out == nil {
		return ""
	}
	return p.out.String()
}

// URL joins the process's HTTP address and a path.
func (p *Proc) URL(path string) string { return "http://" + p.HTTPAddr + path }

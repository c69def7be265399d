package allinonetest

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Tests that signal or kill a process need Foundry as a real process: the
// binary is built once per test run, without the race detector (the
// processes under test are the product, not the test).
var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// Binary returns the path of a freshly built foundry binary (all modules,
// -target chooses).
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "foundry-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "foundry")
		cmd := exec.Command("go", "build", "-o", binPath, "github.com/foundryhq/foundry/services/allinone/cmd/foundry")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build foundry: %w\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// Proc is a Foundry process started from Binary.
type Proc struct {
	// Name labels the process in failures ("ledger-1").
	Name string
	// HTTPAddr, GRPCAddr and AdminAddr are its fixed loopback addresses.
	HTTPAddr, GRPCAddr, AdminAddr string

	t    testing.TB
	args []string
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
// its own, with the test keys and extra flags; Start runs it. A process
// still running when the test ends is killed.
func NewProc(t testing.TB, name, target string, storage Storage, extra ...string) *Proc {
	t.Helper()
	p := &Proc{Name: name, HTTPAddr: FreeAddr(t), GRPCAddr: FreeAddr(t), AdminAddr: FreeAddr(t), t: t}
	p.args = append([]string{
		"-target=" + target,
		"-grpc-addr=" + p.GRPCAddr, "-http-addr=" + p.HTTPAddr, "-admin-addr=" + p.AdminAddr,
		"-data-dir=" + storage.DataDir, "-database-url=" + storage.DatabaseURL,
		"-admin-key=" + AdminKey, "-service-key=" + ServiceKey, "-log-format=json", "-log-level=warn",
		"-register-rate-per-min=0",
	}, extra...)
	t.Cleanup(func() {
		if p.Running() {
			p.Kill()
		}
	})
	return p
}

// With appends flags; call it before Start.
func (p *Proc) With(args ...string) *Proc {
	p.args = append(p.args, args...)
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
	p.cmd = exec.Command(Binary(p.t), p.args...)
	p.out = &syncBuffer{}
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.Env = append(os.Environ(), "OTEL_SDK_DISABLED=true")
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

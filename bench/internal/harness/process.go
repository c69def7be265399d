package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// StartFoundry starts Foundry's binary on data at the production log
// level, with registration and reads unthrottled (the seed registers
// freely, the load reads from one address); extra
// flags (-target, peer addresses) follow. data is a postgres:// URL, or the
// directory of embedded SQLite's files: -database-url is then given empty,
// so a FOUNDRY_DATABASE_URL in the environment does not apply.
func StartFoundry(bin, data, httpAddr, grpcAddr, adminAddr string, pprof bool, extra ...string) (*Process, error) {
	dbURL, dataDir := data, os.TempDir()
	if !strings.HasPrefix(data, "postgres://") && !strings.HasPrefix(data, "postgresql://") {
		dbURL, dataDir = "", data
	}
	args := append([]string{"-database-url=" + dbURL, "-http-addr=" + httpAddr, "-grpc-addr=" + grpcAddr, "-admin-addr=" + adminAddr,
		"-admin-key=" + AdminKey, "-service-key=" + AdminKey + "-service", "-log-level=info", "-log-format=json", "-data-dir=" + dataDir}, extra...)
	env := []string{"FOUNDRY_REGISTER_RATE_PER_MIN=0", "FOUNDRY_READS_PER_MIN=0", fmt.Sprintf("FOUNDRY_PPROF=%t", pprof),
		"FOUNDRY_PRINCIPAL_SIGNING_KEY=" + principalSigningKey, "FOUNDRY_PRINCIPAL_VERIFIER_KEYS=" + principalVerifierKey}
	return Start(bin, env, args...)
}

// Process is a started server; its output goes to a temporary file (at
// the info level Foundry writes a line per request, as in production),
// read back for error messages.
type Process struct {
	Cmd *exec.Cmd
	out *os.File
}

// Pid is the process's id.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Output is the tail of what the process wrote.
func (p *Process) Output() string {
	b, _ := os.ReadFile(p.out.Name())
	const tail = 8 << 10
	if len(b) > tail {
		b = b[len(b)-tail:]
	}
	return string(b)
}

// Start starts bin with args, env added to this process's environment.
func Start(bin string, env []string, args ...string) (*Process, error) {
	out, err := os.CreateTemp("", program()+"-*.log")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		_ = os.Remove(out.Name())
		return nil, fmt.Errorf("start %s: %w (run `make build`?)", bin, err)
	}
	return &Process{Cmd: cmd, out: out}, nil
}

// Stop asks the process to end (SIGTERM), kills it if it has not within
// 20 s, and removes its output.
func (p *Process) Stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-done
	}
	_ = p.out.Close()
	_ = os.Remove(p.out.Name())
}

// ResidentMiB is a process's resident set (VmRSS, Linux) in MiB.
func ResidentMiB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kib float64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%f kB", &kib); err != nil {
				return 0, err
			}
			return kib / 1024, nil
		}
	}
	return 0, errors.New("no VmRSS")
}

// WaitHTTP waits until u answers 200, for at most limit.
func WaitHTTP(ctx context.Context, u string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("%s did not answer 200 within %s", u, limit)
}

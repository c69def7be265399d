package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/app"
	"github.com/foundryhq/foundry/services/platform/database"
)

// childEnv marks a run of this test binary as a Foundry process: TestMain
// then runs the foundry command with the arguments instead of the tests.
// The failover test needs real processes it can SIGKILL, and this saves
// building a second binary.
const childEnv = "FOUNDRY_E2E_RUN_FOUNDRY"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		app.Main("foundry", allinone.Modules()...)
		return
	}
	os.Exit(m.Run())
}

// process is a Foundry process started from this test binary.
type process struct {
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
}

// syncBuffer is a buffer the process's output is copied into (by exec's
// goroutine) while the test reads it.
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

func startProcess(t *testing.T, storage allinonetest.Storage, extra ...string) *process {
	t.Helper()
	return startProcessEnv(t, storage, nil, extra...)
}

// startProcessEnv is startProcess with env added to the child's environment.
func startProcessEnv(t *testing.T, storage allinonetest.Storage, env []string, extra ...string) *process {
	t.Helper()
	addr := allinonetest.FreeAddr(t)
	args := append([]string{
		"-grpc-addr=" + allinonetest.FreeAddr(t), "-http-addr=" + addr, "-admin-addr=",
		"-database-url=" + storage.DatabaseURL, "-data-dir=" + storage.DataDir,
		"-admin-key=" + allinonetest.AdminKey, "-log-format=json", "-log-level=info",
		"-register-rate-per-min=0", "-monitor-interval=0",
	}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), env...), childEnv+"=1")
	p := &process{cmd: cmd, url: "http://" + addr, logs: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.logs, p.logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("logs of %s:\n%s", p.url, p.logs.String())
		}
	})
	require.Eventually(t, func() bool {
		r, err := http.Get(p.url + "/api/agent/loop")
		if err != nil {
			return false
		}
		_ = r.Body.Close()
		return r.StatusCode == http.StatusOK
	}, 60*time.Second, 50*time.Millisecond, "process on %s did not come up", p.url)
	return p
}

// loopStatus reads GET /api/agent/loop: this replica's name and the leader
// ("" when none).
func (p *process) loopStatus(t *testing.T) (replica, leader string) {
	t.Helper()
	r, err := http.Get(p.url + "/api/agent/loop")
	require.NoError(t, err)
	defer r.Body.Close()
	require.Equal(t, http.StatusOK, r.StatusCode)
	var body struct {
		Replica string  `json:"replica"`
		Leader  *string `json:"leader"`
	}
	require.NoError(t, json.NewDecoder(r.Body).Decode(&body))
	if body.Leader != nil {
		leader = *body.Leader
	}
	return body.Replica, leader
}

// TestAgentLoopLeaderFailsOver runs two Foundry processes against one
// Postgres database with the loop on: exactly one leads; after a SIGKILL of
// the leader (no chance to give the lease up) the other leads within 10 s.
func TestAgentLoopLeaderFailsOver(t *testing.T) {
	t.Parallel()
	if os.Getenv("FOUNDRY_TEST_DATABASE_URL") == "" {
		t.Skip("FOUNDRY_TEST_DATABASE_URL is not set: the failover test needs Postgres")
	}
	storage := allinonetest.NewStorage(t, database.Postgres)
	storage.DataDir = filepath.Join(storage.DataDir, "unused")
	flags := []string{"-agent-loop", "-agent-loop-interval=1s"}
	// One after the other: the second finds the schema migrated.
	a := startProcess(t, storage, flags...)
	b := startProcess(t, storage, flags...)
	ra, _ := a.loopStatus(t)
	rb, _ := b.loopStatus(t)
	require.NotEqual(t, ra, rb)

	var leader string
	require.Eventually(t, func() bool {
		_, la := a.loopStatus(t)
		_, lb := b.loopStatus(t)
		leader = la
		return la != "" && la == lb
	}, 10*time.Second, 50*time.Millisecond, "the two processes never agreed on a leader")
	require.Contains(t, []string{ra, rb}, leader)

	// For three lease renewals the leader stays the same one.
	for range 30 {
		_, la := a.loopStatus(t)
		_, lb := b.loopStatus(t)
		require.Equal(t, leader, la)
		require.Equal(t, leader, lb)
		time.Sleep(100 * time.Millisecond)
	}

	dead, survivor, survivorName := a, b, rb
	if leader == rb {
		dead, survivor, survivorName = b, a, ra
	}
	killed := time.Now()
	require.NoError(t, dead.cmd.Process.Kill())
	_ = dead.cmd.Wait()
	require.Eventually(t, func() bool {
		_, l := survivor.loopStatus(t)
		return l == survivorName
	}, 10*time.Second, 50*time.Millisecond, "the survivor did not take over within 10 s")
	t.Logf("the survivor took over %s after the kill", time.Since(killed).Round(time.Millisecond))
}

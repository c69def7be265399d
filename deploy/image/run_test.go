package image_test

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/deploy/image"
)

// TestAllInOneImageRuns builds the all-in-one image as make image does (a
// real go build, the longest step: about a minute here), reads the tarball
// back, unpacks its layers into a directory and runs its entrypoint from
// there with its Cmd and Env, as a container would (the listen addresses
// and the data directory moved to this test's): the process answers
// /healthz and reports in foundry_build_info the version and revision the
// image's labels carry. The binary reads the CA bundle from the unpacked
// image (SSL_CERT_FILE); the time zones are linked into it (timetzdata).
func TestAllInOneImageRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the foundry binary (about a minute): not with -short")
	}
	t.Parallel()
	root, err := image.Root(".")
	require.NoError(t, err)
	out := t.TempDir()
	results, err := image.Build(t.Context(), image.Options{
		Root: root, Out: out, Registry: "registry.test/foundryhq", Log: t.Output(),
	}, []image.Binary{{Name: image.AllInOne, Package: "./cmd/foundry"}})
	require.NoError(t, err)
	require.Len(t, results, 1)
	res := results[0]
	t.Logf("%s %s %s %d bytes (version %s, revision %s)", res.Path, res.Ref, res.Digest, res.Size, res.Version, res.Revision)

	// The stamp: version from git describe (or 0.0.0-dev outside git), the
	// revision the toolchain recorded (unknown outside git).
	require.NotEmpty(t, res.Version)
	if _, err := os.Stat(filepath.Join(root, ".git")); err == nil {
		assert.Regexp(t, `^[0-9a-f]{40}(-dirty)?$`, res.Revision, "a build in a git checkout records its commit")
	} else {
		assert.Equal(t, "unknown", res.Revision)
		assert.Equal(t, "0.0.0-dev", res.Version)
	}
	assert.Equal(t, filepath.Join(out, "foundry.tar"), res.Path)
	assert.Equal(t, "registry.test/foundryhq/foundry:"+res.Version, res.Ref)

	tag, err := name.NewTag(res.Ref)
	require.NoError(t, err)
	img, err := tarball.ImageFromPath(res.Path, &tag)
	require.NoError(t, err)
	digest, err := img.Digest()
	require.NoError(t, err)
	assert.Equal(t, res.Digest, digest, "the digest printed is the tarball's")
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cfg := cf.Config
	require.Equal(t, []string{"/usr/local/bin/foundry"}, cfg.Entrypoint)
	require.Equal(t, []string{"-target=all"}, cfg.Cmd)
	require.Equal(t, "65532:65532", cfg.User)
	require.Equal(t, res.Version, cfg.Labels["org.opencontainers.image.version"])
	require.Equal(t, res.Revision, cfg.Labels["org.opencontainers.image.revision"])

	fsRoot := t.TempDir()
	files := unpack(t, img, fsRoot)
	require.NotNil(t, files["data/"])
	assert.Equal(t, 65532, files["data/"].Uid)

	// The container's environment, as the image sets it, with this test's
	// addresses and data directory.
	admin := freeAddr(t)
	override := map[string]string{
		"FOUNDRY_GRPC_ADDR":  freeAddr(t),
		"FOUNDRY_ADMIN_ADDR": admin,
		"FOUNDRY_HTTP_ADDR":  freeAddr(t),
		"FOUNDRY_DATA_DIR":   t.TempDir(),
		"SSL_CERT_FILE":      filepath.Join(fsRoot, "etc/ssl/certs/ca-certificates.crt"),
	}
	var env []string
	for _, kv := range cfg.Env {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := override[k]; !ok {
			env = append(env, kv)
		}
	}
	for k, v := range override {
		env = append(env, k+"="+v)
	}
	proc := exec.Command(filepath.Join(fsRoot, cfg.Entrypoint[0]), cfg.Cmd...)
	proc.Env, proc.Dir = env, t.TempDir()
	output := &syncBuffer{}
	proc.Stdout, proc.Stderr = output, output
	require.NoError(t, proc.Start())
	var waitErr error
	exited := make(chan struct{})
	go func() { waitErr = proc.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = proc.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("output of the image's foundry:\n%s", output.String())
		}
	})

	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("the image's foundry exited while starting: %v", waitErr)
		default:
		}
		if resp, err := client.Get("http://" + admin + "/healthz"); err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "the image's foundry did not answer /healthz on %s", admin)
		time.Sleep(100 * time.Millisecond)
	}

	resp, err := client.Get("http://" + admin + "/metrics")
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	line := regexp.MustCompile(`(?m)^foundry_build_info\{(.*)\} 1$`).FindSubmatch(body)
	require.NotNil(t, line, "no foundry_build_info in /metrics:\n%s", body)
	labels := map[string]string{}
	for _, m := range regexp.MustCompile(`(\w+)="([^"]*)"`).FindAllSubmatch(line[1], -1) {
		labels[string(m[1])] = string(m[2])
	}
	assert.Equal(t, res.Version, labels["version"], "foundry_build_info: the version linked in")
	assert.Equal(t, res.Revision, labels["revision"], "foundry_build_info: the revision recorded")
}

// freeAddr returns a loopback address nothing listens on now, from below
// the kernel's ephemeral range when it can (allinonetest.FreeAddr, which
// deploy does not import: its module stays free of the services').
func freeAddr(t *testing.T) string {
	t.Helper()
	low := 0
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			low, _ = strconv.Atoi(f[0])
		}
	}
	for range 50 {
		if low <= 10000 {
			break
		}
		addr := fmt.Sprintf("127.0.0.1:%d", 10000+rand.IntN(low-10000))
		if lis, err := net.Listen("tcp", addr); err == nil {
			require.NoError(t, lis.Close())
			return addr
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := lis.Addr().String()
	require.NoError(t, lis.Close())
	return addr
}

// syncBuffer collects the process's output from two pipes at once.
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

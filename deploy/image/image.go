// Package image builds Foundry's container images without a Docker daemon:
// one image per binary of the Makefile's BINARIES (make image), each written
// as a tarball that `docker load`, `crane push` and `skopeo copy
// docker-archive:` read.
//
// An image is two layers on nothing: the files every image shares (the CA
// certificates, /etc/passwd and /etc/group with the nonroot user 65532,
// /tmp), then the binary, static and built here, at /usr/local/bin/<name>
// (and, for the all-in-one foundry, an empty /data owned by nonroot). It
// holds what deploy/Dockerfile's distroless images hold that a Foundry
// binary uses, built in Go from files of this machine, so that no base
// image has to be pulled. Every time in it is the commit's (Stamp.Created),
// and the tar entries are sorted with fixed owners: the same commit builds
// the same layers.
package image

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

const (
	// AllInOne is the binary that runs every module in one process: its
	// image is <registry>/foundry, runs -target=all and keeps SQLite under
	// /data.
	AllInOne = "foundry"
	// DefaultRegistry is where the manifests (deploy/base) look for the
	// images.
	DefaultRegistry = "ghcr.io/foundryhq"
	// DefaultCACerts is the CA bundle copied into every image, at the same
	// path (Go's crypto/x509 reads it there on Linux).
	DefaultCACerts = "/etc/ssl/certs/ca-certificates.crt"
	// Source is the repository the images are built from (their
	// org.opencontainers.image.source label).
	Source = "https://github.com/foundryhq/foundry"

	// nonroot is the user and group the binaries run as, distroless'
	// nonroot, which the manifests' securityContext names (runAsUser 65532).
	nonroot = 65532
)

// Binary is one binary to build into an image: its name (the image's and
// the file's under /usr/local/bin) and its main package, relative to the
// repository root.
type Binary struct {
	Name    string
	Package string
}

// ParseBinaries reads the Makefile's BINARIES entries, name:package.
func ParseBinaries(specs []string) ([]Binary, error) {
	var out []Binary
	seen := map[string]bool{}
	for _, s := range specs {
		n, pkg, ok := strings.Cut(s, ":")
		if !ok || n == "" || pkg == "" || strings.ContainsAny(n, "/\\") {
			return nil, fmt.Errorf("binary %q: want name:package, e.g. ledger:./services/ledger/cmd/ledger", s)
		}
		if seen[n] {
			return nil, fmt.Errorf("binary %q named twice", n)
		}
		seen[n] = true
		out = append(out, Binary{Name: n, Package: pkg})
	}
	if len(out) == 0 {
		return nil, errors.New("no binary to build: name them as name:package (make image passes the Makefile's BINARIES)")
	}
	return out, nil
}

// Repository is the image repository of the binary name under registry:
// <registry>/foundry-<name>, and <registry>/foundry for the all-in-one.
func Repository(registry, name string) string {
	if name == AllInOne {
		return registry + "/foundry"
	}
	return registry + "/foundry-" + name
}

// Stamp identifies a build. Version and Revision are the image's labels and
// what its binary reports in foundry_build_info; Created is the image's
// creation time and every file's modification time.
type Stamp struct {
	// Version is the release, linked into the binary as
	// observability.Version.
	Version string
	// Revision is the commit the Go toolchain recorded in the binary
	// (vcs.revision, with "-dirty" when the tree had changes), as
	// observability.Build reports it; "unknown" outside git.
	Revision string
	// Created is the commit's time (SOURCE_DATE_EPOCH when set), so that
	// a rebuild of the same commit gives the same image.
	Created time.Time
}

// Options says where and how to build.
type Options struct {
	// Root is the repository root, which holds go.work.
	Root string
	// Out is the directory the tarballs are written to, <name>.tar.
	Out string
	// Registry prefixes every image's name (DefaultRegistry when empty).
	Registry string
	// Version is the release (DefaultVersion when empty); also the tag.
	Version string
	// Created is the images' time (DefaultCreated when zero).
	Created time.Time
	// GOARCH is the images' architecture (this machine's when empty).
	GOARCH string
	// CACerts is the CA bundle to copy (DefaultCACerts when empty).
	CACerts string
	// Log receives the commands run (go build), for the person watching.
	Log io.Writer
}

// Result is one image written.
type Result struct {
	Name string
	// Path is the tarball, Ref its tag.
	Path, Ref string
	// Digest is the manifest's digest as `crane push` pushes the tarball:
	// a docker-archive tarball keeps the config and layers as built, not
	// the manifest, and its reader describes them with a Docker schema 2
	// manifest.
	Digest v1.Hash
	// Size is the tarball's size in bytes.
	Size int64
	Stamp
}

// Build builds every binary and writes its image to Options.Out.
func Build(ctx context.Context, opts Options, bins []Binary) ([]Result, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Root == "" {
		root, err := Root(".")
		if err != nil {
			return nil, err
		}
		opts.Root = root
	}
	if opts.Registry == "" {
		opts.Registry = DefaultRegistry
	}
	if opts.GOARCH == "" {
		opts.GOARCH = runtime.GOARCH
	}
	if opts.CACerts == "" {
		opts.CACerts = DefaultCACerts
	}
	vcs := hasGit(opts.Root)
	if opts.Version == "" {
		opts.Version = DefaultVersion(ctx, opts.Root)
	}
	if opts.Created.IsZero() {
		created, err := DefaultCreated(ctx, opts.Root, os.Getenv)
		if err != nil {
			return nil, err
		}
		opts.Created = created
	}
	// Every tag is checked before the first (minutes-long) build.
	tags := make([]name.Tag, len(bins))
	for i, b := range bins {
		tag, err := name.NewTag(Repository(opts.Registry, b.Name) + ":" + opts.Version)
		if err != nil {
			return nil, fmt.Errorf("image of %s: REGISTRY %q and VERSION %q make no valid image name: %w", b.Name, opts.Registry, opts.Version, err)
		}
		tags[i] = tag
	}
	caCerts, err := os.ReadFile(opts.CACerts)
	if err != nil {
		return nil, fmt.Errorf("the images need CA certificates (for TLS to Postgres, an OTLP collector, ops' usage collectors) and this machine has none to copy: %w (install the ca-certificates package)", err)
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "foundry-image-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(work) }()

	var out []Result
	for i, b := range bins {
		bin := filepath.Join(work, b.Name)
		if err := compile(ctx, opts, b, bin, vcs); err != nil {
			return nil, err
		}
		revision, err := Revision(bin)
		if err != nil {
			return nil, err
		}
		binary, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		st := Stamp{Version: opts.Version, Revision: revision, Created: opts.Created}
		img, err := Assemble(b.Name, binary, caCerts, opts.GOARCH, st)
		if err != nil {
			return nil, fmt.Errorf("image of %s: %w", b.Name, err)
		}
		res, err := write(img, tags[i], filepath.Join(opts.Out, b.Name+".tar"))
		if err != nil {
			return nil, fmt.Errorf("image of %s: %w", b.Name, err)
		}
		res.Name, res.Stamp = b.Name, st
		out = append(out, res)
	}
	return out, nil
}

// write writes img as a tarball at path (through a temporary file, so that
// a failed build leaves no half tarball) and describes it as read back.
func write(img v1.Image, tag name.Tag, path string) (Result, error) {
	tmp := path + ".tmp"
	if err := tarball.WriteToFile(tmp, tag, img); err != nil {
		_ = os.Remove(tmp)
		return Result{}, fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return Result{}, err
	}
	back, err := tarball.ImageFromPath(path, &tag)
	if err != nil {
		return Result{}, fmt.Errorf("read back %s: %w", path, err)
	}
	res := Result{Path: path, Ref: tag.String()}
	if res.Digest, err = back.Digest(); err != nil {
		return Result{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return Result{}, err
	}
	res.Size = fi.Size()
	return res, nil
}

// Assemble makes the image of the binary name from its executable, the CA
// bundle and the stamp; it reads no file, so its result depends on its
// arguments alone.
func Assemble(name string, binary, caCerts []byte, goarch string, st Stamp) (v1.Image, error) {
	allInOne := name == AllInOne
	base, err := layer(baseFiles(caCerts), st.Created)
	if err != nil {
		return nil, fmt.Errorf("base layer: %w", err)
	}
	bin, err := layer(binaryFiles(name, binary, allInOne), st.Created)
	if err != nil {
		return nil, fmt.Errorf("binary layer: %w", err)
	}
	created := v1.Time{Time: st.Created}
	binaryLayer := "foundry image: /usr/local/bin/" + name
	if allInOne {
		binaryLayer += ", /data"
	}
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	img, err = mutate.Append(img,
		mutate.Addendum{Layer: base, MediaType: types.OCILayer, History: v1.History{
			Created: created, CreatedBy: "foundry image: CA certificates, /etc/passwd and /etc/group (nonroot 65532), /tmp",
		}},
		mutate.Addendum{Layer: bin, MediaType: types.OCILayer, History: v1.History{
			Created: created, CreatedBy: binaryLayer,
		}},
	)
	if err != nil {
		return nil, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Architecture, cf.OS, cf.Created = goarch, "linux", created
	cf.Config = config(name, allInOne, st)
	return mutate.ConfigFile(img, cf)
}

// config is what a container of the image runs: deploy/Dockerfile's
// runtime stage, for the image of name.
func config(name string, allInOne bool, st Stamp) v1.Config {
	title := "foundry-" + name
	description := "Foundry's " + name + " service"
	if name == "gateway" {
		description = "Foundry's REST gateway"
	}
	// The binaries default to loopback addresses; in a container they
	// listen on all: 9090 gRPC, 9100 admin (/metrics, /healthz, /readyz),
	// 8080 REST (the gateway and the all-in-one).
	env := []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"FOUNDRY_GRPC_ADDR=:9090",
		"FOUNDRY_ADMIN_ADDR=:9100",
		"FOUNDRY_HTTP_ADDR=:8080",
	}
	ports := map[string]struct{}{"9090/tcp": {}, "9100/tcp": {}}
	if name == "gateway" || allInOne {
		ports["8080/tcp"] = struct{}{}
	}
	var cmd []string
	if allInOne {
		title, description = "foundry", "Foundry: every service and the gateway in one process"
		// The SQLite files when no FOUNDRY_DATABASE_URL is set; mount a
		// volume at /data to keep them.
		env = append(env, "FOUNDRY_DATA_DIR=/data")
		// In Cmd, not Entrypoint, so that `docker run <image> migrate`
		// still works.
		cmd = []string{"-target=all"}
	}
	return v1.Config{
		Entrypoint:   []string{"/usr/local/bin/" + name},
		Cmd:          cmd,
		User:         fmt.Sprintf("%d:%d", nonroot, nonroot),
		Env:          env,
		ExposedPorts: ports,
		WorkingDir:   "/",
		Labels: map[string]string{
			"org.opencontainers.image.title":       title,
			"org.opencontainers.image.description": description,
			"org.opencontainers.image.source":      Source,
			"org.opencontainers.image.version":     st.Version,
			"org.opencontainers.image.revision":    st.Revision,
			"org.opencontainers.image.created":     st.Created.UTC().Format(time.RFC3339),
		},
	}
}

// Root finds the repository root (the directory holding go.work) from dir
// up.
func Root(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no go.work in %s or above: run from Foundry's repository", dir)
		}
		d = parent
	}
}

// hasGit reports whether root is a git checkout the go command can read
// its revision from (a .git directory, or file for a worktree, and git).
func hasGit(root string) bool {
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		return false
	}
	_, err := exec.LookPath("git")
	return err == nil
}

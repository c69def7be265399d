package image

import (
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// versionVar is the variable the linker sets to the release: what
// foundry_build_info reports as its version (observability.Build).
// versionVars are the linker-set versions: the servers' (foundry_build_info,
// traces) and the client's (foundry version), which imports no server package.
var versionVars = []string{
	"github.com/foundryhq/foundry/services/platform/observability.Version",
	"github.com/foundryhq/foundry/cli.Version",
}

// fallbackVersion is the version of a build outside git, or of a checkout
// git cannot describe.
const fallbackVersion = "0.0.0-dev"

// DefaultVersion is `git describe --tags --always --dirty` in root (the
// latest tag, commits since and the commit, "-dirty" with changes), or
// fallbackVersion outside git.
func DefaultVersion(ctx context.Context, root string) string {
	if !hasGit(root) {
		return fallbackVersion
	}
	out, err := gitOutput(ctx, root, "describe", "--tags", "--always", "--dirty")
	if err != nil || out == "" {
		return fallbackVersion
	}
	return out
}

// DefaultCreated is the images' time: SOURCE_DATE_EPOCH (the
// reproducible-builds convention) when set, else the commit's time, else
// the Unix epoch outside git. Never the clock: the same commit must build
// the same image.
func DefaultCreated(ctx context.Context, root string, getenv func(string) string) (time.Time, error) {
	if v := strings.TrimSpace(getenv("SOURCE_DATE_EPOCH")); v != "" {
		sec, err := strconv.ParseInt(v, 10, 64)
		if err != nil || sec < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: want seconds since 1970 (e.g. git log -1 --format=%%ct)", v)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	if hasGit(root) {
		if out, err := gitOutput(ctx, root, "log", "-1", "--format=%ct"); err == nil {
			if sec, err := strconv.ParseInt(out, 10, 64); err == nil {
				return time.Unix(sec, 0).UTC(), nil
			}
		}
	}
	return time.Unix(0, 0).UTC(), nil
}

func gitOutput(ctx context.Context, root string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = root
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}

// compile builds b into out: static (no cgo, the image has no libc), for
// Linux on opts.GOARCH, from the workspace, with the version linked in and,
// in a git checkout, the revision recorded.
func compile(ctx context.Context, opts Options, b Binary, out string, vcs bool) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("build %s: %w", b.Name, err)
	}
	// Explicit either way: GOFLAGS may say -buildvcs=false (this machine's
	// does), and outside git "auto" could stamp a parent repository's.
	buildvcs := "-buildvcs=false"
	if vcs {
		buildvcs = "-buildvcs=true"
	}
	args := []string{
		"build", "-trimpath", buildvcs,
		// The time zone database is linked into the binary (about 450 kB)
		// rather than copied from this machine's /usr/share/zoneinfo: it
		// is then the Go toolchain's, the same on every build machine (a
		// reproducible image), and present where the machine has none. Go
		// still prefers a zoneinfo directory when one is there (ZONEINFO
		// or the system's), so mounting a newer one works.
		"-tags", "timetzdata",
		"-ldflags", ldflags(opts.Version),
		"-o", out, b.Package,
	}
	env := []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + opts.GOARCH}
	// The binaries are built from the workspace, whatever GOWORK says
	// (deploy's tests may run with GOWORK=off).
	if work := filepath.Join(opts.Root, "go.work"); fileExists(work) {
		env = append(env, "GOWORK="+work)
	}
	_, _ = fmt.Fprintf(opts.Log, "%s go %s\n", strings.Join(env, " "), shellJoin(args))
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = opts.Root
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = opts.Log, opts.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s (%s): %w", b.Package, b.Name, err)
	}
	return nil
}

// Revision is the revision the binary at path reports in
// foundry_build_info, read from the build information the toolchain
// recorded in it, as observability.Build reads its own: vcs.revision with
// "-dirty" when vcs.modified, "unknown" when none was recorded. (deploy
// does not import the services' modules; the image test holds the two
// readings together by scraping the running binary.)
func Revision(path string) (string, error) {
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("build information of %s: %w", path, err)
	}
	revision, dirty := "unknown", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			revision = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && revision != "unknown" {
		revision += "-dirty"
	}
	return revision, nil
}

// shellJoin writes args as a shell would read them back (for the log).
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// ldflags strips the binary and stamps version into every versionVars.
func ldflags(version string) string {
	flags := "-s -w"
	for _, v := range versionVars {
		flags += " -X " + v + "=" + version
	}
	return flags
}

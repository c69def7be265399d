package cli

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/debug"
	"strconv"

	"github.com/spf13/cobra"
)

// --- version ---------------------------------------------------------------------

// versionReport is what foundry version prints: the build of this binary,
// as the Go toolchain recorded it (nothing is sent anywhere). A field the
// build did not record is null: a binary built outside a repository has no
// revision, one built by go test no module version.
type versionReport struct {
	// Module is the main module's path, Version its version: a tag or a
	// pseudo-version for go install module@version, "(devel)" for a build
	// from a checkout.
	Module  *string `json:"module"`
	Version *string `json:"version"`
	// Revision, Time and Modified are the version control's: the commit,
	// its time, and whether the work tree had changes (vcs.revision,
	// vcs.time, vcs.modified).
	Revision *string `json:"revision"`
	Time     *string `json:"time"`
	Modified *bool   `json:"modified"`
	// Go is the toolchain that built the binary.
	Go string `json:"go"`
}

// Version is the release this binary was built as, set by the linker
// (make image: -X github.com/foundryhq/foundry/cli.Version=…); it wins over
// the module version, which a build from a checkout records as "(devel)".
var Version string

// buildVersion reads a report from a build's information (ok false: none
// recorded), with Version when set.
func buildVersion(bi *debug.BuildInfo, ok bool) versionReport {
	rep := versionReport{Go: runtime.Version()}
	if Version != "" {
		rep.Version = &Version
	}
	if !ok || bi == nil {
		return rep
	}
	if bi.GoVersion != "" {
		rep.Go = bi.GoVersion
	}
	if bi.Main.Path != "" {
		rep.Module = &bi.Main.Path
	}
	if bi.Main.Version != "" && Version == "" {
		rep.Version = &bi.Main.Version
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rep.Revision = &s.Value
		case "vcs.time":
			rep.Time = &s.Value
		case "vcs.modified":
			if m, err := strconv.ParseBool(s.Value); err == nil {
				rep.Modified = &m
			}
		}
	}
	return rep
}

func (e *env) versionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Show this binary's version: its module version, commit, commit time and Go version",
		Long: `Show this binary's version, as the Go toolchain recorded it when it was
built: the module and its version, the commit it was built from (revision),
the commit's time, whether the work tree had changes (modified), and the Go
version. Nothing is sent to Foundry; a field the build did not record is -
(null with -o json).`,
		Args: cobra.NoArgs,
	}
	cmd.RunE = func(*cobra.Command, []string) error {
		raw, err := json.Marshal(buildVersion(debug.ReadBuildInfo()))
		if err != nil {
			return fmt.Errorf("version: %w", err)
		}
		return e.printObject(raw)
	}
	return cmd
}

package cli

import (
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestBuildVersion(t *testing.T) {
	t.Parallel()
	bi := &debug.BuildInfo{
		GoVersion: "go1.99.1",
		Main:      debug.Module{Path: "github.com/foundryhq/foundry/cmd", Version: "v1.4.0"},
		Settings: []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0be28ceedd4fc2351890a126fc302133c233ecf5"},
			{Key: "vcs.time", Value: "2026-11-25T10:01:34Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	str := func(s string) *string { return &s }
	yes := true
	require.Equal(t, versionReport{
		Module: str("github.com/foundryhq/foundry/cmd"), Version: str("v1.4.0"),
		Revision: str("0be28ceedd4fc2351890a126fc302133c233ecf5"), Time: str("2026-11-25T10:01:34Z"), Modified: &yes,
		Go: "go1.99.1",
	}, buildVersion(bi, true))

	require.Equal(t, versionReport{Go: runtime.Version()}, buildVersion(nil, false), "nothing recorded: only the running Go")
	require.Equal(t, versionReport{Module: str("m"), Go: runtime.Version()}, buildVersion(&debug.BuildInfo{Main: debug.Module{Path: "m"}}, true),
		"no VCS stamp: null revision, time and modified")
}

// TestBuildVersionPrefersTheLinkerSetOne: an image's binary reports the
// release it was stamped with, not the checkout's "(devel)". Not parallel:
// it sets the package's Version for its duration.
func TestBuildVersionPrefersTheLinkerSetOne(t *testing.T) {
	Version = "0.2.0"
	defer func() { Version = "" }()
	bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/foundryhq/foundry/cmd", Version: "(devel)"}}
	got := buildVersion(bi, true)
	require.NotNil(t, got.Version)
	require.Equal(t, "0.2.0", *got.Version)
	got = buildVersion(nil, false)
	require.NotNil(t, got.Version, "stamped even without build information")
	require.Equal(t, "0.2.0", *got.Version)
}

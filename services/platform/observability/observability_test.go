package observability_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/foundryhq/foundry/services/platform/observability"
	"github.com/foundryhq/foundry/services/platform/requestid"
)

func TestEnabledFollowsTheStandardVariables(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "  "}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "TRUE", "OTEL_TRACES_EXPORTER": "otlp"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_SERVICE_NAME": "x"}, false},
	} {
		lookup := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
		require.Equal(t, c.want, observability.Enabled(lookup), "%v", c.env)
	}
}

func TestStartWithoutTheVariablesInstallsNothing(t *testing.T) {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		t.Setenv(k, "")
	}
	stop, err := observability.Start(context.Background(), "foundry-test", zap.NewNop())
	require.NoError(t, err)
	require.False(t, observability.Active(), "no exporter: no tracing handlers")
	require.NoError(t, stop(context.Background()))
}

func TestFieldsCarryTheRequestAndTraceIDs(t *testing.T) {
	require.Empty(t, observability.Fields(context.Background()))

	tid, _ := trace.TraceIDFromHex("4bf92f3577b34da6a3ce929d0e0e4736")
	sid, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
	ctx := trace.ContextWithSpanContext(requestid.With(context.Background(), "req-1"),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid}))
	core, logs := observer.New(zapcore.InfoLevel)
	zap.New(core).Info("line", observability.Fields(ctx)...)
	require.Equal(t, map[string]any{"request_id": "req-1", "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
		"span_id": "00f067aa0ba902b7"}, logs.All()[0].ContextMap())
}

func TestBuildInfo(t *testing.T) {
	version, revision := observability.Build()
	require.NotEmpty(t, version)
	require.NotEmpty(t, revision)
	reg := prometheus.NewRegistry()
	observability.RegisterBuildInfo(reg)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP foundry_build_info The running build: always 1, labelled with its version, VCS revision and Go version.
# TYPE foundry_build_info gauge
foundry_build_info{go_version="`+goVersion(t, reg)+`",revision="`+revision+`",version="`+version+`"} 1
`), "foundry_build_info"))
}

// A version set by the linker (-X ...observability.Version=..., as make
// image does) is the one reported: a workspace build's module version says
// only "(devel)".
func TestBuildPrefersTheLinkerSetVersion(t *testing.T) {
	before := observability.Version
	t.Cleanup(func() { observability.Version = before })

	observability.Version = ""
	_, revision := observability.Build()
	observability.Version = "1.2.3-rc.1"
	version, rev := observability.Build()
	require.Equal(t, "1.2.3-rc.1", version)
	require.Equal(t, revision, rev, "the revision is the toolchain's, whatever the version")

	reg := prometheus.NewRegistry()
	observability.RegisterBuildInfo(reg)
	require.NoError(t, testutil.GatherAndCompare(reg, strings.NewReader(`
# HELP foundry_build_info The running build: always 1, labelled with its version, VCS revision and Go version.
# TYPE foundry_build_info gauge
foundry_build_info{go_version="`+goVersion(t, reg)+`",revision="`+revision+`",version="1.2.3-rc.1"} 1
`), "foundry_build_info"))
}

// goVersion reads the go_version label registered, which the test binary's
// build information decides.
func goVersion(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, l := range mfs[0].GetMetric()[0].GetLabel() {
		if l.GetName() == "go_version" {
			require.True(t, strings.HasPrefix(l.GetValue(), "go"), l.GetValue())
			return l.GetValue()
		}
	}
	t.Fatal("no go_version label")
	return ""
}

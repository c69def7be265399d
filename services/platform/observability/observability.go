// Package observability sets up a process's tracing and the fields that tie
// its log lines to a request.
//
// Tracing is OpenTelemetry, configured entirely by the standard OTEL_*
// variables (the exporter by autoexport, sampling and batching by the SDK)
// and off unless they ask for it: then no tracing handler is installed
// (see Active), and a request pays nothing for it.
package observability

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/requestid"
)

// active is true once Start has installed an exporting tracer provider.
var active atomic.Bool

// Active reports whether this process exports traces (Start found them
// enabled). Instrumentation that only feeds traces (the HTTP and gRPC
// handlers) is installed only then: with tracing off a request pays nothing
// for it, and the request id alone ties its log lines together.
func Active() bool { return active.Load() }

// Enabled reports whether the OTEL_* variables ask for traces: an
// exporter named in OTEL_TRACES_EXPORTER (other than "none"), or an OTLP
// endpoint; never when OTEL_SDK_DISABLED is true. lookup is os.LookupEnv
// in production.
func Enabled(lookup func(string) (string, bool)) bool {
	if v, _ := lookup("OTEL_SDK_DISABLED"); strings.EqualFold(strings.TrimSpace(v), "true") {
		return false
	}
	if v, ok := lookup("OTEL_TRACES_EXPORTER"); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v) != "none"
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v, ok := lookup(k); ok && strings.TrimSpace(v) != "" {
			return true
		}
	}
	return false
}

// Start installs the global propagator and, when Enabled, a tracer
// provider exporting as the OTEL_* variables say, with service (the
// default of OTEL_SERVICE_NAME) and the build's version as its resource.
// The returned function flushes and stops the provider; call it once the
// servers have drained.
func Start(ctx context.Context, service string, log *zap.Logger) (shutdown func(context.Context) error, err error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("opentelemetry", zap.Error(err)) }))
	if !Enabled(os.LookupEnv) {
		return func(context.Context) error { return nil }, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("trace exporter (OTEL_* variables): %w", err)
	}
	version, _ := Build()
	// Ours first: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override.
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", service), attribute.String("service.version", version)))
	if err == nil {
		var env *resource.Resource
		if env, err = resource.New(ctx, resource.WithFromEnv()); err == nil {
			res, err = resource.Merge(res, env)
		}
	}
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		_ = exp.Shutdown(ctx)
		return nil, fmt.Errorf("trace resource: %w", err)
	}
	// The SDK reads OTEL_TRACES_SAMPLER(_ARG) and OTEL_BSP_* itself.
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	active.Store(true)
	log.Info("tracing on", zap.String("exporter", fmt.Sprintf("%T", exp)), zap.String("service", service))
	return tp.Shutdown, nil
}

// Fields are the log fields of the request ctx belongs to: its request id
// and, when it is traced, its trace and span ids (the ones a trace viewer
// shows, so a log line leads to its trace and back).
func Fields(ctx context.Context) []zap.Field {
	return AppendFields(make([]zap.Field, 0, 3), ctx)
}

// AppendFields appends ctx's Fields to fields, for a caller that adds its
// own to the same line and would rather size the slice once.
func AppendFields(fields []zap.Field, ctx context.Context) []zap.Field {
	if id := requestid.From(ctx); id != "" {
		fields = append(fields, zap.String("request_id", id))
	}
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		fields = append(fields, zap.String("trace_id", sc.TraceID().String()), zap.String("span_id", sc.SpanID().String()))
	}
	return fields
}

// Version is the release this binary was built as, set by the linker:
// -ldflags "-X github.com/foundryhq/foundry/services/platform/observability.Version=v1.2.3"
// (make image does, deploy/image). A build from the workspace records no
// module version of its own (the toolchain says "(devel)"), so without it
// every release would report the same version. It lives here, not in a
// package of its own, because this package is the one that reports it.
var Version string

// Build is the binary's version (Version when the linker set it, else its
// module version: "(devel)" for a workspace build) and VCS revision
// ("unknown" when not recorded; a "-dirty" suffix when built from modified
// sources).
func Build() (version, revision string) {
	version, revision = "unknown", "unknown"
	if Version != "" {
		version = Version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version, revision
	}
	if Version == "" && bi.Main.Version != "" {
		version = bi.Main.Version
	}
	var dirty bool
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
	return version, revision
}

// RegisterBuildInfo registers foundry_build_info, a gauge of 1 labelled
// with the build's version, revision and Go version (the usual way to see
// which build each replica runs).
func RegisterBuildInfo(reg prometheus.Registerer) {
	version, revision := Build()
	goVersion := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "foundry_build_info",
		Help:        "The running build: always 1, labelled with its version, VCS revision and Go version.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "go_version": goVersion},
	})
	g.Set(1)
	reg.MustRegister(g)
}

package e2e_test

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
)

// span is what the test keeps of an exported span.
type span struct {
	service, name, traceID string
	kind                   tracepb.Span_SpanKind
	attrs                  []string // attribute keys
}

// collector is a minimal OTLP/HTTP trace receiver: it decodes every
// export request and keeps its spans.
type collector struct {
	mu    sync.Mutex
	spans []span
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err != nil || r.URL.Path != "/v1/traces" || proto.Unmarshal(body, &req) != nil {
		http.Error(w, "want an OTLP trace export", http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	for _, rs := range req.GetResourceSpans() {
		var service string
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				sp := span{service: service, name: s.GetName(), traceID: hex.EncodeToString(s.GetTraceId()), kind: s.GetKind()}
				for _, a := range s.GetAttributes() {
					sp.attrs = append(sp.attrs, a.GetKey())
				}
				c.spans = append(c.spans, sp)
			}
		}
	}
	c.mu.Unlock()
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (c *collector) trace(id string) []span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []span
	for _, s := range c.spans {
		if s.traceID == id {
			out = append(out, s)
		}
	}
	return out
}

// TestTracesFollowARequestAcrossServices runs a process exporting traces
// to an OTLP receiver (the standard OTEL_* variables) and sends a request
// with a W3C traceparent: the gateway's span, the ledger's and the
// portfolio's server spans and the ledger's statements join the caller's
// trace, and the request's log lines carry its trace id.
func TestTracesFollowARequestAcrossServices(t *testing.T) {
	t.Parallel()
	storage := allinonetest.NewStorage(t, database.Postgres)
	col := &collector{}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)
	p := startFoundry(t, storage, []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + srv.URL, "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
		"OTEL_BSP_SCHEDULE_DELAY=50", "OTEL_SERVICE_NAME=", "OTEL_TRACES_EXPORTER=", "OTEL_SDK_DISABLED=",
	})

	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, err := http.NewRequest(http.MethodGet, p.URL("/api/ideas/no-such-idea/invest-preview?amount_cc=10"), nil)
	require.NoError(t, err)
	req.Header.Set("Traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	req.Header.Set("X-Request-Id", "traced-1")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode)

	has := func(spans []span, kind tracepb.Span_SpanKind, name string) bool {
		return slices.ContainsFunc(spans, func(s span) bool { return s.kind == kind && s.name == name })
	}
	require.Eventually(t, func() bool {
		spans := col.trace(traceID)
		return has(spans, tracepb.Span_SPAN_KIND_SERVER, "GET /api/ideas/{idea_id=*}/invest-preview") &&
			has(spans, tracepb.Span_SPAN_KIND_SERVER, "foundry.ledger.v1.LedgerService/GetInvestPreview") &&
			has(spans, tracepb.Span_SPAN_KIND_CLIENT, "foundry.portfolio.v1.PortfolioService/GetIdea") &&
			has(spans, tracepb.Span_SPAN_KIND_SERVER, "foundry.portfolio.v1.PortfolioService/GetIdea")
	}, 10*time.Second, 50*time.Millisecond, "the trace's spans did not all arrive")

	require.Eventually(t, func() bool {
		return slices.ContainsFunc(col.trace(traceID), func(s span) bool {
			return s.kind == tracepb.Span_SPAN_KIND_CLIENT && slices.ContainsFunc(s.attrs, func(k string) bool {
				return strings.HasPrefix(k, "db.")
			})
		})
	}, 10*time.Second, 50*time.Millisecond, "no database statement joined the trace")
	for _, s := range col.trace(traceID) {
		require.Equal(t, "foundry", s.service, "span %q", s.name)
	}

	// The request's log lines carry the trace id next to the request id.
	// Logs are buffered (written once a second, platform/logging), so the
	// lines are waited for as the request id test does.
	var traced []string
	assert.Eventually(t, func() bool {
		traced = traced[:0]
		sc := bufio.NewScanner(strings.NewReader(p.Output()))
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) != nil || line["request_id"] != "traced-1" {
				continue
			}
			require.Equal(t, traceID, line["trace_id"], "line %s", sc.Text())
			require.Regexp(t, `^[0-9a-f]{16}$`, line["span_id"])
			traced = append(traced, line["logger"].(string))
		}
		return slices.Contains(traced, "gateway") && slices.Contains(traced, "grpc")
	}, 5*time.Second, 50*time.Millisecond)
	require.Contains(t, traced, "gateway", "the gateway's access line")
	require.Contains(t, traced, "grpc", "the services' call lines")
}

package grpcserver

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// serverMetrics are the grpc_server_* series of go-grpc-middleware's
// Prometheus provider: the same names, help, labels and buckets (a test
// holds them to the provider's own for the same calls), so dashboards,
// alerts and recording rules written for it read Foundry's services as they
// are. They are recorded here rather than by the provider's interceptors
// because of what those cost a call: five label look-ups (started, message
// received, message sent, handled, the histogram), each hashing the
// method's three or four label values and taking the vector's lock, plus
// a reporter and its call metadata, on every call a service serves (about
// 4 % of a service's CPU on a read under make bench-http). A method's
// series are looked up once, when the server's methods are known
// (InitializeMetrics), and a call then adds to them directly.
type serverMetrics struct {
	started, handled, received, sent *prometheus.CounterVec
	handling                         *prometheus.HistogramVec
	// methods are the series of every method registered when
	// InitializeMetrics ran, by full method name, every one created; read
	// without a lock, never changed once stored. A call of any other
	// method has series of its own, each looked up when the call first
	// adds to it, so that, as with the provider, only the series a call
	// reaches exist.
	methods atomic.Pointer[map[string]*methodSeries]
}

// methodSeries are one method's series; nil until looked up (counter,
// observer).
type methodSeries struct {
	started, received, sent prometheus.Counter
	handling                prometheus.Observer
	// handled is by code, for the codes gRPC defines; any other code is
	// looked up as it comes.
	handled [codes.Unauthenticated + 1]prometheus.Counter
	labels  [3]string // grpc_type, grpc_service, grpc_method
}

// counter is *c, looked up in vec by the method's labels first when it is
// nil.
func (s *methodSeries) counter(c *prometheus.Counter, vec *prometheus.CounterVec) prometheus.Counter {
	if *c == nil {
		*c = vec.WithLabelValues(s.labels[:]...)
	}
	return *c
}

// observer is the handling time histogram's series, looked up in vec by
// the method's labels first when it is nil.
func (s *methodSeries) observer(vec *prometheus.HistogramVec) prometheus.Observer {
	if s.handling == nil {
		s.handling = vec.WithLabelValues(s.labels[:]...)
	}
	return s.handling
}

// The call types as the provider labels them (grpc_type).
const (
	unaryType        = "unary"
	clientStreamType = "client_stream"
	serverStreamType = "server_stream"
	bidiStreamType   = "bidi_stream"
)

// newServerMetrics returns the series with buckets as the handling time
// histogram's.
func newServerMetrics(buckets []float64) *serverMetrics {
	labels := []string{"grpc_type", "grpc_service", "grpc_method"}
	return &serverMetrics{
		started: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_started_total",
			Help: "Total number of RPCs started on the server.",
		}, labels),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_handled_total",
			Help: "Total number of RPCs completed on the server, regardless of success or failure.",
		}, append(labels, "grpc_code")),
		received: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_received_total",
			Help: "Total number of RPC stream messages received on the server.",
		}, labels),
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grpc_server_msg_sent_total",
			Help: "Total number of gRPC stream messages sent by the server.",
		}, labels),
		handling: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grpc_server_handling_seconds",
			Help:    "Histogram of response latency (seconds) of gRPC that had been application-level handled by the server.",
			Buckets: buckets,
		}, labels),
	}
}

// Describe implements prometheus.Collector.
func (m *serverMetrics) Describe(ch chan<- *prometheus.Desc) {
	m.started.Describe(ch)
	m.handled.Describe(ch)
	m.received.Describe(ch)
	m.sent.Describe(ch)
	m.handling.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *serverMetrics) Collect(ch chan<- prometheus.Metric) {
	m.started.Collect(ch)
	m.handled.Collect(ch)
	m.received.Collect(ch)
	m.sent.Collect(ch)
	m.handling.Collect(ch)
}

// initialize creates every method's series of srv at zero (so rates and
// alerts work before a method's first call, as the provider's
// InitializeMetrics does) and keeps them for its calls.
func (m *serverMetrics) initialize(srv *grpc.Server) {
	methods := map[string]*methodSeries{}
	for service, info := range srv.GetServiceInfo() {
		for _, mi := range info.Methods {
			methods["/"+service+"/"+mi.Name] = m.lookUp(callType(mi.IsClientStream, mi.IsServerStream), service, mi.Name)
		}
	}
	m.methods.Store(&methods)
}

// lookUp returns every series of a method, creating them at zero.
func (m *serverMetrics) lookUp(typ, service, method string) *methodSeries {
	s := &methodSeries{labels: [3]string{typ, service, method}}
	s.counter(&s.started, m.started)
	s.counter(&s.received, m.received)
	s.counter(&s.sent, m.sent)
	s.observer(m.handling)
	for c := range s.handled {
		s.handled[c] = m.handled.WithLabelValues(typ, service, method, codes.Code(c).String())
	}
	return s
}

// series returns the series of a call of fullMethod ("/service/method").
func (m *serverMetrics) series(fullMethod, typ string) *methodSeries {
	if methods := m.methods.Load(); methods != nil {
		if s := (*methods)[fullMethod]; s != nil {
			return s
		}
	}
	service, method := "unknown", "unknown"
	if s, meth, ok := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/"); ok {
		service, method = s, meth
	}
	return &methodSeries{labels: [3]string{typ, service, method}}
}

// callType is a method's grpc_type.
func callType(clientStream, serverStream bool) string {
	switch {
	case clientStream && serverStream:
		return bidiStreamType
	case clientStream:
		return clientStreamType
	case serverStream:
		return serverStreamType
	}
	return unaryType
}

// finish records a finished call: its code and how long it took.
func (m *serverMetrics) finish(s *methodSeries, err error, took time.Duration, exemplar prometheus.Labels) {
	code := callCode(err)
	var handled prometheus.Counter
	if int(code) < len(s.handled) {
		handled = s.handled[code]
	}
	if handled == nil {
		handled = m.handled.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], code.String())
	}
	add(handled, exemplar)
	handling := s.observer(m.handling)
	if exemplar != nil {
		handling.(prometheus.ExemplarObserver).ObserveWithExemplar(took.Seconds(), exemplar)
		return
	}
	handling.Observe(took.Seconds())
}

// callCode is a call's status code as the provider reads it (and the
// server answers it): a context error is Canceled or DeadlineExceeded.
func callCode(err error) codes.Code {
	if s, ok := status.FromError(err); ok {
		return s.Code()
	}
	return status.FromContextError(err).Code()
}

// add counts one, with the exemplar when there is one.
func add(c prometheus.Counter, exemplar prometheus.Labels) {
	if exemplar != nil {
		c.(prometheus.ExemplarAdder).AddWithExemplar(1, exemplar)
		return
	}
	c.Inc()
}

// unary records a unary call: started, its request received, its answer
// sent (when it succeeded), handled with its code, and its handling time.
func (m *serverMetrics) unary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	start := time.Now()
	s := m.series(info.FullMethod, unaryType)
	exemplar := exemplarOf(ctx)
	add(s.counter(&s.started, m.started), exemplar)
	add(s.counter(&s.received, m.received), exemplar)
	resp, err := handler(ctx, req)
	if err == nil {
		add(s.counter(&s.sent, m.sent), exemplar)
	}
	m.finish(s, err, time.Since(start), exemplar)
	return resp, err
}

// stream records a streaming call: started, every message received and
// sent, then handled with its code and its handling time.
func (m *serverMetrics) stream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	start := time.Now()
	s := m.series(info.FullMethod, callType(info.IsClientStream, info.IsServerStream))
	exemplar := exemplarOf(ss.Context())
	add(s.counter(&s.started, m.started), exemplar)
	err := handler(srv, &countedStream{ServerStream: ss, metrics: m, series: s, exemplar: exemplar})
	m.finish(s, err, time.Since(start), exemplar)
	return err
}

// countedStream counts a stream's messages.
type countedStream struct {
	grpc.ServerStream
	metrics  *serverMetrics
	series   *methodSeries
	exemplar prometheus.Labels
}

func (c *countedStream) SendMsg(msg any) error {
	err := c.ServerStream.SendMsg(msg)
	if err == nil {
		add(c.series.counter(&c.series.sent, c.metrics.sent), c.exemplar)
	}
	return err
}

func (c *countedStream) RecvMsg(msg any) error {
	err := c.ServerStream.RecvMsg(msg)
	if err == nil {
		add(c.series.counter(&c.series.received, c.metrics.received), c.exemplar)
	}
	return err
}

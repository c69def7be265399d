package gateway

import (
	"context"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc"

	opsinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// eventSender is the part of the ops client the recorder uses.
type eventSender interface {
	RecordEvents(ctx context.Context, in *opsinternalv1.RecordEventsRequest, opts ...grpc.CallOption) (*opsinternalv1.RecordEventsResponse, error)
}

// telemetryOptions tune a recorder.
type telemetryOptions struct {
	// Buffer is how many events wait for sending; past it events are dropped.
	Buffer int
	// BatchSize sends a batch as soon as it holds this many events.
	BatchSize int
	// Interval sends whatever is waiting this often.
	Interval time.Duration
	// SendTimeout bounds one batch's delivery.
	SendTimeout time.Duration
	// ProbeInterval is how often, while the ops service says telemetry is
	// off, an empty batch asks whether it is on again (0: every tick).
	ProbeInterval time.Duration
	// tick replaces the interval ticker (tests).
	tick <-chan time.Time
}

// finalSendTimeout bounds the last delivery when the process stops.
const finalSendTimeout = time.Second

var defaultTelemetryOptions = telemetryOptions{Buffer: 4096, BatchSize: 256, Interval: time.Second, SendTimeout: 5 * time.Second,
	ProbeInterval: 10 * time.Second}

// telemetry records one runtime event per request and sends them to the ops
// service in batches, from a background goroutine: record never blocks, so
// a slow or failing ops service (or telemetry sink) never slows or fails a
// request. When the buffer is full, events are dropped and counted. Where
// the events end up (a database, a file, nowhere) is the ops service's
// configuration; when it keeps them nowhere (telemetry off, the default),
// it says so, and no request builds an event until it says otherwise.
type telemetry struct {
	sender eventSender
	opts   telemetryOptions
	events chan *opsinternalv1.RuntimeEvent
	log    *zap.Logger
	// failing is true while deliveries fail (only run touches it), so a
	// long outage logs once, not once a batch.
	failing bool
	// off is true while the ops service answers that telemetry is off:
	// an event, its time's formatting and its share of a batch sent only
	// to be discarded were a few µs of every request on both sides.
	off atomic.Bool

	dropped prometheus.Counter
	sent    prometheus.Counter
	failed  prometheus.Counter
}

func newTelemetry(sender eventSender, log *zap.Logger, reg prometheus.Registerer, opts telemetryOptions) *telemetry {
	t := &telemetry{
		sender: sender, opts: opts, events: make(chan *opsinternalv1.RuntimeEvent, opts.Buffer), log: log,
		dropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "foundry_gateway_telemetry_events_dropped_total",
			Help: "Runtime telemetry events dropped because the gateway's buffer was full.",
		}),
		sent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "foundry_gateway_telemetry_events_sent_total",
			Help: "Runtime telemetry events the ops service accepted.",
		}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "foundry_gateway_telemetry_events_failed_total",
			Help: "Runtime telemetry events lost because sending them to the ops service failed.",
		}),
	}
	if reg != nil {
		reg.MustRegister(t.dropped, t.sent, t.failed)
	}
	return t
}

// on reports whether requests should record events: false while the ops
// service says telemetry is off.
func (t *telemetry) on() bool { return !t.off.Load() }

// record queues an event without ever waiting.
func (t *telemetry) record(e *opsinternalv1.RuntimeEvent) {
	select {
	case t.events <- e:
	default:
		t.dropped.Inc()
	}
}

// event builds the event of one request. route is the matched pattern as
// requestScope labels it ("GET /api/ideas/{id=*}"); the event keeps the pattern
// in template form (/api/ideas/{id}) and never the raw path, its query
// string, a header or a body.
func event(method, route string, status int, start time.Time, elapsed time.Duration) *opsinternalv1.RuntimeEvent {
	if _, pattern, ok := strings.Cut(route, " "); ok {
		route = pattern // drop the method ("GET /api/ready" also serves HEAD)
	}
	route = strings.ReplaceAll(route, "=*}", "}")
	return &opsinternalv1.RuntimeEvent{
		Route: route, Method: method, Status: int32(status),
		DurationMs: float64(elapsed.Microseconds()) / 1000, OccurredAt: wire.Time(start),
	}
}

// run sends batches until ctx is done, then sends what is left, once. It
// first asks whether telemetry is on, and asks again every ProbeInterval
// while it is off.
func (t *telemetry) run(ctx context.Context) {
	tick := t.opts.tick
	if tick == nil {
		ticker := time.NewTicker(t.opts.Interval)
		defer ticker.Stop()
		tick = ticker.C
	}
	lastProbe := time.Now()
	t.probe(ctx)
	var batch []*opsinternalv1.RuntimeEvent
	flush := func(ctx context.Context, timeout time.Duration) {
		if len(batch) > 0 {
			t.send(ctx, batch, timeout)
			batch = nil
		}
	}
	for {
		select {
		case e := <-t.events:
			batch = append(batch, e)
			if len(batch) >= t.opts.BatchSize {
				flush(ctx, t.opts.SendTimeout)
			}
		case <-tick:
			flush(ctx, t.opts.SendTimeout)
			if t.off.Load() && time.Since(lastProbe) >= t.opts.ProbeInterval {
				lastProbe = time.Now()
				t.probe(ctx)
			}
		case <-ctx.Done():
		drain:
			for {
				select {
				case e := <-t.events:
					batch = append(batch, e)
				default:
					break drain
				}
			}
			// The process is stopping: one short last try, so shutdown is
			// never held up by telemetry.
			flush(context.WithoutCancel(ctx), min(t.opts.SendTimeout, finalSendTimeout))
			return
		}
	}
}

// send delivers one batch; a failure loses the batch (counted, and logged
// when delivery starts failing) rather than letting events pile up.
func (t *telemetry) send(ctx context.Context, batch []*opsinternalv1.RuntimeEvent, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := t.sender.RecordEvents(ctx, &opsinternalv1.RecordEventsRequest{Events: batch})
	if err != nil {
		t.failed.Add(float64(len(batch)))
		if !t.failing {
			t.log.Warn("runtime telemetry not delivered: dropping events until it works again", zap.Int("events", len(batch)), zap.Error(err))
		}
		t.failing = true
		return
	}
	if t.failing {
		t.log.Info("runtime telemetry delivered again")
	}
	t.failing = false
	t.sent.Add(float64(resp.GetAccepted()))
	t.setOff(resp.GetOff())
}

// probe asks the ops service, with an empty batch, whether telemetry is
// on. An answer that does not come leaves things as they are: ops may not
// be up yet (each service starts on its own), and the next batch or probe
// asks again.
func (t *telemetry) probe(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, t.opts.SendTimeout)
	defer cancel()
	if resp, err := t.sender.RecordEvents(ctx, &opsinternalv1.RecordEventsRequest{}); err == nil {
		t.setOff(resp.GetOff())
	}
}

// setOff records the ops service's answer, logging a change.
func (t *telemetry) setOff(off bool) {
	if t.off.Swap(off) == off {
		return
	}
	if off {
		t.log.Info("runtime telemetry is off in the ops service: requests record no events", zap.Duration("asking_again_every", t.opts.ProbeInterval))
	} else {
		t.log.Info("runtime telemetry is on in the ops service: requests record events")
	}
}

package usecase

import (
	"context"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// Limits of one telemetry batch.
const (
	MaxEventsPerBatch = 5000
	maxRouteLen       = 256
	maxMethodLen      = 16
)

// sinkTimeout bounds one telemetry batch write.
const sinkTimeout = 5 * time.Second

// RuntimeEvent is one served request as the gateway reports it.
type RuntimeEvent struct {
	// OccurredAt is an RFC 3339 time; the time of receipt when missing or
	// malformed.
	OccurredAt string
	Method     string
	// Route is the matched route pattern; a query string or fragment is
	// cut.
	Route      string
	Status     int
	DurationMS float64
}

// RecordEventsCmd is a batch of runtime events, at most
// MaxEventsPerBatch.
type RecordEventsCmd struct {
	Events []RuntimeEvent
}

// RecordedEvents is what became of a batch.
type RecordedEvents struct {
	// Accepted counts the events stored.
	Accepted int
	// Off says telemetry is off: nothing sent is kept.
	Off bool
}

// RecordEvents stores a batch of runtime events in the configured sink,
// each kept to what telemetry may hold, and reports how many it accepted
// and whether telemetry is off (an empty batch asks only that). A sink failure is logged and counted here and
// answered fault.Unavailable to the caller (the gateway's background
// sender), never to an HTTP client.
func (a *App) RecordEvents(ctx context.Context, cmd RecordEventsCmd) (RecordedEvents, error) {
	batch := cmd.Events
	if n := len(batch); n > MaxEventsPerBatch {
		return RecordedEvents{}, fault.Validation(fault.Field("events", "at most %d events per batch, got %d", MaxEventsPerBatch, n))
	}
	if a.sink.Backend() == telemetry.Off {
		return RecordedEvents{Off: true}, nil
	}
	if len(batch) == 0 {
		return RecordedEvents{}, nil
	}
	now := a.cfg.Clock.Now()
	events := make([]telemetry.Event, 0, len(batch))
	for _, e := range batch {
		events = append(events, sanitizeEvent(e, now))
	}
	wctx, cancel := context.WithTimeout(ctx, sinkTimeout)
	defer cancel()
	if err := a.sink.Write(wctx, events); err != nil {
		a.eventsFailed.Add(float64(len(events)))
		a.log.Warn("telemetry sink failed: events dropped", zap.String("backend", a.sink.Backend()),
			zap.Int("events", len(events)), zap.Error(err))
		return RecordedEvents{}, fault.New(fault.Unavailable, "telemetry sink unavailable: %d events dropped", len(events))
	}
	a.eventsWritten.Add(float64(len(events)))
	return RecordedEvents{Accepted: len(events)}, nil
}

// PruneEvents deletes the runtime events that occurred before before and
// reports how many (a file or off sink prunes nothing): the retention
// runner's prune (ops.go).
func (a *App) PruneEvents(ctx context.Context, before time.Time) (int64, error) {
	return a.sink.Prune(ctx, before)
}

// sanitizeEvent keeps an event to what telemetry may hold even if a sender
// errs: a route without query string or fragment, bounded lengths, a sane
// duration and a time (the time of receipt when missing or malformed).
func sanitizeEvent(e RuntimeEvent, now time.Time) telemetry.Event {
	route, _, _ := strings.Cut(e.Route, "?")
	route, _, _ = strings.Cut(route, "#")
	at, err := wire.ParseTime(e.OccurredAt)
	if err != nil {
		at = now
	}
	d := e.DurationMS
	if math.IsNaN(d) || math.IsInf(d, 0) || d < 0 {
		d = 0
	}
	return telemetry.Event{
		OccurredAt: at.UTC(), Method: truncate(strings.ToUpper(e.Method), maxMethodLen),
		Route: truncate(route, maxRouteLen), Status: e.Status, DurationMS: d,
	}
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

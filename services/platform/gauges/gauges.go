// Package gauges exports the gauges a module reads from its database (the
// economy's backing, the task queue, the ideas by stage): a refresher reads
// them through the module's use cases every interval
// (FOUNDRY_METRICS_INTERVAL) and a scrape answers the values of the last
// read. A scrape therefore never queries the database, however many
// Prometheus servers scrape how often; and before the first read the
// gauges are absent rather than a made-up zero an alert would fire on (a
// reserve ratio of 0, a chain reported invalid before anything verified
// it). A failed read keeps the last values; foundry_metrics_refreshed_timestamp_seconds
// says how old they are.
package gauges

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/platform/config"
	"github.com/foundryhq/foundry/services/platform/periodic"
)

// DefaultInterval is how often the gauges are read when the setting says
// nothing: well inside Prometheus's usual 30 s to 1 min scrape, and a few
// single-row reads per module each time.
const DefaultInterval = 15 * time.Second

const (
	flagName = "metrics-interval"
	envName  = "FOUNDRY_METRICS_INTERVAL"
)

// Setting is the refreshers' interval: one setting for every module of a
// process, whichever modules define it.
type Setting struct{ f *flag.Flag }

// Register defines -metrics-interval (FOUNDRY_METRICS_INTERVAL) on fs the
// first time a module asks, and returns that same setting to every later
// one: the all-in-one process has one interval, a one-module binary the
// same flag.
func Register(fs *config.FlagSet) Setting {
	if f := fs.Flags().Lookup(flagName); f != nil {
		return Setting{f: f}
	}
	d := new(time.Duration)
	fs.Duration(d, flagName, envName, DefaultInterval,
		"how often each module reads the gauges /metrics reports from its database (economy, queue, stages, monitor)")
	return Setting{f: fs.Flags().Lookup(flagName)}
}

// Interval is the setting's value (DefaultInterval for a Setting no flag
// set registered); an error names the variable when it is not a positive
// duration.
func (s Setting) Interval() (time.Duration, error) {
	if s.f == nil {
		return DefaultInterval, nil
	}
	d, _ := s.f.Value.(flag.Getter).Get().(time.Duration)
	if d <= 0 {
		return 0, fmt.Errorf("%s: want a positive duration, got %s", envName, d)
	}
	return d, nil
}

// Desc declares a gauge family of a Set.
type Desc struct {
	Name, Help string
	// Labels are the family's label names.
	Labels []string
}

// Sample is one gauge's value. Labels are its label values, in the order
// of its Desc's Labels.
type Sample struct {
	Name   string
	Labels []string
	Value  float64
}

// Set is a module's refreshed gauges, a prometheus.Collector: Store
// replaces every value at once, and a scrape reports what was stored last.
// A family without a sample in the last Store is absent.
type Set struct {
	descs map[string]*prometheus.Desc
	order []string

	mu      sync.Mutex
	samples []Sample

	refreshed prometheus.Gauge
	failures  prometheus.Counter
}

// New returns a Set of the families, registered on reg with the refresh's
// own timestamp and failure count.
func New(reg prometheus.Registerer, descs ...Desc) *Set {
	s := &Set{
		descs: make(map[string]*prometheus.Desc, len(descs)),
		refreshed: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "foundry_metrics_refreshed_timestamp_seconds",
			Help: "When the module's gauges read from its database were last read successfully (Unix seconds).",
		}),
		failures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "foundry_metrics_refresh_failures_total",
			Help: "Reads of the module's database gauges that failed (the gauges keep their last values).",
		}),
	}
	for _, d := range descs {
		s.descs[d.Name] = prometheus.NewDesc(d.Name, d.Help, d.Labels, nil)
		s.order = append(s.order, d.Name)
	}
	reg.MustRegister(s, s.refreshed, s.failures)
	return s
}

// Store replaces the values the Set reports.
func (s *Set) Store(samples []Sample) {
	s.mu.Lock()
	s.samples = samples
	s.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (s *Set) Describe(ch chan<- *prometheus.Desc) {
	for _, name := range s.order {
		ch <- s.descs[name]
	}
}

// Collect implements prometheus.Collector. A sample of an undeclared family
// or with the wrong labels fails the scrape, saying which: a mistake in a
// module's mapping shows at its first test.
func (s *Set) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	samples := s.samples
	s.mu.Unlock()
	for _, smp := range samples {
		d, ok := s.descs[smp.Name]
		if !ok {
			ch <- prometheus.NewInvalidMetric(prometheus.NewInvalidDesc(fmt.Errorf("gauge %s is not declared", smp.Name)),
				errors.New("undeclared gauge"))
			continue
		}
		m, err := prometheus.NewConstMetric(d, prometheus.GaugeValue, smp.Value, smp.Labels...)
		if err != nil {
			m = prometheus.NewInvalidMetric(d, err)
		}
		ch <- m
	}
}

// Run reads the gauges with read at once and then every interval until ctx
// ends, storing each successful read. read must return every sample or an
// error: a failed read keeps the last values whole. A failure is logged the
// first time, then once a minute while it goes on.
func (s *Set) Run(ctx context.Context, log *zap.Logger, every time.Duration, read func(ctx context.Context) ([]Sample, error)) {
	var failingSince, logged time.Time
	// A read gets at least 10 s whatever the interval (tests refresh every
	// few milliseconds; a slow database should still answer).
	timeout := max(every, 10*time.Second)
	periodic.Run(ctx, every, func() {
		rctx, cancel := context.WithTimeout(ctx, timeout)
		samples, err := read(rctx)
		cancel()
		switch {
		case err != nil && ctx.Err() != nil:
			// Stopping.
		case err != nil:
			s.failures.Inc()
			now := time.Now()
			if failingSince.IsZero() {
				failingSince = now
			}
			if now.Sub(logged) >= time.Minute {
				log.Warn("reading the metrics gauges failed; /metrics keeps the last values", zap.Error(err),
					zap.Duration("failing_for", now.Sub(failingSince)))
				logged = now
			}
		default:
			s.Store(samples)
			s.refreshed.SetToCurrentTime()
			if !failingSince.IsZero() {
				log.Info("reading the metrics gauges works again", zap.Duration("failed_for", time.Since(failingSince)))
				failingSince, logged = time.Time{}, time.Time{}
			}
		}
	})
}

// Bool is 1 for true, 0 for false: a gauge's value for a condition.
func Bool(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Age is the seconds from since to now, never negative (clocks of two
// replicas may disagree a little); 0 when since is zero (nothing waits).
func Age(now, since time.Time) float64 {
	if since.IsZero() {
		return 0
	}
	return max(now.Sub(since).Seconds(), 0)
}

package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Request makes the i-th request of a run (i counts across the run's
// clients).
type Request func(i int64) (method, path string, body []byte, h http.Header)

// Stats are the measurements of one route against one server.
type Stats struct {
	// Requests are the requests answered 2xx; Latencies holds their times.
	Requests  int64
	Elapsed   time.Duration
	Latencies []time.Duration
	// Errors are the requests that failed or were answered other than 2xx
	// (DriveCounting's; Drive stops at the first), FirstError the first
	// one's message.
	Errors     int64
	FirstError string
	CPU        CPUSample // filled by the caller, around the run
}

// Add adds another run of the same route and server.
func (s *Stats) Add(o *Stats) {
	s.Requests += o.Requests
	s.Elapsed += o.Elapsed
	s.Latencies = append(s.Latencies, o.Latencies...)
	s.Errors += o.Errors
	if s.FirstError == "" {
		s.FirstError = o.FirstError
	}
	s.CPU = s.CPU.Add(o.CPU)
}

// PerRequest is CPU time d per request in microseconds.
func (s *Stats) PerRequest(d time.Duration) float64 {
	if s.Requests == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(s.Requests)
}

// Rate is the requests answered per second.
func (s *Stats) Rate() float64 { return float64(s.Requests) / s.Elapsed.Seconds() }

// Percentile is the p-th percentile of the latencies (0 without any).
func (s *Stats) Percentile(p float64) time.Duration {
	if len(s.Latencies) == 0 {
		return 0
	}
	l := slices.Clone(s.Latencies)
	slices.Sort(l)
	return l[min(len(l)-1, int(p/100*float64(len(l))))]
}

// Drive sends r's requests to base from c clients for d and measures
// them; any request that fails or answers other than 2xx fails the run.
func Drive(ctx context.Context, client *http.Client, base string, r Request, c int, d time.Duration) (*Stats, error) {
	return drive(ctx, client, base, r, c, d, true)
}

// DriveCounting is Drive that counts failed requests in the stats and goes
// on, so a route that fails is reported as failing rather than ending
// the run.
func DriveCounting(ctx context.Context, client *http.Client, base string, r Request, c int, d time.Duration) (*Stats, error) {
	return drive(ctx, client, base, r, c, d, false)
}

func drive(ctx context.Context, client *http.Client, base string, r Request, c int, d time.Duration, failFast bool) (*Stats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		n      atomic.Int64
		failed atomic.Int64
		// fatal ends the run (a request that cannot be made; with failFast,
		// any failure); firstFailure is the first failure counted instead.
		fatal        error
		fatalOnce    sync.Once
		firstFailure string
		failureOnce  sync.Once
		wg           sync.WaitGroup
	)
	stop := func(err error) { fatalOnce.Do(func() { fatal = err; cancel() }) }
	lat := make([][]time.Duration, c)
	begin := time.Now()
	deadline := begin.Add(d)
	for w := range c {
		wg.Go(func() {
			for time.Now().Before(deadline) && ctx.Err() == nil {
				method, path, body, h := r(n.Add(1))
				req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(body))
				if err != nil {
					stop(err)
					return
				}
				if body != nil {
					req.Header.Set("Content-Type", "application/json")
				}
				for k, v := range h {
					req.Header[k] = v
				}
				t0 := time.Now()
				resp, err := client.Do(req)
				if err == nil {
					raw, _ := io.ReadAll(resp.Body)
					_ = resp.Body.Close()
					if resp.StatusCode/100 != 2 {
						err = fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(raw))
					}
				}
				if err != nil {
					if ctx.Err() != nil && errors.Is(err, context.Canceled) {
						return
					}
					if failFast {
						stop(err)
						return
					}
					failed.Add(1)
					failureOnce.Do(func() { firstFailure = err.Error() })
					continue
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		})
	}
	wg.Wait()
	if fatal != nil {
		return nil, fatal
	}
	s := &Stats{Elapsed: time.Since(begin), Errors: failed.Load(), FirstError: firstFailure}
	for _, l := range lat {
		s.Latencies = append(s.Latencies, l...)
	}
	s.Requests = int64(len(s.Latencies))
	return s, nil
}

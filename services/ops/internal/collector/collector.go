// Package collector gathers provider usage live. A Collector reports one
// provider family's snapshots; Gather runs every collector concurrently and
// returns at the latency budget whatever has arrived, so a stalled provider
// never holds up the report.
package collector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// Collector reports one provider family's current usage.
type Collector interface {
	// Family is the family the collector reports ("openai" or "claude").
	Family() string
	// Collect fetches the family's snapshots; it must return when ctx is done.
	Collect(ctx context.Context) ([]usage.Snapshot, error)
}

// Result is one collector's outcome within the budget.
type Result struct {
	Family    string
	Snapshots []usage.Snapshot
	Err       error
}

// ErrMissedBudget is a missed collection's error when the collector had not
// answered when the budget ended.
var ErrMissedBudget = errors.New("missed the latency budget")

// Gather runs the collectors concurrently and returns when all have
// answered or the budget has passed, whichever comes first. done holds the
// collectors that succeeded in time; missed, sorted by family, those that
// failed (with their error) or missed the budget (ErrMissedBudget). A
// collector that ignores cancellation is abandoned, not waited for.
func Gather(ctx context.Context, budget time.Duration, cs []Collector) (done, missed []Result) {
	if len(cs) == 0 {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	ch := make(chan Result, len(cs)) // buffered: a late collector never blocks
	for _, c := range cs {
		go func() {
			snaps, err := c.Collect(ctx)
			ch <- Result{Family: c.Family(), Snapshots: snaps, Err: err}
		}()
	}
	answered := map[string]bool{}
wait:
	for range cs {
		select {
		case r := <-ch:
			answered[r.Family] = true
			if r.Err != nil {
				missed = append(missed, r)
			} else {
				done = append(done, r)
			}
		case <-ctx.Done():
			break wait
		}
	}
	for _, c := range cs {
		if !answered[c.Family()] {
			missed = append(missed, Result{Family: c.Family(), Err: ErrMissedBudget})
		}
	}
	slices.SortFunc(missed, func(a, b Result) int { return strings.Compare(a.Family, b.Family) })
	return done, missed
}

// Families names the families of results.
func Families(rs []Result) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Family)
	}
	return out
}

// MaxResponseBytes bounds a provider's answer.
const MaxResponseBytes = 1 << 20

// HTTP collects a family's usage from a URL that answers GET with JSON:
//
//	{"provider": "openai-codex", "collected_at": "2026-05-01T12:00:00Z",
//	 "metrics": [{"name": "monthly_tokens", "value": 1200, "limit": 100000,
//	              "unit": "tokens", "is_summary": true}]}
//
// or several snapshots at once: {"snapshots": [<snapshot>, ...]}. provider
// defaults to the family and must belong to it; collected_at defaults to the
// time of collection. The key, when set, is sent as "Authorization: Bearer
// <key>".
type HTTP struct {
	family string
	url    string
	key    string
	client *http.Client
	clock  clock.Clock
}

// NewHTTP returns a collector for family at url. A nil client means a
// default one (the budget bounds each call through its context anyway).
func NewHTTP(family, url, key string, client *http.Client, clk clock.Clock) *HTTP {
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	if clk == nil {
		clk = clock.Real{}
	}
	return &HTTP{family: family, url: url, key: key, client: client, clock: clk}
}

// Family implements Collector.
func (c *HTTP) Family() string { return c.family }

type wireSnapshot struct {
	Provider    string         `json:"provider"`
	CollectedAt string         `json:"collected_at"`
	Metrics     []usage.Metric `json:"metrics"`
}

type wireBody struct {
	wireSnapshot
	Snapshots []wireSnapshot `json:"snapshots"`
}

// Collect implements Collector.
func (c *HTTP) Collect(ctx context.Context) ([]usage.Snapshot, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, fmt.Errorf("collect %s usage: %w", c.family, err)
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("collect %s usage: %w", c.family, redactURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("collect %s usage: the provider answered %d", c.family, resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponseBytes+1))
	if err != nil {
		return nil, fmt.Errorf("collect %s usage: read the answer: %w", c.family, err)
	}
	if len(raw) > MaxResponseBytes {
		return nil, fmt.Errorf("collect %s usage: the answer is over %d bytes", c.family, MaxResponseBytes)
	}
	var body wireBody
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, fmt.Errorf("collect %s usage: decode the answer: %w", c.family, err)
	}
	snaps := body.Snapshots
	if snaps == nil {
		snaps = []wireSnapshot{body.wireSnapshot}
	}
	now := c.clock.Now()
	out := make([]usage.Snapshot, 0, len(snaps))
	for _, w := range snaps {
		if w.Provider == "" {
			w.Provider = c.family
		}
		family, err := usage.Validate(w.Provider, w.Metrics)
		if err != nil {
			return nil, fmt.Errorf("collect %s usage: %w", c.family, err)
		}
		if family != c.family {
			return nil, fmt.Errorf("collect %s usage: provider %q belongs to %s", c.family, w.Provider, family)
		}
		at := now
		if w.CollectedAt != "" {
			if at, err = wire.ParseTime(w.CollectedAt); err != nil {
				return nil, fmt.Errorf("collect %s usage: collected_at: want RFC 3339", c.family)
			}
		}
		out = append(out, usage.Snapshot{Provider: usage.NormalizeProvider(w.Provider), Metrics: w.Metrics, CollectedAt: at.UTC()})
	}
	return out, nil
}

// redactURLError drops the URL from a transport error: it may carry a key
// in its query string.
func redactURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

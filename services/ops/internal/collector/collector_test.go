package collector_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/collector"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/clock"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// provider is a fake provider endpoint answering body with status code.
func provider(t *testing.T, code int, body string, gotAuth *atomic.Value) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if gotAuth != nil {
			gotAuth.Store(r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestHTTPCollect(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := clock.NewFake(t0)

	t.Run("one snapshot, key as bearer token, defaults filled in", func(t *testing.T) {
		t.Parallel()
		var auth atomic.Value
		url := provider(t, 200, `{"metrics":[{"name":"monthly_tokens","value":10,"limit":100,"unit":"tokens","is_summary":true}]}`, &auth)
		got, err := collector.NewHTTP(usage.OpenAI, url, "sk-test", nil, clk).Collect(ctx)
		require.NoError(t, err)
		limit := 100.0
		require.Equal(t, []usage.Snapshot{{
			Provider: "openai", CollectedAt: t0,
			Metrics: []usage.Metric{{Name: "monthly_tokens", Value: 10, Limit: &limit, Unit: "tokens", IsSummary: true}},
		}}, got)
		require.Equal(t, "Bearer sk-test", auth.Load())
	})

	t.Run("several snapshots of variants", func(t *testing.T) {
		t.Parallel()
		url := provider(t, 200, `{"snapshots":[
			{"provider":"Claude-Code","collected_at":"2026-05-01T11:00:00Z","metrics":[{"name":"weekly","value":1}]},
			{"provider":"claude","metrics":[{"name":"daily","value":2}]}]}`, nil)
		got, err := collector.NewHTTP(usage.Claude, url, "", nil, clk).Collect(ctx)
		require.NoError(t, err)
		require.Len(t, got, 2)
		require.Equal(t, "claude-code", got[0].Provider, "provider names are normalized")
		require.Equal(t, t0.Add(-time.Hour), got[0].CollectedAt)
		require.Equal(t, "claude", got[1].Provider)
	})

	tests := []struct {
		name string
		code int
		body string
		want string
	}{
		{"an error status", 503, `{}`, "answered 503"},
		{"not JSON", 200, `<html>`, "decode"},
		{"a provider of another family", 200, `{"provider":"claude","metrics":[{"name":"a","value":1}]}`, "belongs to claude"},
		{"invalid metrics", 200, `{"metrics":[]}`, "at least one metric"},
		{"a bad time", 200, `{"collected_at":"yesterday","metrics":[{"name":"a","value":1}]}`, "RFC 3339"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := collector.NewHTTP(usage.OpenAI, provider(t, tc.code, tc.body, nil), "", nil, clk).Collect(ctx)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// fake is a collector whose Collect blocks until release is closed (or ctx
// is done, unless stubborn), then returns snaps or err.
type fake struct {
	family   string
	snaps    []usage.Snapshot
	err      error
	release  chan struct{}
	stubborn bool
}

func (f *fake) Family() string { return f.family }

func (f *fake) Collect(ctx context.Context) ([]usage.Snapshot, error) {
	if f.release != nil {
		if f.stubborn {
			<-f.release
		} else {
			select {
			case <-f.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return f.snaps, f.err
}

func TestGather(t *testing.T) {
	t.Parallel()
	snap := []usage.Snapshot{{Provider: "openai", CollectedAt: t0, Metrics: []usage.Metric{{Name: "a", Value: 1}}}}

	t.Run("everyone answers", func(t *testing.T) {
		t.Parallel()
		results, missed := collector.Gather(context.Background(), time.Minute,
			[]collector.Collector{&fake{family: usage.OpenAI, snaps: snap}, &fake{family: usage.Claude, err: errors.New("boom")}})
		require.Len(t, results, 1)
		require.Equal(t, usage.OpenAI, results[0].Family)
		require.Equal(t, snap, results[0].Snapshots)
		require.Equal(t, []string{usage.Claude}, collector.Families(missed), "a failure is a miss")
		require.EqualError(t, missed[0].Err, "boom")
	})

	t.Run("a stalled collector is abandoned at the budget", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		defer close(release)
		results, missed := collector.Gather(context.Background(), 50*time.Millisecond, []collector.Collector{
			&fake{family: usage.OpenAI, snaps: snap},
			&fake{family: usage.Claude, release: release, stubborn: true}, // ignores cancellation
		})
		require.Len(t, results, 1)
		require.Equal(t, []string{usage.Claude}, collector.Families(missed))
		require.ErrorIs(t, missed[0].Err, collector.ErrMissedBudget)
	})

	t.Run("no collectors", func(t *testing.T) {
		t.Parallel()
		results, missed := collector.Gather(context.Background(), time.Second, nil)
		require.Empty(t, results)
		require.Empty(t, missed)
	})
}

package collector_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ops/internal/collector"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/platform/clock"
)

// answer is a RoundTripper that answers every request with one response,
// so the provider's answer is fuzzed without a network.
type answer struct {
	status int
	body   []byte
}

func (a answer) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: a.status, Body: io.NopCloser(bytes.NewReader(a.body)), Header: http.Header{}}, nil
}

// FuzzHTTPCollect checks how a provider's usage answer is read: an
// accepted answer yields snapshots that each pass usage.Validate, belong
// to the collector's family, carry the stored (normalised) provider name
// and a UTC time; anything else is an error that never shows the key.
func FuzzHTTPCollect(f *testing.F) {
	f.Add(200, []byte(`{"metrics":[{"name":"monthly_tokens","value":10,"limit":100,"unit":"tokens","is_summary":true}]}`))
	f.Add(200, []byte(`{"snapshots":[{"provider":"Claude-Code","collected_at":"2026-05-01T11:00:00+02:00","metrics":[{"name":"w","value":1}]}]}`))
	f.Add(200, []byte(`{"provider":"claude","metrics":[{"name":"w","value":1}]}`))
	f.Add(200, []byte(`{"metrics":[{"name":"a","value":-1},{"name":"a","value":1e999}]}`))
	f.Add(200, []byte(`{"snapshots":[],"metrics":[{"name":"a","value":1}]}`))
	f.Add(200, []byte(`{"snapshots":null,"metrics":[]}`))
	f.Add(200, []byte(`{"collected_at":"yesterday","metrics":[{"name":"a","value":1}]}`))
	f.Add(200, []byte(`{"metrics":[{"name":"\ud800","value":1,"unit":"\u0000"}]}`))
	f.Add(500, []byte(`{}`))
	f.Add(200, []byte(`[`))
	f.Fuzz(func(t *testing.T, status int, body []byte) {
		const key = "sk-s3cret-key"
		c := collector.NewHTTP(usage.OpenAI, "https://usage.example/v1?key="+key, key,
			&http.Client{Transport: answer{status: status, body: body}}, clock.NewFake(t0))
		snaps, err := c.Collect(context.Background())
		if err != nil {
			require.NotContains(t, err.Error(), key)
			require.Nil(t, snaps)
			return
		}
		require.Equal(t, 2, status/100)
		for _, s := range snaps {
			family, err := usage.Validate(s.Provider, s.Metrics)
			require.NoError(t, err)
			require.Equal(t, usage.OpenAI, family)
			require.Equal(t, usage.NormalizeProvider(s.Provider), s.Provider)
			require.Equal(t, "UTC", s.CollectedAt.Location().String())
			for _, m := range s.Metrics {
				require.True(t, utf8.ValidString(m.Name) && utf8.ValidString(m.Unit), "metric %q %q", m.Name, m.Unit)
				require.NotEmpty(t, strings.TrimSpace(m.Name))
			}
		}
	})
}

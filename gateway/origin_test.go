package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHostRule(t *testing.T) {
	t.Parallel()
	loopback := newHostRule("", "127.0.0.1:8080")
	require.True(t, loopback.loopbackOnly)
	for _, host := range []string{"127.0.0.1:8080", "localhost:8080", "LOCALHOST", "[::1]:8080", "127.9.9.9", "app.localhost:3000"} {
		require.Empty(t, loopback.check(host), host)
	}
	for _, host := range []string{"evil.example", "evil.example:8080", "192.168.1.5:8080", "localhost.evil.example"} {
		require.Contains(t, loopback.check(host), "is not served here", host)
	}

	everywhere := newHostRule("", ":8080")
	require.False(t, everywhere.loopbackOnly, "listening on every address (a pod): any host")
	require.Empty(t, everywhere.check("foundry.example.com"))

	listed := newHostRule(" Foundry.Example.com , localhost ", "127.0.0.1:8080")
	require.Equal(t, []string{"foundry.example.com", "localhost"}, listed.allowed)
	require.Empty(t, listed.check("foundry.example.com:443"))
	require.Empty(t, listed.check("localhost:8080"))
	require.Equal(t, `host "127.0.0.1:8080" is not served here (FOUNDRY_ALLOWED_HOSTS)`, listed.check("127.0.0.1:8080"), "the list replaces the loopback rule")
}

func TestCrossOrigin(t *testing.T) {
	t.Parallel()
	h := crossOrigin(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	for _, tt := range []struct {
		name, method string
		headers      map[string]string
		want         int
	}{
		{"a program (no browser headers)", http.MethodPost, nil, http.StatusOK},
		{"the dashboard itself", http.MethodPost, map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusOK},
		{"another site's page", http.MethodPost, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"another site's page, an older browser", http.MethodPost, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"the same origin, an older browser", http.MethodPost, map[string]string{"Origin": "http://127.0.0.1:8080"}, http.StatusOK},
		{"a cross-site read", http.MethodGet, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusOK},
	} {
		r := httptest.NewRequest(tt.method, "http://127.0.0.1:8080/api/ideas/x/advance", nil)
		for k, v := range tt.headers {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, tt.want, w.Code, tt.name)
		if tt.want == http.StatusForbidden {
			var body ErrorBody
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
			require.Contains(t, body.Detail, "cross-origin request refused", tt.name)
		}
	}
}

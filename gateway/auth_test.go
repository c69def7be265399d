package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCheckHeaders: a credential or Idempotency-Key header the gateway
// could not forward as it is (grpc-gateway drops values that are not
// printable ASCII) is refused with a 422 naming it, never passed on as
// "no header".
func TestCheckHeaders(t *testing.T) {
	t.Parallel()
	passed := false
	h := checkHeaders(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed = true }))
	tests := []struct {
		name   string
		header string
		values []string
		detail string // "" when the request passes
	}{
		{"a plain key", "Idempotency-Key", []string{"retry-1"}, ""},
		{"255 characters", "Idempotency-Key", []string{strings.Repeat("k", 255)}, ""},
		{"a Bearer token", "Authorization", []string{"Bearer fdt_" + strings.Repeat("0", 64)}, ""},
		{"an admin key", "X-Api-Key", []string{"k1"}, ""},
		{"non-ASCII", "Idempotency-Key", []string{"café-retry"}, "Idempotency-Key: must be 1 to 255 printable ASCII characters"},
		{"a tab", "Idempotency-Key", []string{"a\tb"}, "Idempotency-Key: must be 1 to 255 printable ASCII characters"},
		{"empty", "Idempotency-Key", []string{""}, "Idempotency-Key: must be 1 to 255 printable ASCII characters"},
		{"256 characters", "Idempotency-Key", []string{strings.Repeat("k", 256)}, "Idempotency-Key: must be 1 to 255 printable ASCII characters"},
		{"twice", "Idempotency-Key", []string{"a", "b"}, "Idempotency-Key: must be sent once"},
		{"a non-ASCII admin key", "X-Api-Key", []string{"kéy"}, "X-Api-Key: must be 1 to 255 printable ASCII characters"},
		{"a control character in a token", "Authorization", []string{"Bearer a\x01b"}, "Authorization: must be 1 to 255 printable ASCII characters"},
	}
	for _, tt := range tests {
		passed = false
		r := httptest.NewRequest(http.MethodPost, "/api/cc/withdraw", nil)
		r.Header[tt.header] = tt.values
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if tt.detail == "" {
			require.True(t, passed, tt.name)
			continue
		}
		require.False(t, passed, tt.name)
		require.Equal(t, http.StatusUnprocessableEntity, w.Code, tt.name)
		var body ErrorBody
		require.NoError(t, json.Unmarshal(w.Body.Bytes(), &body))
		require.Equal(t, tt.detail, body.Detail, tt.name)
		require.Equal(t, tt.header, body.Errors[0].Field, tt.name)
	}
}

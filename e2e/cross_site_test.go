package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// TestCrossSiteAndRebinding: the 415 rule was the only cross-site
// defence, and it refused legitimate body-less actions labelled as forms
// (curl -X POST with an empty -d), while a rebound name (Host: evil.example)
// reached every write. Now an empty body passes whatever its type, a
// browser's cross-site write is a 403, and a loopback Foundry answers
// only loopback names.
func TestCrossSiteAndRebinding(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		idea := creditIdea(t, sys, "Cross-site idea")
		send := func(method, path, contentType, body string, headers map[string]string) response {
			t.Helper()
			req, err := http.NewRequest(method, sys.URL(path), strings.NewReader(body))
			require.NoError(t, err)
			if contentType != "" {
				req.Header.Set("Content-Type", contentType)
			}
			req.Header.Set("X-API-Key", allinonetest.AdminKey)
			for k, v := range headers {
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
			return do(t, req)
		}
		const form = "application/x-www-form-urlencoded"
		advanced := send(http.MethodPost, "/api/ideas/"+idea+"/advance", form, "", nil)
		requireStatus(t, http.StatusOK, advanced)
		require.Equal(t, "specced", advanced.JSON["stage"], "curl -d '' labels its empty body a form: it is still an advance")
		requireStatus(t, http.StatusNotImplemented, send(http.MethodPost, "/api/onboarding/upgrade", form, "", nil))
		requireStatus(t, http.StatusUnsupportedMediaType, send(http.MethodPost, "/api/ideas/"+idea+"/advance", form, "a=1", nil))

		refusedWith(t, http.StatusForbidden, send(http.MethodPost, "/api/ideas/"+idea+"/advance", "", "", map[string]string{"Sec-Fetch-Site": "cross-site"}))
		refusedWith(t, http.StatusForbidden, send(http.MethodPost, "/api/ideas/"+idea+"/advance", "", "", map[string]string{"Origin": "https://evil.example"}))
		r := send(http.MethodPost, "/api/onboarding/register", "application/json", `{"handle":"rebound"}`, map[string]string{"Host": "evil.example"})
		refusedWith(t, http.StatusForbidden, r)
		require.Contains(t, r.JSON["detail"], `host "evil.example" is not served here`)
		r = send(http.MethodGet, "/api/ideas/"+idea, "", "", map[string]string{"Host": "evil.example:80"})
		refusedWith(t, http.StatusForbidden, r)
		requireStatus(t, http.StatusOK, send(http.MethodGet, "/api/ideas/"+idea, "", "", map[string]string{"Host": "localhost"}))

		after := request(t, http.MethodGet, sys.URL("/api/ideas/"+idea), nil)
		require.Equal(t, "specced", after.JSON["stage"], "the refused advances moved nothing")
	})
}

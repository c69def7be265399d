package e2e_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/allinone/allinonetest"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
)

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// register registers handle as a newcomer does, with no credential
// (registration is public).
func register(t *testing.T, sys *allinonetest.System, handle string) response {
	t.Helper()
	return request(t, http.MethodPost, sys.URL("/api/onboarding/register"), map[string]any{"handle": handle}, anonymous)
}

func TestOnboarding(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		r := register(t, sys, "ada_lovelace-1")
		requireStatus(t, http.StatusCreated, r)
		token, _ := r.JSON["session_token"].(string)
		require.Regexp(t, hex64, token)
		require.Equal(t, "tofu", r.JSON["trust_level"])
		require.Equal(t, "ada_lovelace-1", r.JSON["handle"])
		require.Regexp(t, `^[0-9a-f-]{36}$`, r.JSON["contributor_id"])

		t.Run("session with the token", func(t *testing.T) {
			s := request(t, http.MethodGet, sys.URL("/api/onboarding/session"), nil, "Authorization: Bearer "+token)
			requireStatus(t, http.StatusOK, s)
			require.Equal(t, map[string]any{
				"valid": true, "contributor_id": r.JSON["contributor_id"], "handle": "ada_lovelace-1", "trust_level": "tofu",
			}, s.JSON)
			require.Equal(t, `{"valid":true,"contributor_id":"`+r.JSON["contributor_id"].(string)+`","handle":"ada_lovelace-1","trust_level":"tofu"}`,
				string(s.Raw), "responses are compact, stable JSON")
		})

		t.Run("session without valid credentials is 401", func(t *testing.T) {
			for name, headers := range map[string][]string{
				"no header":        nil,
				"basic scheme":     {"Authorization: Basic x"},
				"wrong token":      {"Authorization: Bearer " + strings.Repeat("0", 64)},
				"bearer, no token": {"Authorization: Bearer"},
				"token alone":      {"Authorization: " + token},
				"the admin key":    {asAdmin}, // a valid credential, but no session
			} {
				s := request(t, http.MethodGet, sys.URL("/api/onboarding/session"), nil, headers...)
				requireStatus(t, http.StatusUnauthorized, s)
				require.NotContains(t, string(s.Raw), token, name)
			}
		})

		t.Run("handle pattern violations are 422", func(t *testing.T) {
			for _, handle := range []string{"Bad Handle!", "ab", strings.Repeat("a", 41), "UPPER", "", "tab\there"} {
				r := register(t, sys, handle)
				requireStatus(t, http.StatusUnprocessableEntity, r)
				errs, _ := r.JSON["errors"].([]any)
				require.Len(t, errs, 1, "handle %q: %s", handle, r.Raw)
				require.Equal(t, "handle", errs[0].(map[string]any)["field"])
			}
			requireStatus(t, http.StatusCreated, register(t, sys, strings.Repeat("a", 40)))
			requireStatus(t, http.StatusCreated, register(t, sys, "abc"))
		})

		t.Run("a taken handle is 409 handle_taken", func(t *testing.T) {
			r := register(t, sys, "ada_lovelace-1")
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, map[string]any{"detail": "handle_taken"}, r.JSON)
		})

		t.Run("upgrade is always 501", func(t *testing.T) {
			for _, body := range []any{nil, "", "{}", `{"provider":"github"}`, "not json", "[1,2]"} {
				r := request(t, http.MethodPost, sys.URL("/api/onboarding/upgrade"), body, anonymous)
				requireStatus(t, http.StatusNotImplemented, r)
			}
		})

		t.Run("bad bodies are 422, never 5xx", func(t *testing.T) {
			for name, body := range map[string]string{
				"invalid JSON":     `{"handle":`,
				"JSON array":       `["abc"]`,
				"JSON string":      `"abc"`,
				"wrong field type": `{"handle": 42}`,
				"unknown field":    `{"handle": "valid_one", "admin": true}`,
				"null handle type": `{"handle": {"a": 1}}`,
			} {
				r := request(t, http.MethodPost, sys.URL("/api/onboarding/register"), body, anonymous)
				require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%s: %s", name, r.Raw)
				requireStatus(t, http.StatusUnprocessableEntity, r)
			}
			// The unknown-field request must not have registered anything.
			requireStatus(t, http.StatusCreated, register(t, sys, "valid_one"))
		})

		t.Run("a body over the cap is 413", func(t *testing.T) {
			big := `{"handle":"` + strings.Repeat("a", 2<<20) + `"}`
			r := request(t, http.MethodPost, sys.URL("/api/onboarding/register"), big, anonymous)
			requireStatus(t, http.StatusRequestEntityTooLarge, r)
		})
	})
}

func TestRegistrationSurvivesRestart(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		sys := allinonetest.Start(t, allinonetest.NewStorage(t, engine))
		r := register(t, sys, "persistent")
		requireStatus(t, http.StatusCreated, r)
		token := r.JSON["session_token"].(string)

		sys.Restart()

		again := register(t, sys, "persistent")
		require.Equal(t, http.StatusConflict, again.Status, "body: %s", again.Raw)
		require.Equal(t, "handle_taken", again.JSON["detail"])
		s := request(t, http.MethodGet, sys.URL("/api/onboarding/session"), nil, "Authorization: Bearer "+token)
		requireStatus(t, http.StatusOK, s)
		require.Equal(t, "persistent", s.JSON["handle"])
	})
}

func TestRegistrationRateLimit(t *testing.T) {
	t.Parallel()
	sys := allinonetest.Start(t, allinonetest.NewStorage(t, database.SQLite), "-register-rate-per-min=3")
	for i, handle := range []string{"rate_a", "rate_b", "Bad Handle!"} {
		r := register(t, sys, handle)
		require.NotEqual(t, http.StatusTooManyRequests, r.Status, "request %d is within the limit", i)
	}
	r := register(t, sys, "rate_d")
	requireStatus(t, http.StatusTooManyRequests, r)
	require.Contains(t, r.JSON["detail"], "too many registrations")
	// 3 a minute: the next token comes 20 s after the first was taken.
	retry, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err, "Retry-After in whole seconds, got %q", r.Header.Get("Retry-After"))
	require.True(t, retry >= 1 && retry <= 20, "Retry-After %d, want 1..20", retry)
}

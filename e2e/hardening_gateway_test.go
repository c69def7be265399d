package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/allinone/allinonetest"
)

// rawPost sends body with exactly the Content-Type given ("" sends none),
// as a browser form or a script would. Like request, it writes as the
// administrator, so a refusal is about the body, not the credential.
func rawPost(t *testing.T, url, contentType, body string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-API-Key", allinonetest.AdminKey)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	out := response{Status: resp.StatusCode, Header: resp.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.JSON)
	return out
}

func totalIdeas(t *testing.T, sys *allinonetest.System) float64 {
	t.Helper()
	r := request(t, http.MethodGet, sys.URL("/api/ideas"), nil)
	requireStatus(t, http.StatusOK, r)
	summary, _ := r.JSON["summary"].(map[string]any)
	n, ok := summary["total_ideas"].(float64)
	require.True(t, ok, "summary.total_ideas in %s", r.Raw)
	return n
}

func TestOnlyJSONBodiesAreAccepted(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		idea := `{"name":"Cache invoices","potential_value":100,"estimated_cost":10}`

		t.Run("text/plain is 415 and writes nothing", func(t *testing.T) {
			for _, ct := range []string{"text/plain", "text/plain;charset=UTF-8"} {
				r := rawPost(t, sys.URL("/api/ideas"), ct, idea)
				requireStatus(t, http.StatusUnsupportedMediaType, r)
				require.Contains(t, r.JSON["detail"], "application/json")
			}
			require.Zero(t, totalIdeas(t, sys), "no idea was created")
		})

		t.Run("a form post is 415 and writes nothing", func(t *testing.T) {
			r := rawPost(t, sys.URL("/api/onboarding/register"), "application/x-www-form-urlencoded", "handle=formpost")
			requireStatus(t, http.StatusUnsupportedMediaType, r)
			r = rawPost(t, sys.URL("/api/onboarding/register"), "multipart/form-data; boundary=x", "--x\r\n\r\nhandle=formpost\r\n--x--")
			requireStatus(t, http.StatusUnsupportedMediaType, r)
			again := register(t, sys, "formpost")
			requireStatus(t, http.StatusCreated, again) // the handle was never taken
		})

		t.Run("the GitHub webhook takes JSON only", func(t *testing.T) {
			r := rawPost(t, sys.URL("/api/contributions/github"), "application/x-www-form-urlencoded", "payload=%7B%7D")
			requireStatus(t, http.StatusUnsupportedMediaType, r)
		})

		t.Run("a body without a Content-Type is 415", func(t *testing.T) {
			requireStatus(t, http.StatusUnsupportedMediaType, rawPost(t, sys.URL("/api/ideas"), "", idea))
			require.Zero(t, totalIdeas(t, sys))
		})

		t.Run("JSON with a charset and +json types are accepted", func(t *testing.T) {
			requireStatus(t, http.StatusCreated, rawPost(t, sys.URL("/api/ideas"), "application/json; charset=utf-8", idea))
			requireStatus(t, http.StatusCreated, rawPost(t, sys.URL("/api/assets"), "application/vnd.foundry+json", `{"type":"CODE","name":"billing"}`))
			require.Equal(t, float64(1), totalIdeas(t, sys))
		})

		t.Run("a body-less action needs no Content-Type", func(t *testing.T) {
			created := request(t, http.MethodPost, sys.URL("/api/ideas"), map[string]any{"name": "Advance me", "potential_value": 10, "estimated_cost": 1})
			requireStatus(t, http.StatusCreated, created)
			id, _ := created.JSON["id"].(string)
			r := rawPost(t, sys.URL("/api/ideas/"+id+"/advance"), "", "")
			requireStatus(t, http.StatusOK, r)
			require.Equal(t, "specced", r.JSON["stage"], "body: %s", r.Raw)
		})
	})
}

func TestNosniffOnEveryResponse(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		for name, r := range map[string]response{
			"a 200":                request(t, http.MethodGet, sys.URL("/api/ideas"), nil),
			"a 201":                register(t, sys, "nosniff"),
			"a 404":                request(t, http.MethodGet, sys.URL("/api/nope"), nil),
			"a 404 from a service": request(t, http.MethodGet, sys.URL("/api/ideas/00000000-0000-0000-0000-000000000000"), nil),
			"a 422":                register(t, sys, "Bad Handle!"),
			"a 415":                rawPost(t, sys.URL("/api/ideas"), "text/plain", "{}"),
			"the docs page":        request(t, http.MethodGet, sys.URL("/api/docs/"), nil),
		} {
			require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"), "%s (status %d)", name, r.Status)
		}
	})
}

// registerFrom registers handle as a client behind a proxy that recorded
// xff as the client address.
func registerFrom(t *testing.T, sys *allinonetest.System, handle, xff string) response {
	t.Helper()
	return request(t, http.MethodPost, sys.URL("/api/onboarding/register"), map[string]any{"handle": handle}, "X-Forwarded-For: "+xff, anonymous)
}

func TestRegistrationLimitPerClientBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	// The test client connects from 127.0.0.1: here it plays the ingress.
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		for i := range 2 {
			requireStatus(t, http.StatusCreated, registerFrom(t, sys, "alice_"+strconv.Itoa(i), "203.0.113.1"))
		}
		limited := registerFrom(t, sys, "alice_2", "203.0.113.1")
		requireStatus(t, http.StatusTooManyRequests, limited)
		retry, err := strconv.Atoi(limited.Header.Get("Retry-After"))
		require.NoError(t, err, "Retry-After is whole seconds: %q", limited.Header.Get("Retry-After"))
		require.True(t, retry >= 1 && retry <= 30, "2 a minute: the next token within 30 s, got %d", retry)

		requireStatus(t, http.StatusCreated, registerFrom(t, sys, "bob_0", "203.0.113.2"))
		// Whatever the client wrote left of the proxy's hop is ignored: both
		// count against bob's own bucket (not a fresh 6.6.6.6 or alice's).
		requireStatus(t, http.StatusCreated, registerFrom(t, sys, "bob_1", "6.6.6.6, 203.0.113.2"))
		requireStatus(t, http.StatusTooManyRequests, registerFrom(t, sys, "bob_2", "203.0.113.1, 203.0.113.2"))
	}, "-register-rate-per-min=2", "-trusted-proxies=127.0.0.1/32")
}

func TestRegistrationLimitIgnoresForwardedForFromUntrustedClients(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		requireStatus(t, http.StatusCreated, registerFrom(t, sys, "mallory_0", "198.51.100.1"))
		requireStatus(t, http.StatusCreated, registerFrom(t, sys, "mallory_1", "198.51.100.2"))
		r := registerFrom(t, sys, "mallory_2", "198.51.100.3")
		requireStatus(t, http.StatusTooManyRequests, r)
		require.NotEmpty(t, r.Header.Get("Retry-After"), "a 429 says when to retry")
		requireStatus(t, http.StatusTooManyRequests, register(t, sys, "mallory_3")) // nor does leaving it out
	}, "-register-rate-per-min=2")
}

func TestRegistrationLimitOverGRPCCarriesTheDelay(t *testing.T) {
	t.Parallel()
	eachEngine(t, func(t *testing.T, sys *allinonetest.System) {
		ledger := ledgerv1.NewLedgerServiceClient(sys.Dial(t))
		ctx := context.Background()
		_, err := ledger.Register(ctx, &ledgerv1.RegisterRequest{Handle: "grpc_0"})
		require.NoError(t, err)
		_, err = ledger.Register(ctx, &ledgerv1.RegisterRequest{Handle: "grpc_1"})
		st := status.Convert(err)
		require.Equal(t, codes.ResourceExhausted, st.Code(), "second registration in a minute at 1/min: %v", err)
		var delay *errdetails.RetryInfo
		for _, d := range st.Details() {
			if ri, ok := d.(*errdetails.RetryInfo); ok {
				delay = ri
			}
		}
		require.NotNil(t, delay, "a RetryInfo detail among %v", st.Details())
		require.Greater(t, delay.GetRetryDelay().AsDuration().Seconds(), 0.0)
		require.LessOrEqual(t, delay.GetRetryDelay().AsDuration().Seconds(), 60.0)

		// A loopback caller is trusted like the all-in-one gateway (the rule
		// for other peers is unit-tested in rpcmeta), so a forged address
		// gets its own bucket here, while the HTTP client above cannot.
		forged := metadata.AppendToOutgoingContext(ctx, "x-forwarded-for", "192.0.2.77")
		_, err = ledger.Register(forged, &ledgerv1.RegisterRequest{Handle: "grpc_2"})
		require.NoError(t, err)
	}, "-register-rate-per-min=1")
}

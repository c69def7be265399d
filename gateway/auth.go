package gateway

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"
	"google.golang.org/grpc/metadata"

	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/ratelimit"
)

// authenticate verifies a request's credential once, at the edge: the
// Authorization or X-API-Key header becomes the request's principal
// (authz.Verifier, whose cache spares the ledger a look-up per request),
// and the headers go, so no service ever sees a client's secret. Whether
// the principal may do what it asks is the service's policy's decision,
// not this middleware's: a credential that does not verify travels on as
// an invalid principal, refused by every method but the public ones.
//
// Failed authentication is throttled per client address (failures): 2 000
// random Bearer tokens from 8 clients were 2 000 × 401 and as many ledger
// look-ups. Each credential that does not verify takes a token of its
// address's bucket; an address whose bucket is empty is answered 429 with
// Retry-After for any credential, before the look-up, until it refills.
// Requests without a credential and credentials that verify take nothing,
// so a client on another address, or one that authenticates, is never
// slowed by a guesser's failures.
//
// Each failure also takes a token of the presented credential's own bucket
// (by its hash: a wrong administrator key, a revoked token), and that
// credential is answered 429 once its bucket is empty, from any address: a
// script retrying a stale key from a fleet of addresses is slowed as one
// guesser is. A right credential never fails, so it is never blocked by
// its own bucket, however often a wrong one is sent.
func authenticate(v *authz.Verifier, failures *ratelimit.Limiter, throttled prometheus.Counter, log *zap.Logger) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			creds := authz.Credentials{Authorization: r.Header.Get("Authorization"), APIKey: r.Header.Get("X-Api-Key")}
			if creds == (authz.Credentials{}) {
				next.ServeHTTP(w, r)
				return
			}
			addr, cred := clientHost(r.RemoteAddr), credentialKey(creds)
			if blocked, wait := failures.Blocked(addr); blocked {
				throttled.Inc()
				tooMany(w, wait, "too many failed authentications from this address")
				return
			}
			if blocked, wait := failures.Blocked(cred); blocked {
				throttled.Inc()
				tooMany(w, wait, "too many failed authentications with this credential")
				return
			}
			p, err := v.Verify(r.Context(), creds)
			if err != nil {
				log.Warn("credential not verified: the ledger did not answer", zap.Error(err))
				w.Header().Set("Retry-After", "1")
				writeJSONError(w, http.StatusServiceUnavailable, ErrorBody{Detail: "service unavailable: try again shortly"})
				return
			}
			if p.Kind == authz.Invalid {
				failures.Allow(addr)
				failures.Allow(cred)
			}
			r = r.WithContext(authz.WithPrincipal(r.Context(), p))
			r.Header = r.Header.Clone()
			r.Header.Del("Authorization")
			r.Header.Del("X-Api-Key")
			next.ServeHTTP(w, r)
		})
	}
}

// credentialKey is the bucket of a presented credential's failures: a
// hash, so the limiter never holds a secret (a mistyped administrator key
// may be close to the real one). It cannot be mistaken for an address.
func credentialKey(c authz.Credentials) string {
	sum := sha256.Sum256([]byte(c.Authorization + "\n" + c.APIKey))
	return "credential:" + hex.EncodeToString(sum[:12])
}

// tooMany answers 429 with Retry-After in whole seconds, rounded up, and
// a detail saying why and for how long.
func tooMany(w http.ResponseWriter, wait time.Duration, why string) {
	secs := retrySeconds(wait)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	writeJSONError(w, http.StatusTooManyRequests, ErrorBody{Detail: fmt.Sprintf("%s: try again in %d s", why, secs)})
}

// limitReads answers 429 to a client address past its reads a minute
// (GET and HEAD, the dashboard's and the API's alike; nil: no limit),
// before authentication, so a throttled read costs no look-up. Writes have
// limits of their own where they cost (registrations, failed
// authentication); a read's limit is generous, for the dashboard polls a
// page's data every 5 s.
func limitReads(reads *ratelimit.Limiter, throttled prometheus.Counter) middleware {
	return func(next http.Handler) http.Handler {
		if reads == nil {
			return next
		}
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet || r.Method == http.MethodHead {
				if ok, wait := reads.Allow(clientHost(r.RemoteAddr)); !ok {
					throttled.Inc()
					tooMany(w, wait, "too many reads from this address")
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// readsThrottled counts the reads limitReads refused, registered on reg
// (nil: none).
func readsThrottled(reg prometheus.Registerer) prometheus.Counter {
	return throttleCounter(reg, "foundry_gateway_reads_throttled_total",
		"Reads (GET, HEAD) answered 429 because their client address sent more than FOUNDRY_READS_PER_MIN a minute.")
}

// throttleCounter is a counter of a throttle's 429s, registered on reg
// (nil: none).
func throttleCounter(reg prometheus.Registerer, name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

// clientHost is the host of a RemoteAddr (forwardClient already made it
// the client's, past trusted proxies): the key a client's failures count
// under.
func clientHost(remote string) string {
	if h, _, err := net.SplitHostPort(remote); err == nil {
		return h
	}
	return remote
}

// checkedHeaders are the request headers whose value a service acts on or
// a credential is read from. grpc-gateway drops a header value that is not
// printable ASCII (gRPC metadata must be), so an Idempotency-Key such as
// "café-retry" used to reach the service as no key at all, and three
// retries of a withdrawal withdrew three times; such values are refused
// here, before the mux sees them.
var checkedHeaders = []string{"Idempotency-Key", grpcIdempotencyKey, "Authorization", "X-Api-Key"}

// grpcIdempotencyKey is grpc-gateway's own spelling of a metadata header
// (Grpc-Metadata-<key>), which clients of other grpc-gateway services
// send. Foundry's header matcher forwarded it as nothing, so two
// withdrawals with the same key both happened; checkHeaders takes it as
// the Idempotency-Key it names.
const grpcIdempotencyKey = "Grpc-Metadata-Idempotency-Key"

// maxHeaderValue bounds those values (a Bearer token is 71 to 75 bytes).
const maxHeaderValue = 255

// checkHeaders answers 422 naming the header for an Idempotency-Key,
// Authorization or X-API-Key that is sent more than once, empty, longer
// than 255 bytes or not printable ASCII; a Grpc-Metadata-Idempotency-Key
// is the Idempotency-Key, unless both are sent (a 422: which key counts
// would be a guess).
func checkHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, name := range checkedHeaders {
			values, sent := r.Header[name]
			if !sent {
				continue
			}
			msg := ""
			switch {
			case len(values) > 1:
				msg = "must be sent once"
			case !printableASCII(values[0], maxHeaderValue):
				msg = fmt.Sprintf("must be 1 to %d printable ASCII characters", maxHeaderValue)
			}
			if msg != "" {
				writeJSONError(w, http.StatusUnprocessableEntity, ErrorBody{Detail: name + ": " + msg,
					Errors: []FieldError{{Field: name, Message: msg}}})
				return
			}
		}
		if key, sent := r.Header[grpcIdempotencyKey]; sent {
			if _, both := r.Header["Idempotency-Key"]; both {
				msg := "send the key once, as Idempotency-Key"
				writeJSONError(w, http.StatusUnprocessableEntity, ErrorBody{Detail: grpcIdempotencyKey + ": " + msg,
					Errors: []FieldError{{Field: grpcIdempotencyKey, Message: msg}}})
				return
			}
			r = r.Clone(r.Context())
			r.Header["Idempotency-Key"] = key
			delete(r.Header, grpcIdempotencyKey)
		}
		next.ServeHTTP(w, r)
	})
}

// printableASCII reports whether s is 1 to limit bytes of 0x20-0x7E.
func printableASCII(s string, limit int) bool {
	if s == "" || len(s) > limit {
		return false
	}
	for i := range len(s) {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// principalMetadata sends the request's principal to the service
// (runtime.WithMetadata), signed by fwd. A service believes it because the
// gateway holds the service credential and the signing key; the gateway
// never forwards a client's own foundry-principal header
// (incomingHeader). The metadata of each principal is made once a minute
// (authz.Forwarder): grpc-gateway only reads it.
func principalMetadata(fwd *authz.Forwarder) func(context.Context, *http.Request) metadata.MD {
	return func(ctx context.Context, _ *http.Request) metadata.MD {
		return fwd.Metadata(authz.FromContext(ctx))
	}
}

// authThrottled counts the requests authenticate refused with 429 for
// their address's failed authentications, registered on reg (nil: none).
func authThrottled(reg prometheus.Registerer) prometheus.Counter {
	return throttleCounter(reg, "foundry_gateway_auth_throttled_total",
		"Requests answered 429 because their client address sent too many credentials that did not verify.")
}

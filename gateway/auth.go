package gateway

import (
	"context"
	"net/http"

	"go.uber.org/zap"
	"google.golang.org/grpc/metadata"

	"github.com/foundryhq/foundry/services/platform/authz"
)

// authenticate verifies a request's credential once, at the edge: the
// Authorization or X-API-Key header becomes the request's principal
// (authz.Verifier, whose cache spares the ledger a look-up per request),
// and the headers go, so no service ever sees a client's secret. Whether
// the principal may do what it asks is the service's policy's decision,
// not this middleware's: a credential that does not verify travels on as
// an invalid principal, refused by every method but the public ones.
func authenticate(v *authz.Verifier, log *zap.Logger) middleware {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			creds := authz.Credentials{Authorization: r.Header.Get("Authorization"), APIKey: r.Header.Get("X-Api-Key")}
			if creds == (authz.Credentials{}) {
				next.ServeHTTP(w, r)
				return
			}
			p, err := v.Verify(r.Context(), creds)
			if err != nil {
				log.Warn("credential not verified: the ledger did not answer", zap.Error(err))
				writeJSONError(w, http.StatusServiceUnavailable, ErrorBody{Detail: "service unavailable: try again shortly"})
				return
			}
			r = r.WithContext(authz.WithPrincipal(r.Context(), p))
			r.Header = r.Header.Clone()
			r.Header.Del("Authorization")
			r.Header.Del("X-Api-Key")
			next.ServeHTTP(w, r)
		})
	}
}

// anonymousMD is the metadata of a request without a credential, encoded
// once: most reads are anonymous.
var anonymousMD = metadata.Pairs(authz.MetadataKey, authz.Principal{Kind: authz.Anonymous}.Encode())

// principalMetadata sends the request's principal to the service
// (runtime.WithMetadata). A service believes it because the gateway holds
// the service credential; the gateway never forwards a client's own
// foundry-principal header (incomingHeader).
func principalMetadata(ctx context.Context, _ *http.Request) metadata.MD {
	p := authz.FromContext(ctx)
	if p.Kind == authz.Anonymous {
		return anonymousMD
	}
	return metadata.Pairs(authz.MetadataKey, p.Encode())
}

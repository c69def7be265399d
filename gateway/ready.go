package gateway

import (
	"context"
	"net/http"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
)

// readyTimeout bounds the ops service's readiness answer; it probes each
// part within 2 s itself, so only a hung ops service reaches this.
const readyTimeout = 5 * time.Second

// readyChecker is the part of the ops client readiness uses.
type readyChecker interface {
	Ready(ctx context.Context, in *opsv1.ReadyRequest, opts ...grpc.CallOption) (*opsv1.ReadyResponse, error)
}

// readyHandler serves GET /api/ready (declared in api.yaml, which documents
// it) in front of the generated route for one reason: when the ops service
// itself cannot be reached, the generic 503 text would not say which part
// failed, and readiness must name it. Every other answer is the ops
// service's, unchanged: 200 with the checks, or 503 naming the failing parts.
func readyHandler(ops readyChecker) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		resp, err := ops.Ready(ctx, &opsv1.ReadyRequest{})
		if err == nil {
			writeMessage(w, http.StatusOK, resp)
			return
		}
		if s := status.Convert(err); isServiceMessage(s) {
			writeError(w, err) // the ops service's own verdict
			return
		}
		writeJSONError(w, http.StatusServiceUnavailable, ErrorBody{Detail: "not ready: ops: unreachable"})
	})
}

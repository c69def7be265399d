package gateway

import (
	"context"
	"io"
	"net/http"

	"google.golang.org/protobuf/proto"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/platform/authz"
)

// githubWebhook forwards a GitHub delivery to the ledger unparsed: the
// signature covers the exact bytes GitHub sent, so the body must not pass
// through JSON decoding first. The body cap has already been applied.
func githubWebhook(ledger ledgerv1.LedgerServiceClient) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := rawBody(w, r)
		if !ok {
			return
		}
		resp, err := ledger.RecordGithubDelivery(r.Context(), &ledgerv1.RecordGithubDeliveryRequest{
			Event:         r.Header.Get("X-GitHub-Event"),
			DeliveryId:    r.Header.Get("X-GitHub-Delivery"),
			Signature_256: r.Header.Get("X-Hub-Signature-256"),
			Body:          body,
		})
		if err != nil {
			writeError(w, err)
			return
		}
		code, out := http.StatusOK, proto.Message(resp)
		switch resp.GetStatus() {
		case "recorded":
			code, out = http.StatusCreated, resp.GetContribution()
		case "duplicate":
			out = resp.GetContribution()
		case "ignored":
			code = http.StatusAccepted
		}
		writeMessage(w, code, out)
	})
}

// impactWebhook forwards a usage delivery to the ledger unparsed, as
// githubWebhook does: the signature covers the exact bytes sent. The
// answer is the record, 201 when new and 200 when its reference was
// recorded before.
func impactWebhook(ledger ledgerv1.LedgerServiceClient) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := rawBody(w, r)
		if !ok {
			return
		}
		resp, err := ledger.RecordImpactDelivery(r.Context(), &ledgerv1.RecordImpactDeliveryRequest{
			Signature_256: r.Header.Get("X-Hub-Signature-256"),
			Body:          body,
		})
		if err != nil {
			writeError(w, err)
			return
		}
		code := http.StatusCreated
		if resp.GetDuplicate() {
			code = http.StatusOK
		}
		writeMessage(w, code, resp.GetRecord())
	})
}

// rawBody reads a webhook's body whole (the body cap has already been
// applied), answering 400 when it cannot be read.
func rawBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, ErrorBody{Detail: "could not read the request body"})
		return nil, false
	}
	return body, true
}

// writeMessage writes a proto message with Foundry's JSON conventions.
func writeMessage(w http.ResponseWriter, code int, m proto.Message) {
	b, err := marshalJSON(m)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, ErrorBody{Detail: "internal error"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// auditText serves GET /api/audit/checkpoint and GET /api/audit/verifier-key
// as text/plain: a signed note and a note verifier key are text formats
// that tools (and the CLI's audit verify) read byte for byte, not JSON
// fields to unwrap.
func auditText(ledger ledgerv1.LedgerServiceClient, fwd *authz.Forwarder, read func(context.Context, ledgerv1.LedgerServiceClient) (string, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The caller's principal, as the API mux sends it
		// (principalMetadata): a call without one is the gateway's own,
		// which every policy allows.
		ctx := fwd.OutgoingContext(r.Context(), authz.FromContext(r.Context()))
		text, err := read(ctx, ledger)
		if err != nil {
			writeError(w, err)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = io.WriteString(w, text)
	})
}

func readCheckpoint(ctx context.Context, c ledgerv1.LedgerServiceClient) (string, error) {
	resp, err := c.GetAuditCheckpoint(ctx, &ledgerv1.GetAuditCheckpointRequest{})
	return resp.GetNote(), err
}

func readVerifierKey(ctx context.Context, c ledgerv1.LedgerServiceClient) (string, error) {
	resp, err := c.GetAuditVerifierKey(ctx, &ledgerv1.GetAuditVerifierKeyRequest{})
	if err != nil {
		return "", err
	}
	return resp.GetKey() + "\n", nil
}

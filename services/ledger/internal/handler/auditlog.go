package handler

import (
	"context"
	"encoding/base64"
	"time"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
)

// b64 is a hash as checkpoints and proofs write it: standard base64.
func b64(h audit.Hash) string { return base64.StdEncoding.EncodeToString(h[:]) }

func b64s(hs []audit.Hash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = b64(h)
	}
	return out
}

// logProto maps a verification of the log with the verdict to report
// (the chain's, or the coherence check's, which adds the journal's
// reconciliation) and the sequencer's backlog.
func logProto(v usecase.Verification, verdict audit.Result, b usecase.Backlog) *ledgerv1.VerifyAuditResponse {
	out := verifyProto(verdict)
	out.VerifiedFromSeq, out.TreeSize, out.Full = int32(v.From), int32(v.TreeSize), v.Full
	if v.TreeSize > 0 {
		out.RootHash = b64(v.Root)
	}
	out.UnsequencedEntries = int32(b.Entries)
	if !b.Oldest.IsZero() {
		out.UnsequencedAgeSeconds = max(time.Since(b.Oldest).Seconds(), 0)
	}
	return out
}

// GetAuditCheckpoint implements LedgerService.GetAuditCheckpoint.
func (h *Handler) GetAuditCheckpoint(ctx context.Context, _ *ledgerv1.GetAuditCheckpointRequest) (*ledgerv1.GetAuditCheckpointResponse, error) {
	note, err := h.app.Checkpoint(ctx)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.GetAuditCheckpointResponse{Note: note}, nil
}

// GetAuditVerifierKey implements LedgerService.GetAuditVerifierKey.
func (h *Handler) GetAuditVerifierKey(context.Context, *ledgerv1.GetAuditVerifierKeyRequest) (*ledgerv1.GetAuditVerifierKeyResponse, error) {
	return &ledgerv1.GetAuditVerifierKeyResponse{Key: h.app.VerifierKey()}, nil
}

// GetAuditProof implements LedgerService.GetAuditProof.
func (h *Handler) GetAuditProof(ctx context.Context, req *ledgerv1.GetAuditProofRequest) (*ledgerv1.GetAuditProofResponse, error) {
	p, err := h.app.InclusionProof(ctx, int64(req.GetSeq()), int64(req.GetTreeSize()))
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.GetAuditProofResponse{Seq: int32(p.Seq), TreeSize: int32(p.TreeSize), LeafHash: b64(p.LeafHash), Proof: b64s(p.Proof)}
	if p.Entry != nil {
		out.Entry = auditProto(*p.Entry)
	}
	return out, nil
}

// GetAuditConsistency implements LedgerService.GetAuditConsistency.
func (h *Handler) GetAuditConsistency(ctx context.Context, req *ledgerv1.GetAuditConsistencyRequest) (*ledgerv1.GetAuditConsistencyResponse, error) {
	c, err := h.app.ConsistencyProof(ctx, int64(req.GetFrom()), int64(req.GetTo()))
	if err != nil {
		return nil, err
	}
	return &ledgerv1.GetAuditConsistencyResponse{From: int32(c.From), To: int32(c.To), OldRoot: b64(c.OldRoot), NewRoot: b64(c.NewRoot),
		Proof: b64s(c.Proof)}, nil
}

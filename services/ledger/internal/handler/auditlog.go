package handler

import (
	"context"
	"encoding/base64"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/wire"
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
	out.VerifiedFromSeq, out.TreeSize, out.Full = v.From, v.TreeSize, v.Full
	if v.TreeSize > 0 {
		out.RootHash = b64(v.Root)
	}
	out.UnsequencedEntries = b.Entries
	if !b.Oldest.IsZero() {
		out.UnsequencedAgeSeconds = max(time.Since(b.Oldest).Seconds(), 0)
	}
	out.Findings, out.OpenFindings = make([]*ledgerv1.IntegrityFinding, len(v.Findings.Open)), int32(v.Findings.Total)
	for i, f := range v.Findings.Open {
		out.Findings[i] = findingProto(f)
	}
	out.Scrub = scrubProto(v.Scrub, time.Now())
	return out
}

// verdictOf is a verification's verdict as the answer states it: the
// walk's, failed at the open findings when the walk checked out.
func verdictOf(v usecase.Verification) audit.Result {
	res := v.Result
	if !v.Valid() {
		res.OK = false
		res.FirstDivergent, res.Reason = v.Divergent()
	}
	return res
}

func findingProto(f store.Finding) *ledgerv1.IntegrityFinding {
	out := &ledgerv1.IntegrityFinding{Id: f.ID, Kind: f.Kind, Mode: mode(f.Mode), Detail: f.Detail, FoundBy: f.FoundBy,
		FoundAt: wire.Time(f.FoundAt)}
	if f.Seq > 0 {
		out.Seq = wrapperspb.Int64(f.Seq)
	}
	if f.EntryID != "" {
		out.EntryId = wrapperspb.String(f.EntryID)
	}
	if f.Account != "" {
		out.Account = wrapperspb.String(f.Account)
	}
	return out
}

// scrubProto maps the scrubber's progress (nil when it is off).
func scrubProto(s usecase.ScrubReport, now time.Time) *ledgerv1.AuditScrub {
	if s.Cycle <= 0 {
		return nil
	}
	out := &ledgerv1.AuditScrub{CycleSeconds: s.Cycle.Seconds(), CurrentCycle: s.Current, StartedAt: wire.Time(s.StartedAt),
		NextSeq: s.NextSeq, TargetTreeSize: s.TargetSize}
	if l := s.Last; l != nil {
		out.LastCycle = &ledgerv1.AuditScrubCycle{Cycle: l.Cycle, StartedAt: wire.Time(l.StartedAt), EndedAt: wire.Time(l.EndedAt),
			ThroughSeq: l.ThroughSeq, EntriesChecked: l.Entries, JournalEntriesChecked: l.Journal,
			AccountsChecked: l.Accounts, Findings: int32(l.Findings)}
	}
	if !s.UpdatedAt.IsZero() {
		out.UpdatedAt = wrapperspb.String(wire.Time(s.UpdatedAt))
	}
	if late := s.Late(now); late != "" {
		out.Late = wrapperspb.String(late)
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

// ListAuditKeyChanges implements LedgerService.ListAuditKeyChanges.
func (h *Handler) ListAuditKeyChanges(ctx context.Context, _ *ledgerv1.ListAuditKeyChangesRequest) (*ledgerv1.ListAuditKeyChangesResponse, error) {
	changes, err := h.app.KeyChanges(ctx)
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.ListAuditKeyChangesResponse{KeyChanges: make([]*ledgerv1.AuditKeyChange, len(changes))}
	for i, k := range changes {
		out.KeyChanges[i] = &ledgerv1.AuditKeyChange{Seq: k.Seq, FromKey: k.From, ToKey: k.To, Statement: k.Statement,
			Countersigned: k.Countersigned, At: wire.Time(k.At)}
	}
	return out, nil
}

// GetAuditProof implements LedgerService.GetAuditProof.
func (h *Handler) GetAuditProof(ctx context.Context, req *ledgerv1.GetAuditProofRequest) (*ledgerv1.GetAuditProofResponse, error) {
	p, err := h.app.InclusionProof(ctx, req.GetSeq(), req.GetTreeSize())
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.GetAuditProofResponse{Seq: p.Seq, TreeSize: p.TreeSize, LeafHash: b64(p.LeafHash), Proof: b64s(p.Proof)}
	if p.Entry != nil {
		out.Entry = auditProto(*p.Entry)
	}
	return out, nil
}

// GetAuditConsistency implements LedgerService.GetAuditConsistency.
func (h *Handler) GetAuditConsistency(ctx context.Context, req *ledgerv1.GetAuditConsistencyRequest) (*ledgerv1.GetAuditConsistencyResponse, error) {
	c, err := h.app.ConsistencyProof(ctx, req.GetFrom(), req.GetTo())
	if err != nil {
		return nil, err
	}
	return &ledgerv1.GetAuditConsistencyResponse{From: c.From, To: c.To, OldRoot: b64(c.OldRoot), NewRoot: b64(c.NewRoot),
		Proof: b64s(c.Proof)}, nil
}

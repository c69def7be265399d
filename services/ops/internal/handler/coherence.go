package handler

import (
	"context"

	"google.golang.org/protobuf/types/known/wrapperspb"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// GetCoherence implements OpsService.GetCoherence: the economy monitor's
// latest check, or one run now when the monitor has none that is recent;
// 503 when the monitor does not run here or cannot answer.
func (h *Handler) GetCoherence(ctx context.Context, _ *opsv1.GetCoherenceRequest) (*opsv1.GetCoherenceResponse, error) {
	res, err := h.uc.Coherence(ctx)
	if err != nil {
		return nil, err
	}
	rec := res.Check
	reasons := rec.Decision.Reasons
	if reasons == nil {
		reasons = []string{}
	}
	out := &opsv1.GetCoherenceResponse{
		CheckedAt: wire.Time(rec.CheckedAt), Source: res.Source,
		// Healthy only when the decision and the mode in force both say
		// normal: never beside a mode the monitor did not lift.
		Healthy:     rec.Decision.Mode == monitor.Normal && (rec.Check.Mode == monitor.Normal || rec.Applied),
		Score:       int32(rec.Decision.Score),
		DecidedMode: wire.Enum[ledgerv1.EconomyMode](ledgerv1.EconomyMode_value, rec.Decision.Mode),
		Mode:        wire.Enum[ledgerv1.EconomyMode](ledgerv1.EconomyMode_value, rec.Check.Mode), Reasons: reasons,
		ReserveRatio: rec.Check.ReserveRatio, AuditChainValid: rec.Check.ChainValid,
		MismatchedAccounts: int32(rec.Mismatched), OracleBreakerTripped: rec.Check.BreakerTripped,
		IntervalSeconds: int32(res.Interval.Seconds()),
	}
	// A failed check (no mode seen) verified nothing: the chain is not
	// reported valid, but there is no divergent seq to name.
	if !rec.Check.ChainValid && rec.Check.Mode != "" {
		out.FirstDivergentSeq = wrapperspb.Int32(int32(rec.Check.FirstDivergent))
	}
	return out, nil
}

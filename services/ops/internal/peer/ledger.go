package peer

import (
	"context"

	"google.golang.org/grpc"

	ledgerinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ops/internal/monitor"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// Ledger is the ledger as the economy monitor sees it, through its
// internal gRPC API.
type Ledger struct {
	client ledgerinternalv1.LedgerInternalServiceClient
}

var _ usecase.Ledger = Ledger{}

// NewLedger returns the adapter over a connection to the ledger.
func NewLedger(conn grpc.ClientConnInterface) Ledger {
	return Ledger{client: ledgerinternalv1.NewLedgerInternalServiceClient(conn)}
}

// Check implements usecase.Ledger.
func (l Ledger) Check(ctx context.Context) (monitor.Check, error) {
	resp, err := l.client.CheckCoherence(ctx, &ledgerinternalv1.CheckCoherenceRequest{})
	if err != nil {
		return monitor.Check{}, err
	}
	chain := resp.GetChain()
	findings := make([]monitor.Finding, len(chain.GetFindings()))
	for i, f := range chain.GetFindings() {
		findings[i] = monitor.Finding{Mode: wire.Word(ledgerv1.EconomyMode_name, f.GetMode()), Reason: f.GetDetail()}
	}
	return monitor.Check{
		Findings: findings, ScrubLate: chain.GetScrub().GetLate().GetValue(),
		OutstandingCC: resp.GetSupply().GetTotalCcOutstanding(),
		ReserveRatio:  resp.GetSupply().GetReserveRatio(), ChainValid: chain.GetValid(),
		ChainReason: chain.GetReason().GetValue(), FirstDivergent: int(chain.GetFirstDivergentSeq().GetValue()),
		Mismatched: resp.GetMismatchedAccounts(), BreakerTripped: resp.GetOracleBreakerTripped(),
		Unsequenced: int(chain.GetUnsequencedEntries()), UnsequencedAge: chain.GetUnsequencedAgeSeconds(),
		Mode: wire.Word(ledgerv1.EconomyMode_name, resp.GetSupply().GetMode()),
	}, nil
}

// SetMode implements usecase.Ledger.
func (l Ledger) SetMode(ctx context.Context, mode, reason string) (string, error) {
	resp, err := l.client.SetEconomyMode(ctx, &ledgerinternalv1.SetEconomyModeRequest{
		Mode: wire.Enum[ledgerv1.EconomyMode](ledgerv1.EconomyMode_value, mode), Reason: reason})
	if err != nil {
		return "", err
	}
	return wire.Word(ledgerv1.EconomyMode_name, resp.GetMode()), nil
}

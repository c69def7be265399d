package ops

import (
	"context"

	"google.golang.org/grpc"

	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ops/internal/monitor"
)

// ledgerMonitor adapts the ledger's gRPC API to what the monitor needs.
type ledgerMonitor struct {
	client ledgerv1.LedgerInternalServiceClient
}

func newLedgerMonitor(conn grpc.ClientConnInterface) ledgerMonitor {
	return ledgerMonitor{client: ledgerv1.NewLedgerInternalServiceClient(conn)}
}

// Check implements monitor.Ledger.
func (l ledgerMonitor) Check(ctx context.Context) (monitor.Check, error) {
	resp, err := l.client.CheckCoherence(ctx, &ledgerv1.CheckCoherenceRequest{})
	if err != nil {
		return monitor.Check{}, err
	}
	chain := resp.GetChain()
	return monitor.Check{
		OutstandingCC: resp.GetSupply().GetTotalCcOutstanding(),
		ReserveRatio:  resp.GetSupply().GetReserveRatio(), ChainValid: chain.GetValid(),
		ChainReason: chain.GetReason().GetValue(), FirstDivergent: int(chain.GetFirstDivergentSeq().GetValue()),
		Mismatched: resp.GetMismatchedAccounts(), BreakerTripped: resp.GetOracleBreakerTripped(),
		Unsequenced: int(chain.GetUnsequencedEntries()), UnsequencedAge: chain.GetUnsequencedAgeSeconds(),
		Mode: resp.GetSupply().GetMode(),
	}, nil
}

// SetMode implements monitor.Ledger.
func (l ledgerMonitor) SetMode(ctx context.Context, mode, reason string) (string, error) {
	resp, err := l.client.SetEconomyMode(ctx, &ledgerv1.SetEconomyModeRequest{Mode: mode, Reason: reason})
	if err != nil {
		return "", err
	}
	return resp.GetMode(), nil
}

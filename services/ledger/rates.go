package ledger

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/periodic"
)

// readRates reads the rate source through the circuit breaker at startup
// and then every interval, until ctx ends. A failed reading is logged and
// the rate in force stays; the breaker, not this loop, decides what a
// reading may change.
func readRates(ctx context.Context, log *zap.Logger, uc *usecase.App, every time.Duration) {
	read := func() {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		rd, recorded, err := uc.ReadRate(rctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("reading the exchange rate failed; the rate in force stays", zap.Error(err))
		case recorded && rd.Verdict != "accepted":
			log.Warn("exchange-rate reading held by the circuit breaker", zap.String("verdict", string(rd.Verdict)),
				zap.Stringer("price", rd.Price), zap.Stringer("rate_in_force", rd.State.LastGood))
		}
	}
	periodic.Run(ctx, every, read)
}

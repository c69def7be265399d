package credit

import (
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// The unstake cooldown tiers: below InstantBelow an unstake is available at
// once; up to LongAbove it cools for ShortCooldown; above, LongCooldown. A
// stake can always be unstaked; the cooldown only delays when the CC is
// available again, so a large exit cannot drain an idea's backing at once.
const (
	InstantBelow  money.Micros = 100 * money.Scale
	LongAbove     money.Micros = 1000 * money.Scale
	ShortCooldown              = 24 * time.Hour
	LongCooldown               = 72 * time.Hour
)

// Cooldown is how long amount unstaked cools before it is available:
// instant below 100 CC, 24 h from 100 to 1000 CC (both included), 72 h
// above 1000 CC.
func Cooldown(amount money.Micros) time.Duration {
	switch {
	case amount < InstantBelow:
		return 0
	case amount <= LongAbove:
		return ShortCooldown
	default:
		return LongCooldown
	}
}

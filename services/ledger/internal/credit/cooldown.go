package credit

import (
	"math"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// The unstake cooldown tiers: below InstantBelow an unstake is available at
// once; up to LongAbove it cools for ShortCooldown; above, LongCooldown. A
// stake can always be unstaked; the cooldown only delays when the CC is
// available again, so a large exit cannot drain an idea's backing at once.
//
// The tier is decided by what the contributor has unstaked from the idea
// over the rolling UnstakeWindow, this unstake included (UnstakeCooldown),
// not by the one request: 21 unstakes of 99.999999 CC in a row are one
// exit of 2 100 CC and cool like one.
const (
	InstantBelow  money.Micros = 100 * money.Scale
	LongAbove     money.Micros = 1000 * money.Scale
	ShortCooldown              = 24 * time.Hour
	LongCooldown               = 72 * time.Hour
	// UnstakeWindow is how far back a contributor's unstakes from one idea
	// count towards the tier of the next: an unstake made exactly this
	// long ago no longer counts.
	UnstakeWindow = 24 * time.Hour
)

// MinMovement is the least CC a client may ask to move (0.01 CC): a stake,
// an unstake or a withdrawal of less, or a deposit that would mint less,
// is refused, so dust cannot flood the journal and the audit chain.
const MinMovement money.Micros = money.Scale / 100

// Cooldown is how long a total unstaked cools before it is available:
// instant below 100 CC, 24 h from 100 to 1000 CC (both included), 72 h
// above 1000 CC.
func Cooldown(total money.Micros) time.Duration {
	switch {
	case total < InstantBelow:
		return 0
	case total <= LongAbove:
		return ShortCooldown
	default:
		return LongCooldown
	}
}

// UnstakeCooldown is the cooldown of an unstake of amount from an idea
// when the contributor has already unstaked earlier from it within
// UnstakeWindow: the tier of the two together (the sum saturates rather
// than wrapping, so an absurd total is still the longest tier).
func UnstakeCooldown(earlier, amount money.Micros) time.Duration {
	return Cooldown(saturatingAdd(max(earlier, 0), max(amount, 0)))
}

// saturatingAdd adds two non-negative amounts, stopping at the largest
// int64.
func saturatingAdd(a, b money.Micros) money.Micros {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

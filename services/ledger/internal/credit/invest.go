package credit

import (
	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// DefaultPledgeRate is the CC a pledged hour is worth (500 CC per hour).
const DefaultPledgeRate money.Micros = 500 * money.Scale

// PledgeValue is the cc_equivalent of a time pledge: hours × rate, with
// hours given in micro-hours so fractional pledges stay exact.
func PledgeValue(microHours, ratePerHour money.Micros) (money.Micros, error) {
	v, ok := mulDivFloor(uint64(microHours), uint64(ratePerHour), money.Scale)
	if !ok || microHours < 0 || ratePerHour < 0 {
		return 0, money.ErrOutOfRange
	}
	return money.Micros(v), nil
}

// Projection is the ROI range a stake on an idea may return, by the idea's
// stage: an idea further along is less risky (a higher low multiplier) and
// has less upside left to unlock.
type Projection struct {
	// LowMultiplier and HighMultiplier bound what one staked CC may be
	// worth once the idea is complete.
	LowMultiplier  float64
	HighMultiplier float64
	// StageUnlockPct is the percentage (0..100) of the idea's value
	// already unlocked by the stages it has passed: a _pct field is a
	// percentage, as gain_pct and spread_pct are (it was a share, 0..1).
	StageUnlockPct float64
}

// stageProjections are the projections per stage. They are a documented
// heuristic, not a promise: the low multiplier rises as risk falls, the high
// one falls as less value is left to unlock, and coherence scales the
// upside (see Project).
var stageProjections = map[string]Projection{
	"none":         {LowMultiplier: 0.5, HighMultiplier: 3.0, StageUnlockPct: 0},
	"specced":      {LowMultiplier: 0.6, HighMultiplier: 2.6, StageUnlockPct: 20},
	"implementing": {LowMultiplier: 0.7, HighMultiplier: 2.2, StageUnlockPct: 40},
	"testing":      {LowMultiplier: 0.8, HighMultiplier: 1.8, StageUnlockPct: 60},
	"reviewing":    {LowMultiplier: 0.9, HighMultiplier: 1.5, StageUnlockPct: 80},
	"complete":     {LowMultiplier: 1.0, HighMultiplier: 1.2, StageUnlockPct: 100},
}

// Project returns the projection for an idea at stage with the given
// coherence (0..1; 0.5 is neutral): the upside above 1 is scaled by
// 2 × coherence, so a well-evidenced idea projects more and a poorly
// evidenced one less. An unknown stage projects as "none".
func Project(stage string, coherence float64) Projection {
	p, ok := stageProjections[stage]
	if !ok {
		p = stageProjections["none"]
	}
	coherence = min(max(coherence, 0), 1)
	if up := p.HighMultiplier - 1; up > 0 {
		p.HighMultiplier = round4(1 + up*2*coherence)
	}
	p.HighMultiplier = max(p.HighMultiplier, p.LowMultiplier)
	return p
}

func round4(x float64) float64 {
	const s = 10_000
	if x < 0 {
		return -float64(int64(-x*s+0.5)) / s
	}
	return float64(int64(x*s+0.5)) / s
}

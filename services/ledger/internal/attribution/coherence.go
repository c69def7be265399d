package attribution

import (
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// Coherence is a contribution's coherence score in thousandths (0.8 is 800),
// so weights are computed with integers only.
type Coherence int64

// The coherence rule: 0.5 to start, +0.2 with tests, +0.2 with docs, +0.1
// for low complexity, capped at 1.0.
const (
	CoherenceBase      Coherence = 500
	CoherenceTests     Coherence = 200
	CoherenceDocs      Coherence = 200
	CoherenceLowComplx Coherence = 100
	CoherenceMax       Coherence = 1000
	// coherenceScale is Coherence's unit: thousandths.
	coherenceScale = 1000
)

// Metadata keys the coherence rule reads.
const (
	KeyHasTests   = "has_tests"
	KeyHasDocs    = "has_docs"
	KeyComplexity = "complexity"
	// ComplexityLow is the complexity value that earns the bonus.
	ComplexityLow = "low"
)

// Float64 is the score as the API shows it (0.5 .. 1.0).
func (c Coherence) Float64() float64 { return float64(c) / coherenceScale }

// Score computes the coherence score of a contribution from its metadata.
// has_tests and has_docs must be booleans and complexity a string when
// present: a metadata value of the wrong type is a client mistake worth
// reporting (a "yes" string would otherwise silently earn nothing).
func Score(metadata map[string]any) (Coherence, error) {
	c := CoherenceBase
	var errs []fault.FieldError
	flag := func(key string, bonus Coherence) {
		v, ok := metadata[key]
		if !ok || v == nil {
			return
		}
		b, isBool := v.(bool)
		if !isBool {
			errs = append(errs, fault.Field("metadata."+key, "must be a boolean"))
			return
		}
		if b {
			c += bonus
		}
	}
	flag(KeyHasTests, CoherenceTests)
	flag(KeyHasDocs, CoherenceDocs)
	if v, ok := metadata[KeyComplexity]; ok && v != nil {
		s, isString := v.(string)
		switch {
		case !isString:
			errs = append(errs, fault.Field("metadata."+KeyComplexity, "must be a string"))
		case s == ComplexityLow:
			c += CoherenceLowComplx
		}
	}
	if len(errs) > 0 {
		return 0, fault.Validation(errs...)
	}
	return min(c, CoherenceMax), nil
}

// Cost estimate of a code change: 0.10 + 0.15 per file + 0.002 per line,
// clamped to [0.05, 10.00], all in micro-units.
const (
	estimateBase    money.Micros = 100_000
	estimatePerFile money.Micros = 150_000
	estimatePerLine money.Micros = 2_000
	EstimateMin     money.Micros = 50_000
	EstimateMax     money.Micros = 10_000_000
)

// EstimateCost prices a change of files files and lines lines. Negative
// counts count as zero; huge ones saturate at the maximum without overflow.
func EstimateCost(files, lines int64) money.Micros {
	files, lines = max(files, 0), max(lines, 0)
	// Past these counts the clamp applies anyway; stopping there keeps the
	// multiplication far from overflow.
	files, lines = min(files, int64(EstimateMax/estimatePerFile)+1), min(lines, int64(EstimateMax/estimatePerLine)+1)
	cost := estimateBase + money.Micros(files)*estimatePerFile + money.Micros(lines)*estimatePerLine
	return min(max(cost, EstimateMin), EstimateMax)
}

// Complexity classifies a change by the number of files it touches, for
// deliveries that carry no complexity of their own: up to 3 files is "low",
// up to 10 "medium", more "high".
func Complexity(files int) string {
	switch {
	case files <= 3:
		return ComplexityLow
	case files <= 10:
		return "medium"
	}
	return "high"
}

// ParseCoherence reads a reviewer's coherence score (a JSON number from 0
// to 1, in thousandths at most) for field; a refusal is a field error.
func ParseCoherence(field string, x float64) (Coherence, error) {
	m, err := money.FromFloat(x)
	switch {
	case err != nil:
		return 0, fault.Validation(fault.Field(field, "%s", err.Error()))
	case m < 0 || m > money.Scale:
		return 0, fault.Validation(fault.Field(field, "must be from 0 to 1"))
	case m%(money.Scale/coherenceScale) != 0:
		return 0, fault.Validation(fault.Field(field, "must have at most 3 decimal places"))
	}
	return Coherence(m / (money.Scale / coherenceScale)), nil
}

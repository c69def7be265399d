// Package usage holds the rules of automation usage reporting: which
// provider family a provider name folds into, what a valid set of metrics
// is, which metric a family's usage_remaining comes from, the alerts, and
// how the overview's data source is named. It knows nothing of HTTP, SQL or
// protobuf.
package usage

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/foundryhq/foundry/services/platform/fault"
)

// The provider families: every provider name folds into one of them, and
// the overview has exactly one row per family.
const (
	OpenAI = "openai"
	Claude = "claude"
)

// Families lists the families in report order.
var Families = []string{OpenAI, Claude}

// familyPrefixes maps name prefixes to families: "openai-codex",
// "codex-cli" and the model "gpt-5-codex" are OpenAI, "claude-code" and "anthropic" are Claude.
var familyPrefixes = []struct{ prefix, family string }{
	{"openai", OpenAI}, {"codex", OpenAI}, {"chatgpt", OpenAI}, {"gpt", OpenAI},
	{"claude", Claude}, {"anthropic", Claude},
}

// Limits of a snapshot.
const (
	MaxProviderLen   = 64
	MaxMetrics       = 100
	MaxMetricNameLen = 128
	MaxUnitLen       = 32
)

// Alert thresholds on the remaining fraction of the selected quota.
const (
	WarningBelow  = 0.25
	CriticalBelow = 0.10
)

// Metric is one measured quantity of a provider. The JSON names are the
// format providers, agents and the store use.
type Metric struct {
	Name  string   `json:"name"`
	Value float64  `json:"value"`
	Limit *float64 `json:"limit,omitempty"`
	Unit  string   `json:"unit,omitempty"`
	// IsSummary marks an account-level summary metric (for example a
	// monthly token quota), preferred for usage_remaining.
	IsSummary bool `json:"is_summary,omitempty"`
}

// Snapshot is a provider's metrics at one moment.
type Snapshot struct {
	// Provider is the name as reported: a family or a variant (claude-code).
	Provider    string
	Metrics     []Metric
	CollectedAt time.Time
}

// FamilyOf folds a provider name into its family: lowercased, it must be a
// known family name or start with one followed by "-" or "_" (openai-codex,
// claude_code), or be one of the aliases (codex, anthropic, ...).
func FamilyOf(provider string) (string, bool) {
	p := strings.ToLower(strings.TrimSpace(provider))
	for _, fp := range familyPrefixes {
		if rest, ok := strings.CutPrefix(p, fp.prefix); ok && (rest == "" || rest[0] == '-' || rest[0] == '_') {
			return fp.family, true
		}
	}
	return "", false
}

// NormalizeProvider is the stored form of a provider name: trimmed and
// lowercased, so "Claude-Code" and "claude-code" are one variant.
func NormalizeProvider(provider string) string {
	return strings.ToLower(strings.TrimSpace(provider))
}

// Validate checks a snapshot's provider and metrics and returns its family.
func Validate(provider string, metrics []Metric) (string, error) {
	var errs []fault.FieldError
	family, ok := FamilyOf(provider)
	switch {
	case strings.TrimSpace(provider) == "":
		errs = append(errs, fault.Field("provider", "required"))
	case utf8.RuneCountInString(provider) > MaxProviderLen:
		errs = append(errs, fault.Field("provider", "at most %d characters", MaxProviderLen))
	case !ok:
		errs = append(errs, fault.Field("provider", "unknown provider family: want openai or claude, or a variant such as openai-codex or claude-code"))
	}
	switch {
	case len(metrics) == 0:
		errs = append(errs, fault.Field("metrics", "at least one metric is required"))
	case len(metrics) > MaxMetrics:
		errs = append(errs, fault.Field("metrics", "at most %d metrics", MaxMetrics))
	}
	seen := map[string]bool{}
	for i, m := range metrics {
		field := "metrics[" + strconv.Itoa(i) + "]"
		switch {
		case strings.TrimSpace(m.Name) == "":
			errs = append(errs, fault.Field(field+".name", "required"))
		case utf8.RuneCountInString(m.Name) > MaxMetricNameLen:
			errs = append(errs, fault.Field(field+".name", "at most %d characters", MaxMetricNameLen))
		case seen[m.Name]:
			errs = append(errs, fault.Field(field+".name", "%q appears twice", m.Name))
		}
		seen[m.Name] = true
		if !finite(m.Value) || m.Value < 0 {
			errs = append(errs, fault.Field(field+".value", "must be a finite number, 0 or more"))
		}
		if m.Limit != nil && (!finite(*m.Limit) || *m.Limit < 0) {
			errs = append(errs, fault.Field(field+".limit", "must be a finite number, 0 or more"))
		}
		if utf8.RuneCountInString(m.Unit) > MaxUnitLen {
			errs = append(errs, fault.Field(field+".unit", "at most %d characters", MaxUnitLen))
		}
	}
	if len(errs) > 0 {
		return "", fault.Validation(errs...)
	}
	return family, nil
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Quota is the metric a family's usage figures come from.
type Quota struct {
	Metric Metric
	// Provider and CollectedAt are those of the snapshot holding the metric.
	Provider    string
	CollectedAt time.Time
}

// Remaining is what is left of the quota, never below zero.
func (q Quota) Remaining() float64 { return math.Max(*q.Metric.Limit-q.Metric.Value, 0) }

// Fraction is Remaining over the limit (0 for a zero limit).
func (q Quota) Fraction() float64 {
	if *q.Metric.Limit <= 0 {
		return 0
	}
	return q.Remaining() / *q.Metric.Limit
}

// Select picks the best quota-bearing metric among a family's snapshots:
//
//  1. only metrics with a limit bear a quota;
//  2. a summary metric beats any other, so usage_remaining comes from the
//     summary even when the primary (per-model, per-window) metric is absent;
//  3. among equals, the one with the smallest remaining fraction wins: it is
//     the quota that runs out first;
//  4. remaining ties go to the newer snapshot, then the metric name, so the
//     choice is deterministic.
//
// It reports false when no metric has a limit.
func Select(snapshots []Snapshot) (Quota, bool) {
	var best Quota
	found := false
	for _, s := range snapshots {
		for _, m := range s.Metrics {
			if m.Limit == nil {
				continue
			}
			q := Quota{Metric: m, Provider: s.Provider, CollectedAt: s.CollectedAt}
			if !found || better(q, best) {
				best, found = q, true
			}
		}
	}
	return best, found
}

func better(a, b Quota) bool {
	if a.Metric.IsSummary != b.Metric.IsSummary {
		return a.Metric.IsSummary
	}
	if c := cmp.Compare(a.Fraction(), b.Fraction()); c != 0 {
		return c < 0
	}
	if !a.CollectedAt.Equal(b.CollectedAt) {
		return a.CollectedAt.After(b.CollectedAt)
	}
	return a.Metric.Name+"\x00"+a.Provider < b.Metric.Name+"\x00"+b.Provider
}

// Alert levels.
const (
	Info     = "info"
	Warning  = "warning"
	Critical = "critical"
)

// Alert warns about a family's quota or data.
type Alert struct {
	Level   string
	Message string
}

// Sources of a row's data and of the whole overview.
const (
	SourceLive             = "live"
	SourceSnapshot         = "snapshot"
	SourceSnapshotFallback = "snapshot_fallback"
	SourceNone             = "none"
	// SourceAgent is a row with no provider data whose numbers are what
	// Foundry's own agent tasks reported spending (Recorded).
	SourceAgent = "agent_recorded"
)

// Row is one family's line of the overview.
type Row struct {
	Family string
	// Variants are the provider names the row folds together, sorted.
	Variants []string
	// Quota is the selected metric; nil when no metric bears a quota.
	Quota *Quota
	// Source is SourceLive, SourceSnapshot, SourceAgent or SourceNone.
	Source string
	// CollectedAt is when the row's data was collected (the selected metric's
	// snapshot, else the newest); zero when there is none.
	CollectedAt time.Time
	Alerts      []Alert
	// Agent is what the agent's own tasks of the family recorded spending;
	// nil when they recorded nothing.
	Agent *Recorded
}

// Recorded is the usage Foundry's agent tasks of one family reported over
// the last WindowDays days: the only numbers there are when no provider
// collector or snapshot is configured, and no quota.
type Recorded struct {
	WindowDays int
	Tasks      int64
	TokensIn   int64
	TokensOut  int64
	CostUSD    float64
}

// ModelSpent is what the agent's tasks of one model spent.
type ModelSpent struct {
	Model string
	Recorded
}

// FoldModels sums the agent's usage by model into families (FamilyOf the
// model; a model of no known family counts in none).
func FoldModels(windowDays int, models []ModelSpent) map[string]Recorded {
	out := map[string]Recorded{}
	for _, m := range models {
		f, ok := FamilyOf(m.Model)
		if !ok || m.Tasks == 0 {
			continue
		}
		r := out[f]
		r.WindowDays = windowDays
		r.Tasks += m.Tasks
		r.TokensIn += m.TokensIn
		r.TokensOut += m.TokensOut
		r.CostUSD = math.Round((r.CostUSD+m.CostUSD)*1e6) / 1e6
		out[f] = r
	}
	return out
}

// Input is what the overview is built from.
type Input struct {
	// Live holds the snapshots collected just now, by family; a family is
	// present only when its collection succeeded within the budget.
	Live map[string][]Snapshot
	// Fallback names the families whose live collection missed the budget or
	// failed.
	Fallback []string
	// Stored holds the latest stored snapshot of each provider.
	Stored []Snapshot
	// Agent is the agent's recorded usage by family (FoldModels), at
	// RecordedAt.
	Agent      map[string]Recorded
	RecordedAt time.Time
}

// Overview builds one row per family (in Families order) and names the
// overview's data source:
//
//   - "none" when no row has data;
//   - "snapshot_fallback" when any family's live collection missed the
//     budget or failed (its row shows its stored snapshots instead);
//   - "live" when at least one family was collected live and none failed;
//   - "snapshot" otherwise (no live collector configured);
//   - "agent_recorded" when no row has provider data but some have what
//     the agent's tasks recorded spending.
//
// A family collected live shows only the live data; any other shows the
// latest stored snapshot of each of its providers. Every row carries the
// agent's recorded usage of its family (Row.Agent); a row with no provider
// data takes it as its own (SourceAgent): the tokens used, no quota.
func Overview(in Input) ([]Row, string) {
	stored := map[string][]Snapshot{}
	for _, s := range in.Stored {
		if f, ok := FamilyOf(s.Provider); ok {
			stored[f] = append(stored[f], s)
		}
	}
	rows := make([]Row, 0, len(Families))
	anyData, anyLive, anyAgent := false, false, false
	for _, family := range Families {
		row := Row{Family: family, Source: SourceNone, Variants: []string{}}
		snaps, live := in.Live[family]
		if live && len(snaps) > 0 {
			row.Source = SourceLive
			anyLive = true
		} else {
			snaps = stored[family]
			if len(snaps) > 0 {
				row.Source = SourceSnapshot
			}
		}
		for _, s := range snaps {
			if !slices.Contains(row.Variants, s.Provider) {
				row.Variants = append(row.Variants, s.Provider)
			}
			if s.CollectedAt.After(row.CollectedAt) {
				row.CollectedAt = s.CollectedAt
			}
		}
		slices.Sort(row.Variants)
		if q, ok := Select(snaps); ok {
			row.Quota = &q
			row.CollectedAt = q.CollectedAt
		}
		if len(snaps) > 0 {
			anyData = true
		}
		if rec, ok := in.Agent[family]; ok {
			row.Agent = &rec
			if row.Source == SourceNone {
				row.Source, row.CollectedAt = SourceAgent, in.RecordedAt
				anyAgent = true
			}
		}
		row.Alerts = alerts(row, slices.Contains(in.Fallback, family))
		rows = append(rows, row)
	}
	switch {
	case !anyData && anyAgent:
		return rows, SourceAgent
	case !anyData:
		return rows, SourceNone
	case len(in.Fallback) > 0:
		return rows, SourceSnapshotFallback
	case anyLive:
		return rows, SourceLive
	}
	return rows, SourceSnapshot
}

// alerts are a row's warnings: the quota running low (warning below 25 %
// remaining, critical below 10 % or exhausted) and a live collection that
// fell back to stored data.
func alerts(row Row, fellBack bool) []Alert {
	out := []Alert{}
	if fellBack {
		msg := "live collection missed the latency budget or failed; showing the last snapshot"
		if row.Source == SourceNone || row.Source == SourceAgent {
			msg = "live collection missed the latency budget or failed, and there is no snapshot"
		}
		out = append(out, Alert{Level: Info, Message: msg})
	}
	if row.Quota == nil {
		return out
	}
	f := row.Quota.Fraction()
	name := row.Quota.Metric.Name
	switch {
	case row.Quota.Remaining() <= 0:
		out = append(out, Alert{Level: Critical, Message: name + ": quota exhausted"})
	case f < CriticalBelow:
		out = append(out, Alert{Level: Critical, Message: name + ": less than 10% of the quota remains"})
	case f < WarningBelow:
		out = append(out, Alert{Level: Warning, Message: name + ": less than 25% of the quota remains"})
	}
	return out
}

package task

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
)

// Price is what a model charges, in US dollars per million tokens.
type Price struct {
	In, Out float64
}

// Prices is the price table a task's cost is estimated from when its
// executor reports tokens but no cost.
type Prices map[string]Price

// DefaultPrices are the list prices of the routing table's default models
// (docs/agent.md, "Usage"), per million tokens in and out. They are an
// estimate's basis, not a bill: FOUNDRY_AGENT_PRICES replaces any of them.
var DefaultPrices = Prices{
	"claude-opus-4-1":   {In: 15, Out: 75},
	"claude-sonnet-4-5": {In: 3, Out: 15},
	"claude-haiku-4-5":  {In: 1, Out: 5},
	"gpt-5":             {In: 1.25, Out: 10},
	"gpt-5-codex":       {In: 1.25, Out: 10},
	"gpt-5-mini":        {In: 0.25, Out: 2},
}

// Estimate is the cost of tokensIn and tokensOut at model's price, to the
// micro-dollar; ok is false when the table has no price for model.
func (p Prices) Estimate(model string, tokensIn, tokensOut int64) (float64, bool) {
	price, ok := p[model]
	if !ok {
		return 0, false
	}
	usd := (float64(tokensIn)*price.In + float64(tokensOut)*price.Out) / 1e6
	return float64(int64(usd*1e6+0.5)) / 1e6, true
}

// MaxTokens bounds a task's reported tokens, each way (an int32 on the
// wire).
const MaxTokens = 1<<31 - 1

// MaxMeasure bounds a task's value_score, resource_cost and cost_usd. The
// prompt A/B sums them over every outcome of a variant: unbounded, two
// reports of 1e308 summed to +Inf, which JSON cannot carry (the stats
// answered the string "Infinity" where a number is promised) and which
// pinned the variant at probability 1. 10^9 a task keeps any sum of a
// billion tasks finite and far from float64's limits.
const MaxMeasure = 1e9

// ParsePrices lays model=in:out,... (USD per million tokens) over def.
func ParsePrices(def Prices, s string) (Prices, error) {
	out := maps.Clone(def)
	if out == nil {
		out = Prices{}
	}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		model, spec, ok := strings.Cut(item, "=")
		in, outPrice, ok2 := strings.Cut(spec, ":")
		model = strings.TrimSpace(model)
		if !ok || !ok2 || model == "" {
			return nil, fmt.Errorf("%q: want model=in:out (US dollars per million tokens)", item)
		}
		var price Price
		for _, f := range []struct {
			s   string
			dst *float64
		}{{in, &price.In}, {outPrice, &price.Out}} {
			v, err := strconv.ParseFloat(strings.TrimSpace(f.s), 64)
			if err != nil || v < 0 || v > 1e6 {
				return nil, fmt.Errorf("%q: a price is a number of dollars from 0 to 1000000", item)
			}
			*f.dst = v
		}
		out[model] = price
	}
	return out, nil
}

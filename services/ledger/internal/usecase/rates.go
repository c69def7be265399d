package usecase

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/money"
)

// DefaultCCPerUSD is the configured fixed rate when none is set: 100 CC per USD.
const DefaultCCPerUSD money.Micros = 100 * money.Scale

// RateSource reports the mid exchange rate in micro-CC per USD. Readings go
// through the oracle circuit breaker before they become the posted rate.
type RateSource interface {
	// Name identifies the source in readings and logs ("fixed", "http").
	Name() string
	// Rate reports the current rate.
	Rate(ctx context.Context) (money.Micros, error)
}

// FixedRate is a configured rate that never moves: the default, for a
// treasury whose CC is pegged by policy.
type FixedRate money.Micros

// Name implements RateSource.
func (FixedRate) Name() string { return "fixed" }

// Rate implements RateSource.
func (f FixedRate) Rate(context.Context) (money.Micros, error) { return money.Micros(f), nil }

// HTTPRate reads the rate from an HTTP oracle answering GET with a JSON
// object {"cc_per_usd": <number>}.
type HTTPRate struct {
	URL    string
	Client *http.Client
}

// Name implements RateSource.
func (HTTPRate) Name() string { return "http" }

// maxOracleBody bounds what is read of an oracle's answer.
const maxOracleBody = 64 << 10

// Rate implements RateSource.
func (h HTTPRate) Rate(ctx context.Context) (money.Micros, error) {
	client := h.Client
	if client == nil {
		client = &http.Client{Timeout: 5 * time.Second}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
	if err != nil {
		return 0, fmt.Errorf("rate oracle request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) {
			err = ue.Unwrap() // drop the URL: it may carry a key
		}
		return 0, fmt.Errorf("rate oracle: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("rate oracle answered %d", resp.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxOracleBody+1))
	if err != nil {
		return 0, fmt.Errorf("rate oracle: read the answer: %w", err)
	}
	if len(raw) > maxOracleBody {
		return 0, fmt.Errorf("rate oracle: the answer is larger than %d bytes", maxOracleBody)
	}
	// The whole body must be the one JSON value: a reading followed by
	// anything else (a second object, a stray token) is refused, not read
	// up to its first value, since the body is then not what the oracle
	// is documented to send and may not be the price it meant.
	var body struct {
		CCPerUSD *float64 `json:"cc_per_usd"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || body.CCPerUSD == nil {
		return 0, errors.New("rate oracle: want exactly one JSON object with a cc_per_usd number")
	}
	rate, err := money.FromFloat(*body.CCPerUSD)
	if err != nil || rate <= 0 {
		return 0, fmt.Errorf("rate oracle: cc_per_usd %v is not a positive amount", *body.CCPerUSD)
	}
	return rate, nil
}

package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"sync/atomic"
)

// StatusError is a call answered other than 2xx.
type StatusError struct {
	Method, Path string
	Code         int
	Body         []byte
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Code, e.Body)
}

// Call sends one JSON request with client and decodes a 2xx answer into
// out; any other answer is a *StatusError.
func Call(ctx context.Context, client *http.Client, base, method, path string, body any, h http.Header, out any) error {
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			return err
		}
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, bytes.NewReader(b))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return &StatusError{Method: method, Path: path, Code: resp.StatusCode, Body: raw}
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// Register registers a contributor and returns its id and session token.
func Register(ctx context.Context, client *http.Client, base, handle string) (id, token string, err error) {
	var reg struct {
		ContributorID string `json:"contributor_id"`
		SessionToken  string `json:"session_token"`
	}
	err = Call(ctx, client, base, http.MethodPost, "/api/onboarding/register", map[string]any{"handle": handle}, nil, &reg)
	return reg.ContributorID, reg.SessionToken, err
}

// Parallel calls fn for 0 ≤ i < n from workers goroutines, each taking the
// next i as it finishes one. The first error cancels fn's context, stops
// the workers and is returned.
func Parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		firstErr error
		errOnce  sync.Once
		wg       sync.WaitGroup
	)
	for range min(workers, n) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := fn(ctx, i); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// USDFor is the deposit, in whole cents, that mints at least cc CC at the
// buy rate in force, and that rate (CC a deposited USD mints).
func USDFor(ctx context.Context, client *http.Client, base string, cc float64) (usd, rate float64, err error) {
	var r struct {
		BuyRate float64 `json:"buy_rate"`
	}
	if err := Call(ctx, client, base, http.MethodGet, "/api/cc/exchange-rate", nil, nil, &r); err != nil {
		return 0, 0, err
	}
	if r.BuyRate <= 0 {
		return 0, 0, fmt.Errorf("buy rate %v: want a positive rate", r.BuyRate)
	}
	// Whole cents, rounded up: the deposit mints rounding down.
	return math.Ceil(cc/r.BuyRate*100) / 100, r.BuyRate, nil
}

package task

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RetryPolicy is how a task type's failed attempts are retried: a task
// gets MaxAttempts attempts in all; after a failed one with attempts left
// it waits Delay and goes back to the queue as the same task, and the
// failure of its last attempt discards it.
type RetryPolicy struct {
	MaxAttempts int
	// Backoff is the wait after the first failed attempt, doubled after
	// each further one up to MaxBackoff.
	Backoff    time.Duration
	MaxBackoff time.Duration
}

// DefaultRetry is the policy of a task type no setting names: three
// attempts, 30 s after the first failure, 1 min after the second.
var DefaultRetry = RetryPolicy{MaxAttempts: 3, Backoff: 30 * time.Second, MaxBackoff: 10 * time.Minute}

// MaxRetryAttempts bounds a policy's attempts.
const MaxRetryAttempts = 100

// Jitter is how far a retry's delay strays from its exponential value, as
// a fraction of it either way: tasks that failed together (a provider's
// outage) do not all come back at once.
const Jitter = 0.25

// Retries decides after failed attempt (1 for the first) whether the
// task is retried, and how long it waits first: u in [0, 1) draws the
// jitter (0.5 for none). A task given more attempts than its policy's (an
// operator's retry) is judged by maxAttempts, the task's own.
func (p RetryPolicy) Retries(attempt, maxAttempts int, u float64) (time.Duration, bool) {
	if attempt >= maxAttempts {
		return 0, false
	}
	d := p.Backoff
	for i := 1; i < attempt && d < p.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.MaxBackoff)
	return time.Duration(float64(d) * (1 - Jitter + 2*Jitter*u)), true
}

// Policies are the retry policies of the task types: Default for any
// type ByType does not name.
type Policies struct {
	Default RetryPolicy
	ByType  map[Type]RetryPolicy
}

// Of is the policy of a task type.
func (p Policies) Of(t Type) RetryPolicy {
	if r, ok := p.ByType[t]; ok {
		return r
	}
	return p.Default
}

// ParsePolicies reads per-type overrides of def, written
// type=attempts[:backoff[:max_backoff]],... (impl=5:1m:1h,review=1); a
// part left out is def's.
func ParsePolicies(def RetryPolicy, s string) (Policies, error) {
	if err := def.validate(); err != nil {
		return Policies{}, err
	}
	out := Policies{Default: def, ByType: map[Type]RetryPolicy{}}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		name, spec, ok := strings.Cut(item, "=")
		typ, known := ParseType(strings.TrimSpace(name))
		if !ok || !known {
			return Policies{}, fmt.Errorf("%q: want type=attempts[:backoff[:max_backoff]] with a task type", item)
		}
		p := def
		parts := strings.Split(spec, ":")
		if len(parts) > 3 {
			return Policies{}, fmt.Errorf("%q: want at most attempts:backoff:max_backoff", item)
		}
		n, err := strconv.Atoi(strings.TrimSpace(parts[0]))
		if err != nil {
			return Policies{}, fmt.Errorf("%q: attempts: want a whole number", item)
		}
		p.MaxAttempts = n
		for i, d := range []*time.Duration{&p.Backoff, &p.MaxBackoff} {
			if len(parts) > i+1 {
				if *d, err = time.ParseDuration(strings.TrimSpace(parts[i+1])); err != nil {
					return Policies{}, fmt.Errorf("%q: %w", item, err)
				}
			}
		}
		if err := p.validate(); err != nil {
			return Policies{}, fmt.Errorf("%q: %w", item, err)
		}
		out.ByType[typ] = p
	}
	return out, nil
}

func (p RetryPolicy) validate() error {
	switch {
	case p.MaxAttempts < 1 || p.MaxAttempts > MaxRetryAttempts:
		return fmt.Errorf("attempts: want 1 to %d", MaxRetryAttempts)
	case p.Backoff < 0 || p.MaxBackoff < p.Backoff:
		return fmt.Errorf("backoff: want 0 or more, and a max_backoff no shorter")
	}
	return nil
}

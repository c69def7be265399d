package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// coherenceMargin is how far behind the newest journal entries the
// ledger's coherence check keeps its place (coherenceMargin in
// services/ledger/internal/usecase/coherence.go): entries younger than it
// are read again by the next check.
const coherenceMargin = 10 * time.Second

// settled is the coherence check once it has caught up.
type settled struct {
	// last is the time of the run after the check's place reached the
	// audit log's head: a run with nothing new to read.
	last time.Duration
	// runs are the runs waited for, took how long the wait was, and
	// seconds their time in all (a backlog's runs included).
	runs    int
	took    time.Duration
	seconds float64
	failed  int
}

// settleCoherence waits out coherenceMargin, then until the monitor's
// coherence checks have brought the check's place to the audit log's head
// (the ledger reconciles at most 10 000 entries a run, one run every
// FOUNDRY_MONITOR_INTERVAL, so a seeded backlog takes several), then for
// one run more, and returns that run's time: the check's cost with
// nothing new to read, which only the history's size can make grow. nil
// when Foundry's metrics do not time the check.
func settleCoherence(ctx context.Context, sys *system, limit time.Duration) (*settled, error) {
	begin := time.Now()
	if err := sleep(ctx, coherenceMargin); err != nil {
		return nil, err
	}
	first, exported, err := coherenceChecks(ctx, sys)
	if err != nil || !exported {
		return nil, err
	}
	prev := first
	// caughtUp is the runs counted when the place was seen at the head
	// twice in a row (a run's place commits a moment before its answer
	// is counted); -1 until then.
	caughtUp, zeroSeen := -1.0, -1.0
	s := &settled{}
	for {
		if err := sleep(ctx, time.Second); err != nil {
			return nil, err
		}
		cur, _, err := coherenceChecks(ctx, sys)
		if err != nil {
			return nil, err
		}
		if cur.runs > prev.runs {
			s.last = time.Duration((cur.seconds - prev.seconds) / (cur.runs - prev.runs) * float64(time.Second))
			// Each run as it ends, so a slow catching up shows run by run.
			failed := ""
			if cur.failed > prev.failed {
				failed = fmt.Sprintf(", %.0f of them failed (not OK)", cur.failed-prev.failed)
			}
			fmt.Printf("    coherence check: %.0f run(s) ended, %s a run%s\n", cur.runs-prev.runs, ms(s.last), failed)
		}
		prev = cur
		if caughtUp >= 0 && cur.runs > caughtUp {
			s.runs, s.took, s.seconds, s.failed = int(cur.runs-first.runs), time.Since(begin), cur.seconds-first.seconds, int(cur.failed-first.failed)
			return s, nil
		}
		if caughtUp < 0 && cur.runs > first.runs {
			lag, err := coherenceLag(ctx, sys)
			if err != nil {
				return nil, err
			}
			switch {
			case lag > 0:
				zeroSeen = -1
			case zeroSeen == cur.runs:
				caughtUp = cur.runs
			default:
				zeroSeen = cur.runs
			}
		}
		if time.Since(begin) > limit {
			return nil, fmt.Errorf("the coherence check did not catch up with the audit log within %s", limit)
		}
	}
}

// coherenceLag is how many audit entries the coherence check has still to
// read: the audit log's head less its place. It reads the ledger's tables
// (ledger.economy, ledger.coherence_place), which no route exposes; the
// place has no row before a run has moved it.
func coherenceLag(ctx context.Context, sys *system) (int64, error) {
	var lag int64
	err := sys.conn.QueryRow(ctx, `SELECT e.audit_seq - COALESCE((SELECT log_after FROM ledger.coherence_place WHERE id = 1), 0)
		FROM ledger.economy e WHERE e.id = 1`).Scan(&lag)
	if err != nil {
		return 0, fmt.Errorf("the coherence check's place: %w", err)
	}
	return lag, nil
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// checks are coherence checks the ledger served: how many, their time in
// all, and how many of them did not answer OK (the monitor's deadline, the
// longer of its interval and 10 s, cancels a run that outlives it).
type checks struct {
	runs    float64
	seconds float64
	failed  float64
}

// coherenceChecks reads from Foundry's metrics the coherence checks the
// ledger has served so far (grpc_server_handling_seconds of
// CheckCoherence: the monitor asks for one every FOUNDRY_MONITOR_INTERVAL);
// exported is false when the metrics have no such series.
func coherenceChecks(ctx context.Context, sys *system) (c checks, exported bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sys.metrics, nil)
	if err != nil {
		return c, false, err
	}
	resp, err := sys.client.Do(req)
	if err != nil {
		return c, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c, false, fmt.Errorf("%s: %s", sys.metrics, resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, `grpc_method="CheckCoherence"`) {
			continue
		}
		var dst *float64
		switch {
		case strings.HasPrefix(line, "grpc_server_handling_seconds_sum{"):
			dst = &c.seconds
		case strings.HasPrefix(line, "grpc_server_handling_seconds_count{"):
			dst = &c.runs
		case strings.HasPrefix(line, "grpc_server_handled_total{") && !strings.Contains(line, `grpc_code="OK"`):
			dst = &c.failed
		default:
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			return c, false, fmt.Errorf("%s: %q: %w", sys.metrics, line, err)
		}
		*dst += v
		exported = true
	}
	if err := sc.Err(); err != nil {
		return c, false, err
	}
	return c, exported, nil
}

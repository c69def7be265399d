package ledger

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/mod/sumdb/note"

	"github.com/foundryhq/foundry/services/ledger/internal/peer"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
)

// witnessEvery is how often the replica that holds the witnesses' lease
// asks them to cosign the latest checkpoint: under load the sequencer
// signs one every few tens of milliseconds, and a witness need only see
// the log grow, not every step of it. The checkpoint served lags the
// latest by about this much.
const witnessEvery = time.Second

// parseWitnesses reads FOUNDRY_AUDIT_WITNESSES: comma-separated
// VERIFIER_KEY@URL, a witness's verifier key (foundry audit witness prints
// it) and the URL it serves tlog-witness on. A verifier key never holds
// "@"; a URL may (user information), so the first "@" splits.
func parseWitnesses(v string) ([]usecase.Witness, error) {
	var out []usecase.Witness
	seen := map[string]bool{}
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		key, raw, ok := strings.Cut(item, "@")
		if !ok {
			return nil, fmt.Errorf("FOUNDRY_AUDIT_WITNESSES: %q: want VERIFIER_KEY@URL", item)
		}
		if _, err := note.NewVerifier(key); err != nil {
			return nil, fmt.Errorf("FOUNDRY_AUDIT_WITNESSES: %q is not a note verifier key: %w", key, err)
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("FOUNDRY_AUDIT_WITNESSES: %q is not an http(s) URL", raw)
		}
		if seen[key] {
			return nil, fmt.Errorf("FOUNDRY_AUDIT_WITNESSES: witness %s appears twice", key)
		}
		seen[key] = true
		out = append(out, peer.NewWitness(key, u))
	}
	return out, nil
}

// runWitnesses asks the witnesses to cosign the latest checkpoint every
// witnessEvery, on the replica that holds their lease, until ctx ends. A
// witness that fails is logged once a minute while it keeps failing (a
// refusal is also a finding, recorded by the use case).
func runWitnesses(ctx context.Context, log *zap.Logger, uc *usecase.App, holder string) {
	defer func() { _ = uc.ReleaseWitnesses(context.WithoutCancel(ctx), holder) }()
	logged := map[string]time.Time{}
	var leading bool
	for ctx.Err() == nil {
		ok, err := uc.LeadWitnesses(ctx, holder, 10*witnessEvery)
		if err != nil && ctx.Err() == nil {
			log.Warn("taking the audit witnesses' lease failed", zap.Error(err))
		}
		if ok != leading {
			log.Info("audit witnesses", zap.Bool("leading", ok))
			leading = ok
		}
		if leading {
			round, err := uc.WitnessCheckpoint(ctx)
			if err != nil && ctx.Err() == nil {
				log.Error("asking the audit witnesses failed", zap.Error(err))
			}
			for key, werr := range round.Failed {
				if time.Since(logged[key]) >= time.Minute {
					level := log.Warn
					if errors.Is(werr, usecase.ErrWitnessRefused) {
						level = log.Error
					}
					level("an audit witness did not cosign the latest checkpoint", zap.String("witness", key),
						zap.Int64("tree_size", round.Size), zap.Error(werr))
					logged[key] = time.Now()
				}
			}
			for key := range logged {
				if _, failing := round.Failed[key]; !failing {
					delete(logged, key)
				}
			}
		}
		t := time.NewTimer(witnessEvery)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
	}
}

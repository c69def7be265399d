package usecase

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/lease"
)

// Witness is an independent witness of the audit log (C2SP tlog-witness,
// foundry audit witness): it cosigns a checkpoint only when it extends the
// last one it cosigned for the log. A writer who holds the log's signing
// key can sign a forked history, but cannot get it cosigned, so a client
// that requires the witnesses' cosignatures cannot be shown one.
type Witness interface {
	// Key is the witness's verifier key.
	Key() string
	// AddCheckpoint asks the witness to cosign the signed checkpoint,
	// given the size of the last checkpoint it cosigned (0 for none) and
	// a consistency proof from it, and returns its cosignature lines. A
	// witness whose last size is another answers ErrWitnessStale with
	// that size; one that finds the checkpoint does not extend its last
	// answers ErrWitnessRefused.
	AddCheckpoint(ctx context.Context, oldSize int64, signed string, proof []audit.Hash) (cosignature string, size int64, err error)
}

// Errors a witness answers.
var (
	// ErrWitnessStale: the witness cosigned another size last; ask again
	// from that size.
	ErrWitnessStale = errors.New("the witness has cosigned another checkpoint size last")
	// ErrWitnessRefused: the checkpoint does not extend the last one the
	// witness cosigned for the log.
	ErrWitnessRefused = errors.New("the witness refuses the checkpoint: it does not extend the last one it cosigned")
)

// checkpointWitnessed names the checkpoint every witness cosigned.
const checkpointWitnessed = "witnessed"

// WitnessLease is the lease of the replica that asks the witnesses.
const WitnessLease = "audit-witnesses"

// WitnessRound is what one round of asking the witnesses did.
type WitnessRound struct {
	// Size is the checkpoint asked for (0: none yet).
	Size int64
	// Cosigned counts the witnesses that cosigned it; Failed says why the
	// others did not (by witness key).
	Cosigned int
	Failed   map[string]error
}

// LeadWitnesses takes or renews the witnesses' lease for holder.
func (a *App) LeadWitnesses(ctx context.Context, holder string, ttl time.Duration) (bool, error) {
	return lease.Take(ctx, a.db, WitnessLease, holder, ttl)
}

// ReleaseWitnesses gives the witnesses' lease up.
func (a *App) ReleaseWitnesses(ctx context.Context, holder string) error {
	return lease.Release(ctx, a.db, WitnessLease, holder)
}

// WitnessCheckpoint asks every configured witness to cosign the latest
// checkpoint, each from the last size it cosigned (with the consistency
// proof from it), and keeps what each cosigned; once all have cosigned
// the same checkpoint it is the witnessed one, served with their
// cosignatures. A witness that refuses the checkpoint — it does not extend
// the last one the witness cosigned — or that cosigned a larger tree than
// the ledger's latest has seen another history than the ledger's: that is
// a finding (the log, read_only). A witness that cannot be reached is
// asked again next round.
func (a *App) WitnessCheckpoint(ctx context.Context) (WitnessRound, error) {
	out := WitnessRound{Failed: map[string]error{}}
	began := a.now()
	if len(a.cfg.Witnesses) == 0 {
		return out, nil
	}
	r := a.read()
	latest, err := r.Audit.Checkpoint(ctx, checkpointLatest)
	if errors.Is(err, store.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	out.Size = latest.Size
	var (
		cosigs []string
		found  []store.Finding
	)
	for _, w := range a.cfg.Witnesses {
		cosig, err := a.witness(ctx, r, w, latest)
		switch {
		case err == nil:
			out.Cosigned++
			cosigs = append(cosigs, cosig)
		case errors.Is(err, ErrWitnessRefused):
			f := logFinding(0, fmt.Sprintf("witness %s refuses the latest checkpoint (tree size %d): %v", w.Key(), latest.Size, err))
			f.Place = "log:witness:" + w.Key()
			found = append(found, f)
			out.Failed[w.Key()] = err
		default:
			out.Failed[w.Key()] = err
		}
	}
	if err := a.report(ctx, "witness", began, found...); err != nil {
		return out, err
	}
	if out.Cosigned < len(a.cfg.Witnesses) {
		return out, nil
	}
	witnessed := latest
	witnessed.Note, witnessed.At = latest.Note+strings.Join(cosigs, ""), a.now()
	return out, a.tx(ctx, func(r Repos) error { return r.Audit.SaveCheckpoint(ctx, checkpointWitnessed, witnessed) })
}

// witness asks one witness to cosign latest and returns its cosignature.
func (a *App) witness(ctx context.Context, r Repos, w Witness, latest store.Checkpoint) (string, error) {
	st, err := r.Audit.WitnessState(ctx, w.Key())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	if st.Size == latest.Size && st.Note == latest.Note {
		return st.Cosignature, nil
	}
	old := st.Size
	for attempt := 0; ; attempt++ {
		if old > latest.Size {
			return "", fmt.Errorf("%w: it cosigned a tree of size %d, and the ledger's latest is %d: the log was rolled back",
				ErrWitnessRefused, old, latest.Size)
		}
		var proof []audit.Hash
		if old > 0 && old < latest.Size {
			c, err := a.ConsistencyProof(ctx, old, latest.Size)
			if err != nil {
				return "", err
			}
			proof = c.Proof
		}
		cosig, size, err := w.AddCheckpoint(ctx, old, latest.Note, proof)
		if errors.Is(err, ErrWitnessStale) && attempt == 0 {
			old = size // it knows its own size better than the ledger's record of it
			continue
		}
		if err != nil {
			return "", err
		}
		return cosig, a.tx(ctx, func(r Repos) error {
			return r.Audit.SaveWitnessState(ctx, store.WitnessState{Witness: w.Key(), Size: latest.Size, Note: latest.Note,
				Cosignature: cosig, At: a.now()})
		})
	}
}

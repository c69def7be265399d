package peer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	whttp "github.com/transparency-dev/witness/client/http"
	"github.com/transparency-dev/witness/witness"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
)

// Witness is a witness of the audit log reached over C2SP tlog-witness,
// through transparency-dev's client: the ledger asks it to cosign each
// checkpoint.
type Witness struct {
	key    string
	client whttp.Witness
}

var _ usecase.Witness = Witness{}

// NewWitness returns the witness at u whose verifier key is key.
func NewWitness(key string, u *url.URL) Witness {
	return Witness{key: key, client: whttp.NewWitness(u, &http.Client{Timeout: 10 * time.Second})}
}

// Key implements usecase.Witness.
func (w Witness) Key() string { return w.key }

// AddCheckpoint implements usecase.Witness, mapping the client's errors
// to the use case's.
func (w Witness) AddCheckpoint(ctx context.Context, oldSize int64, signed string, proof []audit.Hash) (string, int64, error) {
	p := make([][]byte, len(proof))
	for i, h := range proof {
		p[i] = append([]byte(nil), h[:]...)
	}
	sigs, size, err := w.client.Update(ctx, uint64(oldSize), []byte(signed), p)
	switch {
	case err == nil:
		return string(sigs), 0, nil
	case errors.Is(err, witness.ErrCheckpointStale):
		return "", int64(size), usecase.ErrWitnessStale
	case errors.Is(err, witness.ErrInvalidProof), errors.Is(err, witness.ErrRootMismatch):
		return "", 0, fmt.Errorf("%w: %w", usecase.ErrWitnessRefused, err)
	}
	return "", 0, err
}

package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// RecordFreezeNonce implements store.Credit. The primary key (signer,
// nonce) decides: a replay, sequential or concurrent, fails on it (on
// Postgres a concurrent insert waits for the first to commit, then fails).
func (c Credit) RecordFreezeNonce(ctx context.Context, n store.FreezeNonce) error {
	_, err := c.q.Exec(ctx, `INSERT INTO freeze_nonces (signer_id, nonce, issued_at, seen_at) VALUES ($1, $2, $3, $4)`,
		n.SignerID, n.Nonce, database.Micros(n.IssuedAt), database.Micros(n.SeenAt))
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("freeze nonce of %s: %w", n.SignerID, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("record freeze nonce of %s: %w", n.SignerID, err)
	}
	return nil
}

// PruneFreezeNonces implements store.Credit.
func (c Credit) PruneFreezeNonces(ctx context.Context, before time.Time) (int, error) {
	n, err := c.q.Exec(ctx, `DELETE FROM freeze_nonces WHERE issued_at < $1`, database.Micros(before))
	if err != nil {
		return 0, fmt.Errorf("prune freeze nonces: %w", err)
	}
	return int(n), nil
}

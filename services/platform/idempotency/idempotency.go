// Package idempotency answers a retried request with the response its first
// attempt committed, so a client that lost an answer (a timeout, a dropped
// connection, a killed replica) can send the same request again with the
// same Idempotency-Key and be sure it took effect exactly once.
//
// A record is stored in the same transaction as the request's effects, so a
// key is recorded exactly when they committed, and a refused request leaves
// no record (a retry after fixing the cause runs). Each service keeps its
// records in its own schema, in a table every service that uses keys creates
// in one of its migrations:
//
//	CREATE TABLE idempotency_keys (
//	    scope        TEXT NOT NULL,
//	    key          TEXT NOT NULL,
//	    request_hash TEXT NOT NULL,
//	    response     TEXT NOT NULL,
//	    created_at   BIGINT NOT NULL,
//	    PRIMARY KEY (scope, key)
//	);
//	CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
//
// Records are kept for a retention (each service's
// FOUNDRY_<SERVICE>_IDEMPOTENCY_RETENTION, pruned by Keys.Prune): a
// retry with a key older than that runs again, as Stripe's do after a
// day.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// MaxKey bounds an Idempotency-Key's length.
const MaxKey = 255

// Request identifies a request that carries an Idempotency-Key.
type Request struct {
	// Scope is the operation and the caller ("deposit:admin",
	// "stake:<contributor>"), so two callers' keys never collide.
	Scope string
	// Key is the Idempotency-Key header.
	Key string
	// Hash identifies the request body.
	Hash string
}

// FromContext reads the call's Idempotency-Key (nil when there is none)
// for operation op by caller. The request's deterministic protobuf encoding
// identifies its body, so the same key with another body is refused.
func FromContext(ctx context.Context, op, caller string, req proto.Message) (*Request, error) {
	key := rpcmeta.IdempotencyKey(ctx)
	if key == "" {
		return nil, nil
	}
	if len(key) > MaxKey {
		return nil, fault.Validation(fault.Field("Idempotency-Key", "must be at most %d characters", MaxKey))
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode the request to key it: %w", err)
	}
	sum := sha256.Sum256(b)
	return &Request{Scope: op + ":" + caller, Key: key, Hash: hex.EncodeToString(sum[:])}, nil
}

// Record is a stored response to a request with an Idempotency-Key.
type Record struct {
	Scope       string
	Key         string
	RequestHash string
	// Response is the use case's result as JSON.
	Response  string
	CreatedAt time.Time
}

var (
	// ErrNotFound is Keys.Lookup's answer when no record has the key.
	ErrNotFound = errors.New("no idempotency record")
	// ErrTaken is Keys.Save's answer when a record has the key already.
	ErrTaken = errors.New("idempotency key taken")
)

// Keys is where a service keeps its records.
type Keys interface {
	// Lookup finds the record of scope and key; ErrNotFound when none.
	Lookup(ctx context.Context, scope, key string) (Record, error)
	// Save stores a record; ErrTaken when its key has one already.
	Save(ctx context.Context, r Record) error
	// Prune deletes at most batch records made before before, oldest
	// first, and reports how many.
	Prune(ctx context.Context, before time.Time, batch int) (int64, error)
}

// SQL is Keys over the idempotency_keys table of q's schema.
type SQL struct{ Q database.Querier }

// Lookup implements Keys.
func (s SQL) Lookup(ctx context.Context, scope, key string) (Record, error) {
	var (
		r       Record
		created int64
	)
	err := s.Q.QueryRow(ctx, `SELECT scope, key, request_hash, response, created_at FROM idempotency_keys
		WHERE scope = $1 AND key = $2`, scope, key).Scan(&r.Scope, &r.Key, &r.RequestHash, &r.Response, &created)
	if errors.Is(err, database.ErrNoRows) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("find idempotency key: %w", err)
	}
	r.CreatedAt = database.Time(created)
	return r, nil
}

// Save implements Keys.
func (s SQL) Save(ctx context.Context, r Record) error {
	_, err := s.Q.Exec(ctx, `INSERT INTO idempotency_keys (scope, key, request_hash, response, created_at)
		VALUES ($1, $2, $3, $4, $5)`, r.Scope, r.Key, r.RequestHash, r.Response, database.Micros(r.CreatedAt))
	if database.IsUniqueViolation(err) {
		return ErrTaken
	}
	if err != nil {
		return fmt.Errorf("save idempotency key: %w", err)
	}
	return nil
}

// Prune implements Keys: a range of the created_at index, deleted by
// primary key.
func (s SQL) Prune(ctx context.Context, before time.Time, batch int) (int64, error) {
	n, err := s.Q.Exec(ctx, `DELETE FROM idempotency_keys WHERE (scope, key) IN (
		SELECT scope, key FROM idempotency_keys WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
		database.Micros(before), batch)
	if err != nil {
		return 0, fmt.Errorf("prune idempotency keys: %w", err)
	}
	return n, nil
}

// Runner runs use cases at most once per key over a service's
// repositories R.
type Runner[R any] struct {
	// Tx runs fn in one transaction over fresh repositories.
	Tx func(ctx context.Context, fn func(r R) error) error
	// Read gives repositories outside a transaction.
	Read func() R
	// Keys picks the records' store out of the repositories.
	Keys func(r R) Keys
	// Now stamps the records.
	Now func() time.Time
}

// Prune deletes at most batch of the records made before before, oldest
// first, in one transaction, and reports how many: a service's retention
// runner's prune (retention.Retainer). A retry with a pruned key runs
// again.
func (r Runner[R]) Prune(ctx context.Context, before time.Time, batch int) (int64, error) {
	var n int64
	err := r.Tx(ctx, func(repos R) error {
		var err error
		n, err = r.Keys(repos).Prune(ctx, before, batch)
		return err
	})
	return n, err
}

// errLost marks a transaction that lost the race for its key to a
// concurrent request with the same key.
var errLost = errors.New("idempotency key taken by a concurrent request")

// Do runs op in one transaction, at most once per key: a stored response
// for the same key and body is decoded into out (a pointer) and op does not
// run; the same key with another body is refused (422). Without a key (req
// nil or its Key empty) op simply runs. The stored response is out's JSON,
// written in the same transaction as op's effects.
//
// lock, when not nil, runs first in a keyed transaction and serializes
// concurrent requests with the same key before the lookup (money movements
// pass the economy lock they take anyway). Without it the key's primary key
// serializes them: two concurrent first requests both run op, the later
// one's Save fails on the key once the earlier one committed (Postgres
// makes the insert wait for it), its transaction rolls back, and it answers
// the record the earlier one stored, read after the rollback (on Postgres
// the failed insert aborted the transaction). SQLite runs writing
// transactions one at a time, so there the later one finds the record.
func (run Runner[R]) Do(ctx context.Context, req *Request, out any, lock, op func(r R) error) error {
	keyed := req != nil && req.Key != ""
	txCtx := ctx
	if keyed {
		// The key's record is saved after op: op's last batch must not
		// commit the transaction (database.Batch.Final).
		txCtx = database.HoldCommit(ctx)
	}
	err := run.Tx(txCtx, func(r R) error {
		if !keyed {
			return op(r)
		}
		if lock != nil {
			if err := lock(r); err != nil {
				return err
			}
		}
		keys := run.Keys(r)
		prev, err := keys.Lookup(ctx, req.Scope, req.Key)
		switch {
		case err == nil:
			return replay(prev, req, out)
		case !errors.Is(err, ErrNotFound):
			return err
		}
		if err := op(r); err != nil {
			return err
		}
		resp, err := json.Marshal(out)
		if err != nil {
			return fmt.Errorf("encode idempotent response: %w", err)
		}
		err = keys.Save(ctx, Record{Scope: req.Scope, Key: req.Key, RequestHash: req.Hash, Response: string(resp), CreatedAt: run.Now()})
		if errors.Is(err, ErrTaken) {
			return fmt.Errorf("%w: %w", errLost, err)
		}
		return err
	})
	if !keyed || !errors.Is(err, errLost) {
		return err
	}
	prev, err := run.Keys(run.Read()).Lookup(ctx, req.Scope, req.Key)
	if err != nil {
		return fmt.Errorf("read the idempotency key a concurrent request stored: %w", err)
	}
	// op filled out before the rollback; decoding over it would merge maps.
	reflect.ValueOf(out).Elem().SetZero()
	return replay(prev, req, out)
}

// replay answers a stored record: its response decoded into out for the
// same body, a 422 for another.
func replay(prev Record, req *Request, out any) error {
	if prev.RequestHash != req.Hash {
		return fault.Validation(fault.Field("Idempotency-Key", "was used before with a different request body"))
	}
	if err := json.Unmarshal([]byte(prev.Response), out); err != nil {
		return fmt.Errorf("decode idempotent response: %w", err)
	}
	return nil
}

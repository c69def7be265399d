package idempotency_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// schema is the table the package documents, and a table of effects.
var schema = fstest.MapFS{"common/0001_keys.sql": {Data: []byte(`
CREATE TABLE idempotency_keys (
    scope        TEXT NOT NULL,
    key          TEXT NOT NULL,
    request_hash TEXT NOT NULL,
    response     TEXT NOT NULL,
    created_at   BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
CREATE TABLE effects (n BIGINT NOT NULL);
`)}}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestSQLKeys(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "idem", schema)
		ctx := context.Background()
		keys := idempotency.SQL{Q: db}
		_, err := keys.Lookup(ctx, "op:ada", "k")
		require.ErrorIs(t, err, idempotency.ErrNotFound)

		rec := idempotency.Record{Scope: "op:ada", Key: "k", RequestHash: "h", Response: `{"n":1}`, CreatedAt: t0}
		require.NoError(t, keys.Save(ctx, rec))
		got, err := keys.Lookup(ctx, "op:ada", "k")
		require.NoError(t, err)
		require.Equal(t, rec, got)
		require.ErrorIs(t, keys.Save(ctx, rec), idempotency.ErrTaken)

		_, err = keys.Lookup(ctx, "op:bob", "k")
		require.ErrorIs(t, err, idempotency.ErrNotFound, "scopes are separate")
	})
}

// TestSQLKeysArePrunedOldestFirst: Prune deletes at most a batch of the
// records made before its time, oldest first, and none younger.
func TestSQLKeysArePrunedOldestFirst(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "idem", schema)
		ctx := context.Background()
		keys := idempotency.SQL{Q: db}
		for i, age := range []time.Duration{72 * time.Hour, 49 * time.Hour, 48*time.Hour + time.Minute, time.Hour} {
			require.NoError(t, keys.Save(ctx, idempotency.Record{Scope: "op:ada", Key: fmt.Sprint("k", i), RequestHash: "h",
				Response: "{}", CreatedAt: t0.Add(-age)}))
		}
		n, err := keys.Prune(ctx, t0.Add(-48*time.Hour), 2)
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "a batch")
		for i, want := range []bool{false, false, true, true} {
			_, err := keys.Lookup(ctx, "op:ada", fmt.Sprint("k", i))
			require.Equal(t, want, err == nil, "k%d: the two oldest went first", i)
		}
		n, err = keys.Prune(ctx, t0.Add(-48*time.Hour), 2)
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "the last one past the cut")
		n, err = keys.Prune(ctx, t0.Add(-48*time.Hour), 2)
		require.NoError(t, err)
		require.Zero(t, n)
		_, err = keys.Lookup(ctx, "op:ada", "k3")
		require.NoError(t, err, "an hour old: kept")
	})
}

// blindKeys hides stored records from the next lookups, as a request sees
// when a concurrent one with its key commits between its lookup and its
// insert.
type blindKeys struct {
	idempotency.Keys
	blind *atomic.Int32
}

func (b blindKeys) Lookup(ctx context.Context, scope, key string) (idempotency.Record, error) {
	if b.blind.Add(-1) >= 0 {
		return idempotency.Record{}, idempotency.ErrNotFound
	}
	return b.Keys.Lookup(ctx, scope, key)
}

type result struct {
	N     int64
	Attrs map[string]string
}

func TestRunner(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, engine database.Engine) {
		db := dbtest.Open(t, engine, "idem", schema)
		ctx := context.Background()
		blind := new(atomic.Int32)
		run := idempotency.Runner[database.Querier]{
			Tx:   func(ctx context.Context, fn func(database.Querier) error) error { return db.Tx(ctx, fn) },
			Read: func() database.Querier { return db },
			Keys: func(q database.Querier) idempotency.Keys { return blindKeys{idempotency.SQL{Q: q}, blind} },
			Now:  func() time.Time { return t0 },
		}
		var ran atomic.Int64
		// op records one effect and answers how many it has recorded.
		op := func(out *result, attr string) func(database.Querier) error {
			return func(q database.Querier) error {
				n := ran.Add(1)
				if _, err := q.Exec(ctx, `INSERT INTO effects (n) VALUES ($1)`, n); err != nil {
					return err
				}
				*out = result{N: n, Attrs: map[string]string{attr: "x"}}
				return nil
			}
		}
		effects := func() int {
			var n int
			require.NoError(t, db.QueryRow(ctx, `SELECT count(*) FROM effects`).Scan(&n))
			return n
		}

		var first, again result
		key := &idempotency.Request{Scope: "op:ada", Key: "k", Hash: "h1"}
		require.NoError(t, run.Do(ctx, key, &first, nil, op(&first, "first")))
		require.NoError(t, run.Do(ctx, key, &again, nil, op(&again, "again")))
		require.Equal(t, result{N: 1, Attrs: map[string]string{"first": "x"}}, again, "the retry answers the first response")
		require.Equal(t, 1, effects())

		var other result
		err := run.Do(ctx, &idempotency.Request{Scope: "op:ada", Key: "k", Hash: "h2"}, &other, nil, op(&other, "other"))
		fe, ok := fault.As(err)
		require.True(t, ok, "want a classified error, got %v", err)
		require.Equal(t, fault.Invalid, fe.Kind)
		require.Equal(t, 1, effects(), "another body with the key does nothing")

		// The lost race: the lookup misses the record, op runs, the key's
		// primary key refuses the record, and the answer is the winner's,
		// not merged with the loser's map.
		blind.Store(1)
		var loser result
		require.NoError(t, run.Do(ctx, key, &loser, nil, op(&loser, "loser")))
		require.Equal(t, first, loser)
		require.Equal(t, 1, effects(), "the loser's effect rolled back")

		// A refused operation records no key: the retry runs.
		refused := &idempotency.Request{Scope: "op:ada", Key: "refused", Hash: "h"}
		var out result
		require.EqualError(t, run.Do(ctx, refused, &out, nil, func(database.Querier) error { return errors.New("short balance") }),
			"short balance")
		require.NoError(t, run.Do(ctx, refused, &out, nil, op(&out, "retry")))
		require.Equal(t, 2, effects())

		// lock runs before the lookup, and without a key op runs every time.
		var locks int
		lock := func(database.Querier) error { locks++; return nil }
		require.NoError(t, run.Do(ctx, key, &out, lock, op(&out, "locked")))
		require.Equal(t, 1, locks)
		require.NoError(t, run.Do(ctx, nil, &out, nil, op(&out, "a")))
		require.NoError(t, run.Do(ctx, &idempotency.Request{Scope: "op:ada"}, &out, nil, op(&out, "b")))
		require.Equal(t, 4, effects())

		// An op whose last batch is Final (database.Batch.Final): with a
		// key the record is still saved after it, in its transaction, so
		// the retry replays; without one the batch ends the transaction.
		final := func(out *result) func(database.Querier) error {
			return func(q database.Querier) error {
				n := ran.Add(1)
				b := &database.Batch{}
				b.Exec(nil, `INSERT INTO effects (n) VALUES ($1)`, n)
				b.Final()
				*out = result{N: n}
				return q.SendBatch(ctx, b)
			}
		}
		finalKey := &idempotency.Request{Scope: "op:ada", Key: "final", Hash: "h"}
		var firstFinal, retryFinal result
		require.NoError(t, run.Do(ctx, finalKey, &firstFinal, nil, final(&firstFinal)))
		require.NoError(t, run.Do(ctx, finalKey, &retryFinal, nil, final(&retryFinal)))
		require.Equal(t, firstFinal, retryFinal, "the retry answers the saved response")
		require.NoError(t, run.Do(ctx, nil, &out, nil, final(&out)))
		require.Equal(t, 6, effects())
	})
}

func TestFromContext(t *testing.T) {
	t.Parallel()
	body := func(v string) *structpb.Struct {
		return &structpb.Struct{Fields: map[string]*structpb.Value{"v": structpb.NewStringValue(v)}}
	}
	withKey := func(k string) context.Context {
		return metadata.NewIncomingContext(context.Background(), metadata.Pairs(rpcmeta.IdempotencyKeyKey, k))
	}

	req, err := idempotency.FromContext(context.Background(), "op", "ada", body("a"))
	require.NoError(t, err)
	require.Nil(t, req, "no key, no request")

	a, err := idempotency.FromContext(withKey(" k1 "), "op", "ada", body("a"))
	require.NoError(t, err)
	require.Equal(t, "op:ada", a.Scope)
	require.Equal(t, "k1", a.Key)
	require.Len(t, a.Hash, 64)
	same, err := idempotency.FromContext(withKey("k1"), "op", "ada", body("a"))
	require.NoError(t, err)
	require.Equal(t, a.Hash, same.Hash, "the same body hashes the same")
	b, err := idempotency.FromContext(withKey("k1"), "op", "ada", body("b"))
	require.NoError(t, err)
	require.NotEqual(t, a.Hash, b.Hash)

	_, err = idempotency.FromContext(withKey(strings.Repeat("k", idempotency.MaxKey+1)), "op", "ada", body("a"))
	fe, ok := fault.As(err)
	require.True(t, ok)
	require.Equal(t, []fault.FieldError{{Field: "Idempotency-Key", Message: "must be at most 255 characters"}}, fe.Fields)
	ok200, err := idempotency.FromContext(withKey(strings.Repeat("k", idempotency.MaxKey)), "op", "ada", body("a"))
	require.NoError(t, err)
	require.Len(t, ok200.Key, idempotency.MaxKey)
}

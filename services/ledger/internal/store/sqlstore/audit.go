package sqlstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Audit implements store.Audit over a querier.
type Audit struct {
	q database.Querier
}

var _ store.Audit = Audit{}

// NewAudit returns the audit repository over q.
func NewAudit(q database.Querier) Audit { return Audit{q: q} }

// attrsJSON is an entry's attributes as stored: a JSON object of strings.
func attrsJSON(attrs map[string]string) (string, error) {
	if attrs == nil {
		attrs = map[string]string{}
	}
	js, err := json.Marshal(attrs)
	if err != nil {
		return "", fmt.Errorf("encode audit attrs: %w", err)
	}
	return string(js), nil
}

// enqueueStatement is the INSERT that queues audit entries for the
// sequencer; a movement sends it in its own batch.
func enqueueStatement(qs []store.Queued) (string, []any, error) {
	values, args := "", make([]any, 0, 8*len(qs))
	for i, q := range qs {
		js, err := attrsJSON(q.Entry.Attrs)
		if err != nil {
			return "", nil, err
		}
		if i > 0 {
			values += ", "
		}
		values += "(" + database.Placeholders(len(args)+1, 8) + ")"
		args = append(args, q.ID, database.NullString(q.EntryID), q.Entry.Kind, database.Micros(q.Entry.At), q.Entry.Actor,
			q.Entry.Subject, q.Entry.Amount, js)
	}
	return `INSERT INTO audit_queue (id, entry_id, kind, at, actor, subject, amount, attrs) VALUES ` + values, args, nil
}

// Append implements store.Audit. The entries' fields are stored as columns
// (for queries and reading) beside the canonical encoding that was hashed;
// the verifier checks that the two agree.
func (a Audit) Append(ctx context.Context, recs []audit.Record, dequeue []string, tree map[int64]audit.Hash) error {
	b := &database.Batch{}
	// Rows per statement: 11 parameters a row stays under SQLite's 32766.
	const chunk = 500
	for from := 0; from < len(recs); from += chunk {
		part := recs[from:min(from+chunk, len(recs))]
		values, args := "", make([]any, 0, 11*len(part))
		for i, r := range part {
			js, err := attrsJSON(r.Entry.Attrs)
			if err != nil {
				return err
			}
			if i > 0 {
				values += ", "
			}
			values += "(" + database.Placeholders(len(args)+1, 11) + ")"
			args = append(args, r.Entry.Seq, r.Entry.Kind, database.Micros(r.Entry.At), r.Entry.Actor, r.Entry.Subject, r.Entry.Amount,
				js, hex.EncodeToString(r.Encoded), r.PrevHash.String(), r.Hash.String(), database.NullString(r.EntryID))
		}
		b.Exec(nil, `INSERT INTO audit_entries (seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash, entry_id)
			VALUES `+values, args...)
	}
	for from := 0; from < len(dequeue); from += chunk {
		part := dequeue[from:min(from+chunk, len(dequeue))]
		args := make([]any, len(part))
		for i, id := range part {
			args[i] = id
		}
		b.Exec(nil, `DELETE FROM audit_queue WHERE id IN (`+database.Placeholders(1, len(part))+`)`, args...)
	}
	idx := slices.Sorted(maps.Keys(tree))
	for from := 0; from < len(idx); from += chunk {
		part := idx[from:min(from+chunk, len(idx))]
		values, args := "", make([]any, 0, 2*len(part))
		for i, x := range part {
			if i > 0 {
				values += ", "
			}
			values += "(" + database.Placeholders(len(args)+1, 2) + ")"
			args = append(args, x, tree[x].String())
		}
		b.Exec(nil, `INSERT INTO audit_tree (idx, hash) VALUES `+values, args...)
	}
	err := a.q.SendBatch(ctx, b)
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("append audit entries: %w", store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("append audit entries: %w", err)
	}
	return nil
}

// Enqueue implements store.Audit.
func (a Audit) Enqueue(ctx context.Context, qs []store.Queued) error {
	if len(qs) == 0 {
		return nil
	}
	query, args, err := enqueueStatement(qs)
	if err != nil {
		return err
	}
	if _, err := a.q.Exec(ctx, query, args...); err != nil {
		return fmt.Errorf("queue audit entries: %w", err)
	}
	return nil
}

// Queue implements store.Audit.
func (a Audit) Queue(ctx context.Context, limit int) ([]store.Queued, error) {
	rows, err := a.q.Query(ctx, `SELECT id, COALESCE(entry_id, ''), kind, at, actor, subject, amount, attrs FROM audit_queue
		ORDER BY at, id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("read the audit queue: %w", err)
	}
	defer rows.Close()
	var out []store.Queued
	for rows.Next() {
		var (
			q     store.Queued
			at    int64
			attrs string
		)
		if err := rows.Scan(&q.ID, &q.EntryID, &q.Entry.Kind, &at, &q.Entry.Actor, &q.Entry.Subject, &q.Entry.Amount, &attrs); err != nil {
			return nil, fmt.Errorf("read the audit queue: %w", err)
		}
		q.Entry.At = database.Time(at)
		if err := json.Unmarshal([]byte(attrs), &q.Entry.Attrs); err != nil {
			return nil, fmt.Errorf("queued audit entry %s: attrs: %w", q.ID, err)
		}
		if len(q.Entry.Attrs) == 0 {
			q.Entry.Attrs = nil
		}
		out = append(out, q)
	}
	return out, rows.Err()
}

// Backlog implements store.Audit.
func (a Audit) Backlog(ctx context.Context) (int64, time.Time, error) {
	var (
		n      int64
		oldest *int64
	)
	if err := a.q.QueryRow(ctx, `SELECT COUNT(*), MIN(at) FROM audit_queue`).Scan(&n, &oldest); err != nil {
		return 0, time.Time{}, fmt.Errorf("measure the audit queue: %w", err)
	}
	if oldest == nil {
		return n, time.Time{}, nil
	}
	return n, database.Time(*oldest), nil
}

// QueueTail implements store.Audit: two reads of the (at, id) index, the
// count stopped at limit and the newest entry at its end.
func (a Audit) QueueTail(ctx context.Context, limit int) (int, time.Time, error) {
	var (
		n      int
		newest *int64
	)
	if err := a.q.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM (SELECT 1 FROM audit_queue LIMIT $1) c),
		(SELECT at FROM audit_queue ORDER BY at DESC, id DESC LIMIT 1)`, limit).Scan(&n, &newest); err != nil {
		return 0, time.Time{}, fmt.Errorf("measure the audit queue's tail: %w", err)
	}
	if newest == nil {
		return n, time.Time{}, nil
	}
	return n, database.Time(*newest), nil
}

// TreeHashes implements store.Audit.
func (a Audit) TreeHashes(ctx context.Context, idx []int64) ([]audit.Hash, error) {
	if len(idx) == 0 {
		return nil, nil
	}
	args := make([]any, len(idx))
	for i, x := range idx {
		args[i] = x
	}
	rows, err := a.q.Query(ctx, `SELECT idx, hash FROM audit_tree WHERE idx IN (`+database.Placeholders(1, len(idx))+`)`, args...)
	if err != nil {
		return nil, fmt.Errorf("read the audit tree: %w", err)
	}
	defer rows.Close()
	found := make(map[int64]audit.Hash, len(idx))
	for rows.Next() {
		var (
			x int64
			h string
		)
		if err := rows.Scan(&x, &h); err != nil {
			return nil, fmt.Errorf("read the audit tree: %w", err)
		}
		hash, ok := audit.ParseHash(h)
		if !ok {
			return nil, fmt.Errorf("audit tree hash %d is not hex SHA-256: %w", x, store.ErrMalformed)
		}
		found[x] = hash
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the audit tree: %w", err)
	}
	out := make([]audit.Hash, len(idx))
	for i, x := range idx {
		h, ok := found[x]
		if !ok {
			return nil, fmt.Errorf("audit tree hash %d: %w", x, store.ErrNotFound)
		}
		out[i] = h
	}
	return out, nil
}

// Checkpoint implements store.Audit.
func (a Audit) Checkpoint(ctx context.Context, name string) (store.Checkpoint, error) {
	var (
		c           store.Checkpoint
		root, chain string
		at          int64
	)
	err := a.q.QueryRow(ctx, `SELECT tree_size, root, chain, note, at FROM audit_checkpoints WHERE name = $1`, name).
		Scan(&c.Size, &root, &chain, &c.Note, &at)
	if errors.Is(err, database.ErrNoRows) {
		return store.Checkpoint{}, store.ErrNotFound
	}
	if err != nil {
		return store.Checkpoint{}, fmt.Errorf("read the %s audit checkpoint: %w", name, err)
	}
	var ok bool
	if c.Root, ok = audit.ParseHash(root); !ok {
		return store.Checkpoint{}, fmt.Errorf("the %s audit checkpoint's root is not hex SHA-256", name)
	}
	if c.Chain, err = hashOrGenesis(chain); err != nil {
		return store.Checkpoint{}, err
	}
	c.At = database.Time(at)
	return c, nil
}

// SaveCheckpoint implements store.Audit.
func (a Audit) SaveCheckpoint(ctx context.Context, name string, c store.Checkpoint) error {
	_, err := a.q.Exec(ctx, `INSERT INTO audit_checkpoints (name, tree_size, root, chain, note, at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (name) DO UPDATE SET tree_size = excluded.tree_size, root = excluded.root, chain = excluded.chain,
			note = excluded.note, at = excluded.at`,
		name, c.Size, c.Root.String(), hashText(c.Chain), c.Note, database.Micros(c.At))
	if err != nil {
		return fmt.Errorf("save the %s audit checkpoint: %w", name, err)
	}
	return nil
}

const auditColumns = `seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash, COALESCE(entry_id, '')`

// Range implements store.Audit.
func (a Audit) Range(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	return a.query(ctx, `SELECT `+auditColumns+` FROM audit_entries WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
}

// namedColumns are the handles of an entry's actor and subject, read in
// the statement that reads the entry (NULL for an id no registered
// contributor has, and for the words that are no contributor's id).
const namedColumns = `(SELECT handle FROM contributors WHERE contributors.id = audit_entries.actor),
	(SELECT handle FROM contributors WHERE contributors.id = audit_entries.subject)`

// Recent implements store.Audit.
func (a Audit) Recent(ctx context.Context, before int64, limit, offset int) ([]store.ListedRecord, error) {
	if before <= 0 {
		before = math.MaxInt64
	}
	return a.records(ctx, true, `SELECT `+auditColumns+`, `+namedColumns+`
		FROM audit_entries WHERE seq < $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`, before, limit, offset)
}

// Repairs implements store.Audit. The literal kind matches the partial
// index audit_entries_repairs.
func (a Audit) Repairs(ctx context.Context, upTo int64) ([]audit.Record, error) {
	return a.query(ctx, `SELECT `+auditColumns+` FROM audit_entries WHERE kind = 'repair' AND seq <= $1 ORDER BY seq`, upTo)
}

// WitnessState implements store.Audit.
func (a Audit) WitnessState(ctx context.Context, witness string) (store.WitnessState, error) {
	var (
		s  = store.WitnessState{Witness: witness}
		at int64
	)
	err := a.q.QueryRow(ctx, `SELECT tree_size, note, cosignature, at FROM audit_witnesses WHERE witness = $1`, witness).
		Scan(&s.Size, &s.Note, &s.Cosignature, &at)
	if errors.Is(err, database.ErrNoRows) {
		return store.WitnessState{}, store.ErrNotFound
	}
	if err != nil {
		return store.WitnessState{}, fmt.Errorf("read witness %s: %w", witness, err)
	}
	s.At = database.Time(at)
	return s, nil
}

// SaveWitnessState implements store.Audit.
func (a Audit) SaveWitnessState(ctx context.Context, s store.WitnessState) error {
	_, err := a.q.Exec(ctx, `INSERT INTO audit_witnesses (witness, tree_size, note, cosignature, at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (witness) DO UPDATE SET tree_size = excluded.tree_size, note = excluded.note, cosignature = excluded.cosignature,
			at = excluded.at`, s.Witness, s.Size, s.Note, s.Cosignature, database.Micros(s.At))
	if err != nil {
		return fmt.Errorf("save witness %s: %w", s.Witness, err)
	}
	return nil
}

// Corrections implements store.Audit. The literal kinds match the
// partial index audit_entries_corrections.
func (a Audit) Corrections(ctx context.Context) ([]audit.Record, error) {
	return a.query(ctx, `SELECT `+auditColumns+` FROM audit_entries WHERE kind IN ('correction', 'mended') ORDER BY seq`)
}

// KeyChanges implements store.Audit. The literal kind matches the
// partial index audit_entries_key_changes.
func (a Audit) KeyChanges(ctx context.Context) ([]audit.Record, error) {
	return a.query(ctx, `SELECT `+auditColumns+` FROM audit_entries WHERE kind = 'key_changed' ORDER BY seq`)
}

func (a Audit) query(ctx context.Context, query string, args ...any) ([]audit.Record, error) {
	listed, err := a.records(ctx, false, query, args...)
	if err != nil {
		return nil, err
	}
	out := make([]audit.Record, len(listed))
	for i, l := range listed {
		out[i] = l.Record
	}
	return out, nil
}

// records reads the records query selects (auditColumns, then
// namedColumns when named).
func (a Audit) records(ctx context.Context, named bool, query string, args ...any) ([]store.ListedRecord, error) {
	rows, err := a.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read audit entries: %w", err)
	}
	defer rows.Close()
	out := []store.ListedRecord{}
	for rows.Next() {
		var (
			l                     store.ListedRecord
			r                     = &l.Record
			at                    int64
			attrs, enc, prev, hsh string
			actor, subject        *string
		)
		dest := []any{&r.Entry.Seq, &r.Entry.Kind, &at, &r.Entry.Actor, &r.Entry.Subject, &r.Entry.Amount,
			&attrs, &enc, &prev, &hsh, &r.EntryID}
		if named {
			dest = append(dest, &actor, &subject)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read audit entries: %w", err)
		}
		if actor != nil {
			l.ActorHandle = *actor
		}
		if subject != nil {
			l.SubjectHandle = *subject
		}
		r.Entry.At = database.Time(at)
		// A row whose stored text does not parse keeps zero values: the
		// verifier then reports it as divergent instead of the read failing,
		// so a damaged row is found and named, never hidden by an error.
		if err := json.Unmarshal([]byte(attrs), &r.Entry.Attrs); err != nil || len(r.Entry.Attrs) == 0 {
			r.Entry.Attrs = nil
		}
		r.Encoded, _ = hex.DecodeString(enc)
		r.PrevHash, _ = audit.ParseHash(prev)
		r.Hash, _ = audit.ParseHash(hsh)
		out = append(out, l)
	}
	return out, rows.Err()
}

// Counts implements store.Audit.
func (a Audit) Counts(ctx context.Context) (map[string]int, error) {
	return count(ctx, a.q, "audit_entries", "audit_queue", "audit_tree")
}

package sqlstore

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"

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

// Append implements store.Audit. The entry's fields are stored as columns
// (for queries and reading) beside the canonical encoding that was hashed;
// the verifier checks that the two agree.
func (a Audit) Append(ctx context.Context, r audit.Record) error {
	attrs := r.Entry.Attrs
	if attrs == nil {
		attrs = map[string]string{}
	}
	js, err := json.Marshal(attrs)
	if err != nil {
		return fmt.Errorf("encode audit attrs: %w", err)
	}
	_, err = a.q.Exec(ctx, `INSERT INTO audit_entries (seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		r.Entry.Seq, r.Entry.Kind, database.Micros(r.Entry.At), r.Entry.Actor, r.Entry.Subject, r.Entry.Amount,
		string(js), hex.EncodeToString(r.Encoded), r.PrevHash.String(), r.Hash.String())
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("audit entry %d: %w", r.Entry.Seq, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("append audit entry %d: %w", r.Entry.Seq, err)
	}
	return nil
}

const auditColumns = `seq, kind, at, actor, subject, amount, attrs, encoded, prev_hash, hash`

// Range implements store.Audit.
func (a Audit) Range(ctx context.Context, after int64, limit int) ([]audit.Record, error) {
	return a.query(ctx, `SELECT `+auditColumns+` FROM audit_entries WHERE seq > $1 ORDER BY seq LIMIT $2`, after, limit)
}

// Recent implements store.Audit.
func (a Audit) Recent(ctx context.Context, limit, offset int) ([]audit.Record, error) {
	return a.query(ctx, `SELECT `+auditColumns+` FROM audit_entries ORDER BY seq DESC LIMIT $1 OFFSET $2`, limit, offset)
}

// Repairs implements store.Audit. The literal kind matches the partial
// index audit_entries_repairs.
func (a Audit) Repairs(ctx context.Context, upTo int64) ([]audit.Record, error) {
	return a.query(ctx, `SELECT `+auditColumns+` FROM audit_entries WHERE kind = 'repair' AND seq <= $1 ORDER BY seq`, upTo)
}

func (a Audit) query(ctx context.Context, query string, args ...any) ([]audit.Record, error) {
	rows, err := a.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("read audit entries: %w", err)
	}
	defer rows.Close()
	out := []audit.Record{}
	for rows.Next() {
		var (
			r                     audit.Record
			at                    int64
			attrs, enc, prev, hsh string
		)
		if err := rows.Scan(&r.Entry.Seq, &r.Entry.Kind, &at, &r.Entry.Actor, &r.Entry.Subject, &r.Entry.Amount,
			&attrs, &enc, &prev, &hsh); err != nil {
			return nil, fmt.Errorf("read audit entries: %w", err)
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
		out = append(out, r)
	}
	return out, rows.Err()
}

// Counts implements store.Audit.
func (a Audit) Counts(ctx context.Context) (map[string]int, error) {
	return count(ctx, a.q, "audit_entries")
}

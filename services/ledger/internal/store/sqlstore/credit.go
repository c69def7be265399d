package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Credit implements store.Credit over a querier: the pool for reads, the
// use case's transaction for everything that writes.
type Credit struct {
	q database.Querier
}

var _ store.Credit = Credit{}

// NewCredit returns the credit repository over q.
func NewCredit(q database.Querier) Credit { return Credit{q: q} }

const economyColumns = `treasury_usd, outstanding_cc, mode, mode_reason, mode_actor, mode_since,
	audit_seq, audit_head, updated_at`

func (c Credit) readEconomy(ctx context.Context, lock bool) (store.Economy, error) {
	query := `SELECT ` + economyColumns + ` FROM economy WHERE id = 1`
	if lock {
		query += database.ForUpdate(c.q.Engine())
	}
	var (
		e              store.Economy
		since, updated int64
		head           string
	)
	err := c.q.QueryRow(ctx, query).Scan(&e.TreasuryUSD, &e.OutstandingCC, &e.Mode, &e.ModeReason, &e.ModeActor,
		&since, &e.AuditSeq, &head, &updated)
	if err != nil {
		return store.Economy{}, fmt.Errorf("read economy: %w", err)
	}
	e.ModeSince, e.UpdatedAt = timeOrZero(since), timeOrZero(updated)
	if e.AuditHead, err = hashOrGenesis(head); err != nil {
		return store.Economy{}, err
	}
	return e, nil
}

func timeOrZero(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return database.Time(us)
}

func microsOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return database.Micros(t)
}

func hashOrGenesis(s string) (audit.Hash, error) {
	if s == "" {
		return audit.Genesis, nil
	}
	h, ok := audit.ParseHash(s)
	if !ok {
		return audit.Hash{}, fmt.Errorf("stored hash %q is not hex SHA-256", s)
	}
	return h, nil
}

func hashText(h audit.Hash) string {
	if h == audit.Genesis {
		return ""
	}
	return h.String()
}

// LockEconomy implements store.Credit.
func (c Credit) LockEconomy(ctx context.Context) (store.Economy, error) {
	return c.readEconomy(ctx, true)
}

// Economy implements store.Credit.
func (c Credit) Economy(ctx context.Context) (store.Economy, error) { return c.readEconomy(ctx, false) }

// SaveEconomy implements store.Credit.
func (c Credit) SaveEconomy(ctx context.Context, e store.Economy) error {
	_, err := c.q.Exec(ctx, `UPDATE economy SET treasury_usd = $1, outstanding_cc = $2, mode = $3, mode_reason = $4,
		mode_actor = $5, mode_since = $6, audit_seq = $7, audit_head = $8, updated_at = $9 WHERE id = 1`,
		int64(e.TreasuryUSD), int64(e.OutstandingCC), e.Mode, e.ModeReason, e.ModeActor, microsOrZero(e.ModeSince),
		e.AuditSeq, hashText(e.AuditHead), microsOrZero(e.UpdatedAt))
	if err != nil {
		return fmt.Errorf("save economy: %w", err)
	}
	return nil
}

// Advisory locks are one namespace for the whole Postgres database, which
// several schemas (several Foundry deployments, parallel test runs) may
// share: each lock is the two-key form, a class for what it guards and the
// hash of the schema it guards it in, so one deployment's freeze never
// waits for another's movements.
const (
	// modeLockClass is the lock a movement holds shared and a change of
	// the economy's mode exclusively (LockModes). bench/bare takes the
	// same lock (its modeLockClass; keep equal).
	modeLockClass int32 = 0x466f756d
	// idempotencyLockClass is the lock of one idempotency key (LockKey).
	idempotencyLockClass int32 = 0x466f756e
)

// modeLockSQL takes the mode lock of the querier's schema; fn is
// pg_advisory_xact_lock or pg_advisory_xact_lock_shared.
func modeLockSQL(fn string) string {
	return `SELECT ` + fn + `($1, hashtext(current_schema()))::text`
}

// LockModes implements store.Credit. On SQLite a writing transaction holds
// the database's one write lock from its start (_txlock=immediate), which
// already orders it with every mode change, so there is nothing to take.
func (c Credit) LockModes(ctx context.Context, exclusive bool) error {
	if c.q.Engine() != database.Postgres {
		return nil
	}
	fn := "pg_advisory_xact_lock_shared"
	if exclusive {
		fn = "pg_advisory_xact_lock"
	}
	if _, err := c.q.Exec(ctx, modeLockSQL(fn), modeLockClass); err != nil {
		return fmt.Errorf("lock the economy's mode: %w", err)
	}
	return nil
}

// LockKey implements store.Credit: a transaction-scoped advisory lock on
// the key's hash (Postgres); SQLite's write lock orders the requests
// already.
func (c Credit) LockKey(ctx context.Context, scope, key string) error {
	if c.q.Engine() != database.Postgres {
		return nil
	}
	if _, err := c.q.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext(current_schema() || $2))::text`, idempotencyLockClass,
		"\n"+scope+"\n"+key); err != nil {
		return fmt.Errorf("lock idempotency key: %w", err)
	}
	return nil
}

// Apply implements store.Credit, in one batch (one round trip on
// Postgres): the mode lock and the mode when asked, then each account in
// descending name order (staked before cooling before available, issuance
// before available), so two movements touching the same accounts lock them
// in the same order and never deadlock: Unstake's lock of the staked
// account comes first in that order too, and so do the locks that the
// statements after a refused line still take on Postgres. Then the entry,
// its lines and its audit entries. A line taking CC out is an UPDATE whose
// WHERE clause refuses a balance below zero (no row: ErrInsufficient;
// nothing is read first), a line putting CC in creates the account on
// first use; both return the balance after. A refused line stops the
// batch (on Postgres the statements after it have been sent and may fail
// too), and the caller's transaction rolls back on the error.
func (c Credit) Apply(ctx context.Context, m store.Movement) (store.Applied, error) {
	e := m.Journal
	if err := e.Entry.Validate(); err != nil {
		return store.Applied{}, err
	}
	out := store.Applied{Balances: make(map[string]money.Micros, len(e.Entry.Lines)), At: e.CreatedAt}
	b := &database.Batch{}
	var modeSince int64
	if m.ReadMode {
		if c.q.Engine() == database.Postgres {
			b.QueryRow(func(row database.Row) error { return row.Scan(new(string)) },
				modeLockSQL("pg_advisory_xact_lock_shared"), modeLockClass)
		}
		b.QueryRow(func(row database.Row) error { return row.Scan(&out.Mode, &modeSince) }, `SELECT mode, mode_since FROM economy WHERE id = 1`)
	}
	lines := append([]credit.Line(nil), e.Entry.Lines...)
	sort.Slice(lines, func(i, j int) bool { return lines[i].Account.Name() > lines[j].Account.Name() })
	for _, l := range lines {
		a := l.Account
		name := a.Name()
		scan := func(row database.Row) error {
			var bal int64
			err := row.Scan(&bal)
			if errors.Is(err, database.ErrNoRows) {
				// Stops the batch here: its lines would name an account
				// that may not exist.
				return fmt.Errorf("%s on %s: %w", l.Delta, name, store.ErrInsufficient)
			}
			if err != nil {
				return fmt.Errorf("move %s on %s: %w", l.Delta, name, err)
			}
			out.Balances[name] = money.Micros(bal)
			return nil
		}
		if l.Delta < 0 && a.Bucket != credit.BucketIssuance {
			b.QueryRow(scan, `UPDATE cc_accounts SET balance = balance + $2 WHERE account = $1 AND balance + $2 >= 0 RETURNING balance`,
				name, int64(l.Delta))
			continue
		}
		b.QueryRow(scan, `INSERT INTO cc_accounts (account, bucket, contributor_id, idea_id, balance) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (account) DO UPDATE SET balance = cc_accounts.balance + excluded.balance RETURNING balance`,
			name, a.Bucket, database.NullString(a.Contributor), database.NullString(a.Idea), int64(l.Delta))
	}
	b.Exec(nil, `INSERT INTO cc_entries (id, kind, contributor_id, idea_id, amount, audit_seq, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		e.ID, string(e.Entry.Kind), database.NullString(e.ContributorID), database.NullString(e.IdeaID),
		int64(e.Amount), e.AuditSeq, database.Micros(e.CreatedAt))
	values, args := "", make([]any, 0, 6*len(lines))
	for i, l := range lines {
		if i > 0 {
			values += ", "
		}
		values += "(" + database.Placeholders(len(args)+1, 6) + ")"
		a := l.Account
		args = append(args, e.ID, a.Name(), a.Bucket, database.NullString(a.Contributor), database.NullString(a.Idea), int64(l.Delta))
	}
	b.Exec(nil, `INSERT INTO cc_lines (entry_id, account, bucket, contributor_id, idea_id, delta) VALUES `+values, args...)
	if len(m.Audit) > 0 {
		query, args, err := enqueueStatement(m.Audit)
		if err != nil {
			return store.Applied{}, err
		}
		b.Exec(nil, query, args...)
	}
	err := c.q.SendBatch(ctx, b)
	if errors.Is(err, store.ErrInsufficient) {
		// The mode read is returned too: the caller refuses a frozen
		// economy before a short balance.
		return store.Applied{Mode: out.Mode}, err
	}
	if database.IsUniqueViolation(err) && e.AuditSeq > 0 {
		// The ids are fresh, so a unique violation is the index on a
		// legacy audit_seq (migration 0011).
		return store.Applied{}, fmt.Errorf("record %s entry at audit seq %d: %w", e.Entry.Kind, e.AuditSeq, store.ErrAuditSeqTaken)
	}
	if err != nil {
		return store.Applied{}, fmt.Errorf("record %s entry: %w", e.Entry.Kind, err)
	}
	if m.ReadMode && modeSince >= database.Micros(e.CreatedAt) {
		// The mode changed after the movement's time was taken and before
		// its batch got the mode lock (a freeze and its unfreeze while it
		// waited): recorded at that time, a movement made after the
		// unfreeze would read as made inside the frozen window. It is
		// stamped just after the change instead, in a second round trip
		// that only such a movement pays.
		at := modeSince + 1
		fix := &database.Batch{}
		fix.Exec(nil, `UPDATE cc_entries SET created_at = $2 WHERE id = $1`, e.ID, at)
		fix.Exec(nil, `UPDATE audit_queue SET at = $2 WHERE entry_id = $1`, e.ID, at)
		if err := c.q.SendBatch(ctx, fix); err != nil {
			return store.Applied{}, fmt.Errorf("stamp %s entry after the mode change: %w", e.Entry.Kind, err)
		}
		out.At = database.Time(at)
	}
	return out, nil
}

// Balance implements store.Credit.
func (c Credit) Balance(ctx context.Context, a credit.Account) (money.Micros, error) {
	var b int64
	err := c.q.QueryRow(ctx, `SELECT balance FROM cc_accounts WHERE account = $1`, a.Name()).Scan(&b)
	if errors.Is(err, database.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read the balance of %s: %w", a.Name(), err)
	}
	return money.Micros(b), nil
}

// LockAccount implements store.Credit.
func (c Credit) LockAccount(ctx context.Context, a credit.Account) (bool, error) {
	query := `SELECT 1 FROM cc_accounts WHERE account = $1` + database.ForUpdate(c.q.Engine())
	var one int
	err := c.q.QueryRow(ctx, query, a.Name()).Scan(&one)
	if errors.Is(err, database.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock account %s: %w", a.Name(), err)
	}
	return true, nil
}

// Balances implements store.Credit.
func (c Credit) Balances(ctx context.Context, contributorID string) (store.Balances, error) {
	rows, err := c.q.Query(ctx, `SELECT bucket, COALESCE(SUM(balance), 0) FROM cc_accounts
		WHERE contributor_id = $1 GROUP BY bucket`, contributorID)
	if err != nil {
		return store.Balances{}, fmt.Errorf("read balances of %s: %w", contributorID, err)
	}
	defer rows.Close()
	var b store.Balances
	for rows.Next() {
		var (
			bucket string
			sum    int64
		)
		if err := rows.Scan(&bucket, &sum); err != nil {
			return store.Balances{}, fmt.Errorf("read balances of %s: %w", contributorID, err)
		}
		switch bucket {
		case credit.BucketAvailable:
			b.Available = money.Micros(sum)
		case credit.BucketStaked:
			b.Staked = money.Micros(sum)
		case credit.BucketCooling:
			b.Cooling = money.Micros(sum)
		}
	}
	return b, rows.Err()
}

// Positions implements store.Credit in one statement: the count, and the
// page LEFT JOINed to it so that a page past the end (or a contributor
// without a position) still answers one row, with the count and NULL
// position columns. A position's since is worked out for the page's rows
// only.
func (c Credit) Positions(ctx context.Context, contributorID string, limit, offset int) ([]store.Position, int, error) {
	rows, err := c.q.Query(ctx, `SELECT t.n, p.idea_id, p.balance, p.since, COALESCE(r.earned_cc, 0), COALESCE(r.realized_cc, 0)
		FROM (SELECT COUNT(*) AS n FROM cc_accounts WHERE contributor_id = $1 AND bucket = 'staked' AND balance > 0) t
		LEFT JOIN (SELECT a.idea_id, a.balance,
				(SELECT MIN(e.created_at) FROM cc_lines l JOIN cc_entries e ON e.id = l.entry_id WHERE l.account = a.account) AS since
			FROM cc_accounts a
			WHERE a.contributor_id = $1 AND a.bucket = 'staked' AND a.balance > 0
			ORDER BY a.balance DESC, a.idea_id LIMIT $2 OFFSET $3) p ON TRUE
		LEFT JOIN cc_attributions r ON r.contributor_id = $1 AND r.idea_id = p.idea_id
		ORDER BY p.balance DESC, p.idea_id`, contributorID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("read positions of %s: %w", contributorID, err)
	}
	defer rows.Close()
	out := []store.Position{}
	total := 0
	for rows.Next() {
		var (
			idea             *string
			balance, since   *int64
			earned, realized int64
		)
		if err := rows.Scan(&total, &idea, &balance, &since, &earned, &realized); err != nil {
			return nil, 0, fmt.Errorf("read positions of %s: %w", contributorID, err)
		}
		if idea == nil {
			continue // an empty page
		}
		p := store.Position{IdeaID: *idea, Amount: money.Micros(*balance), Earned: money.Micros(earned), Realized: money.Micros(realized)}
		if since != nil {
			p.Since = database.Time(*since)
		}
		out = append(out, p)
	}
	return out, total, rows.Err()
}

// IdeaStaked implements store.Credit.
func (c Credit) IdeaStaked(ctx context.Context, ideaID string) (money.Micros, int, error) {
	var (
		sum int64
		n   int
	)
	err := c.q.QueryRow(ctx, `SELECT COALESCE(SUM(balance), 0), COUNT(*) FROM cc_accounts
		WHERE idea_id = $1 AND bucket = 'staked' AND balance > 0`, ideaID).Scan(&sum, &n)
	if err != nil {
		return 0, 0, fmt.Errorf("read stakes on %s: %w", ideaID, err)
	}
	return money.Micros(sum), n, nil
}

// History implements store.Credit.
func (c Credit) History(ctx context.Context, contributorID string, limit, offset int) ([]store.JournalEntry, int, error) {
	var total int
	if err := c.q.QueryRow(ctx, `SELECT COUNT(*) FROM cc_entries WHERE contributor_id = $1`, contributorID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count the history of %s: %w", contributorID, err)
	}
	// Newest first by time, and within one microsecond by id, which the
	// ledger makes time-ordered (UUIDv7) for this: the order of the index
	// cc_entries_contributor, so a page costs the same however long the
	// history. The audit seq shown is the sequenced entry's that names the
	// journal entry (0 while it waits in the queue). Each entry's lines
	// come joined to it, a row a line, in the same statement: read per
	// entry, a page of 50 was 51 round trips.
	rows, err := c.q.Query(ctx, `SELECT e.id, e.kind, COALESCE(e.idea_id, ''), e.amount, COALESCE(a.seq, e.audit_seq), e.created_at,
			l.bucket, COALESCE(l.contributor_id, ''), COALESCE(l.idea_id, ''), l.delta
		FROM (SELECT id, kind, idea_id, amount, audit_seq, created_at FROM cc_entries
			WHERE contributor_id = $1 ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3) e
		LEFT JOIN audit_entries a ON a.entry_id = e.id
		LEFT JOIN cc_lines l ON l.entry_id = e.id
		ORDER BY e.created_at DESC, e.id DESC, l.account`,
		contributorID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("read history of %s: %w", contributorID, err)
	}
	defer rows.Close()
	out := []store.JournalEntry{}
	for rows.Next() {
		var (
			e                           store.JournalEntry
			kind                        string
			created                     int64
			bucket, lineOwner, lineIdea *string
			delta                       *int64
		)
		if err := rows.Scan(&e.ID, &kind, &e.IdeaID, &e.Amount, &e.AuditSeq, &created,
			&bucket, &lineOwner, &lineIdea, &delta); err != nil {
			return nil, 0, fmt.Errorf("read history of %s: %w", contributorID, err)
		}
		if n := len(out); n == 0 || out[n-1].ID != e.ID {
			e.ContributorID, e.Entry.Kind, e.CreatedAt = contributorID, credit.Kind(kind), database.Time(created)
			out = append(out, e)
		}
		if delta != nil {
			last := &out[len(out)-1]
			last.Entry.Lines = append(last.Entry.Lines, credit.Line{
				Account: credit.Account{Bucket: *bucket, Contributor: *lineOwner, Idea: *lineIdea}, Delta: money.Micros(*delta)})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// JournalMismatches implements store.Credit. An account is mismatched when
// its cached balance differs from the sum of its lines, or when a line
// names another bucket, contributor or idea than the account does (the
// balance would then be shown to the wrong contributor). One pass over the
// lines computes both.
func (c Credit) JournalMismatches(ctx context.Context) ([]string, error) {
	rows, err := c.q.Query(ctx, `SELECT a.account FROM cc_accounts a
		LEFT JOIN (SELECT account, SUM(delta) AS total,
				MIN(bucket) AS bucket_lo, MAX(bucket) AS bucket_hi,
				MIN(COALESCE(contributor_id, '')) AS contributor_lo, MAX(COALESCE(contributor_id, '')) AS contributor_hi,
				MIN(COALESCE(idea_id, '')) AS idea_lo, MAX(COALESCE(idea_id, '')) AS idea_hi
			FROM cc_lines GROUP BY account) j ON j.account = a.account
		WHERE a.balance <> COALESCE(j.total, 0)
			OR (j.account IS NOT NULL AND NOT (
				j.bucket_lo = a.bucket AND j.bucket_hi = a.bucket
				AND j.contributor_lo = COALESCE(a.contributor_id, '') AND j.contributor_hi = COALESCE(a.contributor_id, '')
				AND j.idea_lo = COALESCE(a.idea_id, '') AND j.idea_hi = COALESCE(a.idea_id, '')))
		ORDER BY a.account`)
	if err != nil {
		return nil, fmt.Errorf("check balances against the journal: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// auditEntryID is the SQL expression reading an audit entry's entry_id
// attribute (NULL when it has none) on engine (SQLite's json_extract;
// Postgres's ->>).
func auditEntryID(engine database.Engine) string {
	if engine == database.Postgres {
		return `(a.attrs::json ->> 'entry_id')`
	}
	return `json_extract(a.attrs, '$.entry_id')`
}

// movementKinds are the kinds of audit entry that record a journal entry.
var movementKinds = credit.Movements

// Unreconciled implements store.Credit. Two passes, each cut at limit.
// From the journal: every entry is named by exactly one audit entry,
// sequenced or still queued, of its kind (and, for an entry from before
// migration 0012, the one at its audit_seq). From the log: every sequenced
// entry of a movement kind names a journal entry that exists, in its
// entry_id column and its attributes alike, and every other entry whose
// attributes name an entry id (a spread fee) names one that exists.
// Duplicates from before the unique index (migration 0011) show in the
// first pass: only one of them is named.
func (c Credit) Unreconciled(ctx context.Context, limit int) ([]store.Discrepancy, error) {
	rows, err := c.q.Query(ctx, `SELECT e.id, e.kind, e.audit_seq, COALESCE(a.seq, 0), COALESCE(a.kind, ''), COALESCE(q.kind, '')
		FROM cc_entries e
		LEFT JOIN audit_entries a ON a.entry_id = e.id
		LEFT JOIN audit_queue q ON q.entry_id = e.id
		WHERE (a.seq IS NULL AND q.id IS NULL) OR a.kind <> e.kind OR q.kind <> e.kind
			OR (a.seq IS NOT NULL AND q.id IS NOT NULL) OR (e.audit_seq > 0 AND a.seq <> e.audit_seq)
		ORDER BY e.audit_seq, e.created_at, e.id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("reconcile the journal with the audit log: %w", err)
	}
	out := []store.Discrepancy{}
	for rows.Next() {
		var (
			d                  store.Discrepancy
			kind, aKind, qKind string
			legacy, seq        int64
		)
		if err := rows.Scan(&d.EntryID, &kind, &legacy, &seq, &aKind, &qKind); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reconcile the journal with the audit log: %w", err)
		}
		d.AuditSeq = seq
		if legacy > 0 {
			d.AuditSeq = legacy
		}
		switch {
		case seq == 0 && qKind == "":
			d.Problem = fmt.Sprintf("journal entry %s (%s) is recorded by no audit entry", d.EntryID, kind)
			if legacy > 0 {
				d.Problem = fmt.Sprintf("journal entry %s (%s) names audit entry %d, which does not record it", d.EntryID, kind, legacy)
			}
		case seq != 0 && qKind != "":
			d.Problem = fmt.Sprintf("journal entry %s (%s) is recorded by audit entry %d and again in the queue", d.EntryID, kind, seq)
		case seq != 0 && aKind != kind:
			d.Problem = fmt.Sprintf("journal entry %s (%s) is recorded by audit entry %d, which records a %s", d.EntryID, kind, seq, aKind)
		case qKind != "" && qKind != kind:
			d.Problem = fmt.Sprintf("journal entry %s (%s) is recorded by a queued audit entry of kind %s", d.EntryID, kind, qKind)
		default:
			d.Problem = fmt.Sprintf("journal entry %s (%s) names audit entry %d, but audit entry %d records it", d.EntryID, kind, legacy, seq)
		}
		out = append(out, d)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reconcile the journal with the audit log: %w", err)
	}

	logged, err := unreconciledLog(ctx, c.q, 0, math.MaxInt64, limit)
	if err != nil {
		return nil, err
	}
	out = append(out, logged...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].AuditSeq < out[j].AuditSeq })
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// unreconciledLog is the log's side of the reconciliation, over the
// audit entries after seq after and at most through (a range of the
// primary key): up to limit entries whose link to the journal is wrong,
// by seq (store.Integrity.UnreconciledLog).
func unreconciledLog(ctx context.Context, q database.Querier, after, through int64, limit int) ([]store.Discrepancy, error) {
	eid := auditEntryID(q.Engine())
	in, args := "", []any{limit, after, through}
	for i, k := range movementKinds {
		if i > 0 {
			in += ", "
		}
		args = append(args, string(k))
		in += fmt.Sprintf("$%d", len(args))
	}
	// Whether a journal entry exists is a lookup of its primary key for
	// each entry of the range (a scalar subquery with LIMIT, which
	// Postgres runs per row): as NOT EXISTS, a plan cached from a long
	// range hashed every journal entry on every later call.
	rows, err := q.Query(ctx, `SELECT a.seq, a.kind, COALESCE(a.entry_id, ''), COALESCE(`+eid+`, '') FROM audit_entries a
		WHERE a.seq > $2 AND a.seq <= $3 AND (
			(a.kind IN (`+in+`) AND (a.entry_id IS NULL OR `+eid+` IS NULL OR `+eid+` <> a.entry_id
				OR (SELECT 1 FROM cc_entries e WHERE e.id = a.entry_id LIMIT 1) IS NULL))
			OR (a.kind NOT IN (`+in+`) AND `+eid+` IS NOT NULL
				AND (SELECT 1 FROM cc_entries e WHERE e.id = `+eid+` LIMIT 1) IS NULL))
		ORDER BY a.seq LIMIT $1`, args...)
	if err != nil {
		return nil, fmt.Errorf("reconcile the audit log with the journal: %w", err)
	}
	defer rows.Close()
	out := []store.Discrepancy{}
	for rows.Next() {
		var (
			d               store.Discrepancy
			kind, col, attr string
		)
		if err := rows.Scan(&d.AuditSeq, &kind, &col, &attr); err != nil {
			return nil, fmt.Errorf("reconcile the audit log with the journal: %w", err)
		}
		d.EntryID = col
		if d.EntryID == "" {
			d.EntryID = attr
		}
		switch {
		case !slices.Contains(movementKinds, credit.Kind(kind)):
			d.Problem = fmt.Sprintf("audit entry %d (%s) names journal entry %s, which does not exist", d.AuditSeq, kind, attr)
		case col == "" && attr == "":
			d.Problem = fmt.Sprintf("audit entry %d (%s) names no journal entry", d.AuditSeq, kind)
		case col == "":
			d.Problem = fmt.Sprintf("audit entry %d (%s) names journal entry %s, which is not recorded by it", d.AuditSeq, kind, attr)
		case col != attr:
			d.Problem = fmt.Sprintf("audit entry %d (%s) is linked to journal entry %s but its attributes name %q", d.AuditSeq, kind, col, attr)
		default:
			d.Problem = fmt.Sprintf("audit entry %d (%s) names journal entry %s, which does not exist", d.AuditSeq, kind, col)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reconcile the audit log with the journal: %w", err)
	}
	return out, nil
}

// InsertDeposit implements store.Credit.
func (c Credit) InsertDeposit(ctx context.Context, d store.Deposit) error {
	_, err := c.q.Exec(ctx, `INSERT INTO cc_deposits (reference, entry_id, contributor_id, amount_usd, minted_cc, buy_rate, fee_usd,
		created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		d.Reference, d.EntryID, d.ContributorID, int64(d.AmountUSD), int64(d.MintedCC), int64(d.BuyRate), int64(d.FeeUSD),
		database.Micros(d.CreatedAt))
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("deposit %q: %w", d.Reference, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("record deposit %q: %w", d.Reference, err)
	}
	return nil
}

// DepositByReference implements store.Credit.
func (c Credit) DepositByReference(ctx context.Context, reference string) (store.Deposit, error) {
	var (
		d       store.Deposit
		created int64
	)
	err := c.q.QueryRow(ctx, `SELECT reference, entry_id, contributor_id, amount_usd, minted_cc, buy_rate, fee_usd, created_at
		FROM cc_deposits WHERE reference = $1`, reference).
		Scan(&d.Reference, &d.EntryID, &d.ContributorID, &d.AmountUSD, &d.MintedCC, &d.BuyRate, &d.FeeUSD, &created)
	if errors.Is(err, database.ErrNoRows) {
		return store.Deposit{}, store.ErrNotFound
	}
	if err != nil {
		return store.Deposit{}, fmt.Errorf("find deposit %q: %w", reference, err)
	}
	d.CreatedAt = database.Time(created)
	return d, nil
}

// InsertCooling implements store.Credit.
func (c Credit) InsertCooling(ctx context.Context, l store.CoolingLot) error {
	_, err := c.q.Exec(ctx, `INSERT INTO cc_cooling (id, contributor_id, idea_id, amount, available_at, entry_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		l.ID, l.ContributorID, l.IdeaID, int64(l.Amount), database.Micros(l.AvailableAt), l.EntryID, database.Micros(l.CreatedAt))
	if err != nil {
		return fmt.Errorf("record cooling unstake: %w", err)
	}
	return nil
}

// DueCooling implements store.Credit.
func (c Credit) DueCooling(ctx context.Context, contributorID string, now time.Time) ([]store.CoolingLot, error) {
	rows, err := c.q.Query(ctx, `SELECT id, idea_id, amount, available_at, entry_id, created_at FROM cc_cooling
		WHERE contributor_id = $1 AND released_entry_id IS NULL AND available_at <= $2
		ORDER BY available_at, id`, contributorID, database.Micros(now))
	if err != nil {
		return nil, fmt.Errorf("read cooling unstakes of %s: %w", contributorID, err)
	}
	defer rows.Close()
	var out []store.CoolingLot
	for rows.Next() {
		var (
			l                  store.CoolingLot
			available, created int64
		)
		if err := rows.Scan(&l.ID, &l.IdeaID, &l.Amount, &available, &l.EntryID, &created); err != nil {
			return nil, fmt.Errorf("read cooling unstakes of %s: %w", contributorID, err)
		}
		l.ContributorID, l.AvailableAt, l.CreatedAt = contributorID, database.Time(available), database.Time(created)
		out = append(out, l)
	}
	return out, rows.Err()
}

// ReleaseCooling implements store.Credit.
func (c Credit) ReleaseCooling(ctx context.Context, lotID, entryID string) error {
	n, err := c.q.Exec(ctx, `UPDATE cc_cooling SET released_entry_id = $2 WHERE id = $1 AND released_entry_id IS NULL`,
		lotID, entryID)
	if err != nil {
		return fmt.Errorf("release cooling unstake %s: %w", lotID, err)
	}
	if n == 0 {
		return fmt.Errorf("release cooling unstake %s: %w", lotID, store.ErrNotFound)
	}
	return nil
}

// UnstakedSince implements store.Credit. The literal kind matches the
// partial index cc_entries_unstakes (contributor, idea, time), so the sum
// reads only the unstakes of the window.
func (c Credit) UnstakedSince(ctx context.Context, contributorID, ideaID string, since time.Time) (money.Micros, error) {
	var sum int64
	err := c.q.QueryRow(ctx, `SELECT COALESCE(SUM(amount), 0) FROM cc_entries
		WHERE kind = 'unstake' AND contributor_id = $1 AND idea_id = $2 AND created_at > $3`,
		contributorID, ideaID, database.Micros(since)).Scan(&sum)
	if err != nil {
		return 0, fmt.Errorf("sum unstakes of %s from %s: %w", contributorID, ideaID, err)
	}
	return money.Micros(sum), nil
}

// InsertPledge implements store.Credit.
func (c Credit) InsertPledge(ctx context.Context, p store.Pledge) error {
	_, err := c.q.Exec(ctx, `INSERT INTO cc_pledges (id, contributor_id, idea_id, micro_hours, cc_equivalent, created_at)
		VALUES ($1, $2, $3, $4, $5, $6)`,
		p.ID, p.ContributorID, p.IdeaID, int64(p.MicroHours), int64(p.CCEquivalent), database.Micros(p.CreatedAt))
	if err != nil {
		return fmt.Errorf("record pledge: %w", err)
	}
	return nil
}

// InsertReading implements store.Credit.
func (c Credit) InsertReading(ctx context.Context, r store.OracleReading) error {
	tripped := 0
	if r.State.Tripped {
		tripped = 1
	}
	trippedAt := int64(0)
	if r.State.Tripped {
		trippedAt = database.Micros(r.State.TrippedAt)
	}
	_, err := c.q.Exec(ctx, `INSERT INTO oracle_readings (id, price, at, source, verdict, tripped, clean, last_good, tripped_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		r.ID, int64(r.Reading.Price), database.Micros(r.Reading.At), r.Source, string(r.Verdict), tripped, r.State.Clean,
		int64(r.State.LastGood), trippedAt)
	if err != nil {
		return fmt.Errorf("record oracle reading: %w", err)
	}
	return nil
}

// LatestReading implements store.Credit.
func (c Credit) LatestReading(ctx context.Context) (store.OracleReading, error) {
	var (
		r        store.OracleReading
		at       int64
		verdict  string
		tripped  int
		lastGood int64
		opened   int64
	)
	err := c.q.QueryRow(ctx, `SELECT id, price, at, source, verdict, tripped, clean, last_good, tripped_at FROM oracle_readings
		ORDER BY at DESC, id DESC LIMIT 1`).
		Scan(&r.ID, &r.Reading.Price, &at, &r.Source, &verdict, &tripped, &r.State.Clean, &lastGood, &opened)
	if errors.Is(err, database.ErrNoRows) {
		return store.OracleReading{}, store.ErrNotFound
	}
	if err != nil {
		return store.OracleReading{}, fmt.Errorf("read latest oracle reading: %w", err)
	}
	r.Reading.At, r.Verdict = database.Time(at), credit.Verdict(verdict)
	r.Reading.Source, r.Reading.Verdict = r.Source, r.Verdict
	r.State.Tripped, r.State.LastGood = tripped != 0, money.Micros(lastGood)
	if r.State.Tripped {
		r.State.TrippedAt = database.Time(opened)
	}
	return r, nil
}

// ReadingsSince implements store.Credit.
func (c Credit) ReadingsSince(ctx context.Context, since time.Time) ([]credit.Reading, error) {
	rows, err := c.q.Query(ctx, `SELECT price, at, source, verdict FROM oracle_readings WHERE at >= $1 ORDER BY at, id`,
		database.Micros(since))
	if err != nil {
		return nil, fmt.Errorf("read oracle readings: %w", err)
	}
	defer rows.Close()
	var out []credit.Reading
	for rows.Next() {
		var (
			r       credit.Reading
			at      int64
			verdict string
		)
		if err := rows.Scan(&r.Price, &at, &r.Source, &verdict); err != nil {
			return nil, fmt.Errorf("read oracle readings: %w", err)
		}
		r.At, r.Verdict = database.Time(at), credit.Verdict(verdict)
		out = append(out, r)
	}
	return out, rows.Err()
}

// InsertIncident implements store.Credit.
func (c Credit) InsertIncident(ctx context.Context, i store.Incident) error {
	var resolved *int64
	if !i.ResolvedAt.IsZero() {
		v := database.Micros(i.ResolvedAt)
		resolved = &v
	}
	_, err := c.q.Exec(ctx, `INSERT INTO incidents (id, kind, severity, detail, actor, created_at, resolved_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		i.ID, i.Kind, i.Severity, i.Detail, i.Actor, database.Micros(i.CreatedAt), resolved)
	if err != nil {
		return fmt.Errorf("record incident: %w", err)
	}
	return nil
}

// ListIncidents implements store.Credit.
func (c Credit) ListIncidents(ctx context.Context, before *store.IncidentKey, limit, offset int) ([]store.Incident, int, error) {
	var total int
	// Kept by a trigger (migration 0027): no walk of every incident.
	if err := c.q.QueryRow(ctx, keptCount("incidents")).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count incidents: %w", err)
	}
	query, args := `SELECT id, kind, severity, detail, actor, created_at, resolved_at FROM incidents
		ORDER BY created_at DESC, id DESC LIMIT $1 OFFSET $2`, []any{limit, offset}
	if before != nil {
		query, args = `SELECT id, kind, severity, detail, actor, created_at, resolved_at FROM incidents
		WHERE `+database.Keyset("<", "<", 1, 2)+` ORDER BY created_at DESC, id DESC LIMIT $3`,
			[]any{database.Micros(before.CreatedAt), before.ID, limit}
	}
	rows, err := c.q.Query(ctx, query, args...)
	if err != nil {
		return nil, 0, fmt.Errorf("list incidents: %w", err)
	}
	defer rows.Close()
	out := []store.Incident{}
	for rows.Next() {
		var (
			i        store.Incident
			created  int64
			resolved *int64
		)
		if err := rows.Scan(&i.ID, &i.Kind, &i.Severity, &i.Detail, &i.Actor, &created, &resolved); err != nil {
			return nil, 0, fmt.Errorf("list incidents: %w", err)
		}
		i.CreatedAt = database.Time(created)
		if resolved != nil {
			i.ResolvedAt = database.Time(*resolved)
		}
		out = append(out, i)
	}
	return out, total, rows.Err()
}

// Counts implements store.Credit.
func (c Credit) Counts(ctx context.Context) (map[string]int, error) {
	return count(ctx, c.q, "cc_entries", "incidents")
}

// SaveSupplyDay implements store.Credit.
func (c Credit) SaveSupplyDay(ctx context.Context, d store.SupplyDay) error {
	day := database.Micros(d.Day.UTC().Truncate(24 * time.Hour))
	_, err := c.q.Exec(ctx, `INSERT INTO supply_days (day, outstanding_cc, treasury_usd, reserve_ratio, updated_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (day) DO UPDATE SET outstanding_cc = excluded.outstanding_cc,
		treasury_usd = excluded.treasury_usd, reserve_ratio = excluded.reserve_ratio, updated_at = excluded.updated_at`,
		day, int64(d.OutstandingCC), int64(d.TreasuryUSD), d.ReserveRatio, database.Micros(d.Day))
	if err != nil {
		return fmt.Errorf("save the day's supply: %w", err)
	}
	return nil
}

// SupplyDays implements store.Credit: two index ranges of the primary
// key, at most the window's days plus one row.
func (c Credit) SupplyDays(ctx context.Context, from, to time.Time) ([]store.SupplyDay, error) {
	rows, err := c.q.Query(ctx, `SELECT day, outstanding_cc, treasury_usd, reserve_ratio FROM (
			SELECT day, outstanding_cc, treasury_usd, reserve_ratio FROM supply_days WHERE day < $1 ORDER BY day DESC LIMIT 1
		) before_window
		UNION ALL
		SELECT day, outstanding_cc, treasury_usd, reserve_ratio FROM supply_days WHERE day >= $1 AND day < $2
		ORDER BY day`, database.Micros(from), database.Micros(to))
	if err != nil {
		return nil, fmt.Errorf("read the supply history: %w", err)
	}
	defer rows.Close()
	out := []store.SupplyDay{}
	for rows.Next() {
		var (
			d                          store.SupplyDay
			day, outstanding, treasury int64
		)
		if err := rows.Scan(&day, &outstanding, &treasury, &d.ReserveRatio); err != nil {
			return nil, fmt.Errorf("read the supply history: %w", err)
		}
		d.Day, d.OutstandingCC, d.TreasuryUSD = database.Time(day), money.Micros(outstanding), money.Micros(treasury)
		out = append(out, d)
	}
	return out, rows.Err()
}

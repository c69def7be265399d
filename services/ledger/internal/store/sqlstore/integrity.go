package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Integrity implements store.Integrity over a querier.
type Integrity struct {
	q database.Querier
}

var _ store.Integrity = Integrity{}

// NewIntegrity returns the integrity repository over q.
func NewIntegrity(q database.Querier) Integrity { return Integrity{q: q} }

// InsertFinding implements store.Integrity. The conflict target is the
// partial unique index audit_findings_open (both engines infer a partial
// index from its predicate), so a place found again while open adds
// nothing.
func (s Integrity) InsertFinding(ctx context.Context, f store.Finding) (bool, error) {
	n, err := s.q.Exec(ctx, `INSERT INTO audit_findings (id, place, kind, mode, seq, entry_id, account, detail, found_by, found_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (place) WHERE resolved_at = 0 DO NOTHING`,
		f.ID, f.Place, f.Kind, f.Mode, f.Seq, f.EntryID, f.Account, f.Detail, f.FoundBy, database.Micros(f.FoundAt))
	if err != nil {
		return false, fmt.Errorf("record an integrity finding: %w", err)
	}
	return n == 1, nil
}

// OpenFindings implements store.Integrity.
func (s Integrity) OpenFindings(ctx context.Context, limit int) ([]store.Finding, int, error) {
	var total int
	if err := s.q.QueryRow(ctx, `SELECT COUNT(*) FROM audit_findings WHERE resolved_at = 0`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count the open integrity findings: %w", err)
	}
	rows, err := s.q.Query(ctx, `SELECT id, place, kind, mode, seq, entry_id, account, detail, found_by, found_at FROM audit_findings
		WHERE resolved_at = 0 ORDER BY found_at, id LIMIT $1`, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("read the open integrity findings: %w", err)
	}
	defer rows.Close()
	out := []store.Finding{}
	for rows.Next() {
		var (
			f  store.Finding
			at int64
		)
		if err := rows.Scan(&f.ID, &f.Place, &f.Kind, &f.Mode, &f.Seq, &f.EntryID, &f.Account, &f.Detail, &f.FoundBy, &at); err != nil {
			return nil, 0, fmt.Errorf("read the open integrity findings: %w", err)
		}
		f.FoundAt = database.Time(at)
		out = append(out, f)
	}
	return out, total, rows.Err()
}

// ResolveFindings implements store.Integrity.
func (s Integrity) ResolveFindings(ctx context.Context, at time.Time, by string) (int, error) {
	n, err := s.q.Exec(ctx, `UPDATE audit_findings SET resolved_at = $1, resolved_by = $2 WHERE resolved_at = 0`,
		max(database.Micros(at), 1), by)
	if err != nil {
		return 0, fmt.Errorf("resolve the integrity findings: %w", err)
	}
	return int(n), nil
}

// LastResolved implements store.Integrity. Findings are few (one open
// per place, a repair closes them all), so the maximum is a short scan.
func (s Integrity) LastResolved(ctx context.Context) (time.Time, error) {
	var at int64
	if err := s.q.QueryRow(ctx, `SELECT COALESCE(MAX(resolved_at), 0) FROM audit_findings`).Scan(&at); err != nil {
		return time.Time{}, fmt.Errorf("read when findings were last resolved: %w", err)
	}
	if at == 0 {
		return time.Time{}, nil
	}
	return database.Time(at), nil
}

// ScrubState implements store.Integrity.
func (s Integrity) ScrubState(ctx context.Context) (store.SealedState, error) {
	var (
		st store.SealedState
		at int64
	)
	err := s.q.QueryRow(ctx, `SELECT state, key_id, mac, updated_at FROM audit_scrub WHERE id = 1`).Scan(&st.State, &st.KeyID, &st.MAC, &at)
	if errors.Is(err, database.ErrNoRows) {
		return store.SealedState{}, store.ErrNotFound
	}
	if err != nil {
		return store.SealedState{}, fmt.Errorf("read the scrubber's state: %w", err)
	}
	st.UpdatedAt = database.Time(at)
	return st, nil
}

// SaveScrubState implements store.Integrity.
func (s Integrity) SaveScrubState(ctx context.Context, st store.SealedState) error {
	_, err := s.q.Exec(ctx, `INSERT INTO audit_scrub (id, state, key_id, mac, updated_at) VALUES (1, $1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET state = excluded.state, key_id = excluded.key_id, mac = excluded.mac,
			updated_at = excluded.updated_at`, st.State, st.KeyID, st.MAC, database.Micros(st.UpdatedAt))
	if err != nil {
		return fmt.Errorf("save the scrubber's state: %w", err)
	}
	return nil
}

// CoherencePlace implements store.Integrity.
func (s Integrity) CoherencePlace(ctx context.Context) (store.CoherencePlace, error) {
	var (
		p             store.CoherencePlace
		journalAt, at int64
	)
	err := s.q.QueryRow(ctx, `SELECT journal_after_at, journal_after_id, log_after, updated_at FROM coherence_place WHERE id = 1`).
		Scan(&journalAt, &p.JournalAfter.ID, &p.LogAfter, &at)
	if errors.Is(err, database.ErrNoRows) {
		return store.CoherencePlace{}, nil
	}
	if err != nil {
		return store.CoherencePlace{}, fmt.Errorf("read where the coherence check resumes: %w", err)
	}
	if journalAt != 0 {
		p.JournalAfter.CreatedAt = database.Time(journalAt)
	}
	p.UpdatedAt = database.Time(at)
	return p, nil
}

// SaveCoherencePlace implements store.Integrity.
func (s Integrity) SaveCoherencePlace(ctx context.Context, p store.CoherencePlace) error {
	var journalAt int64
	if !p.JournalAfter.CreatedAt.IsZero() {
		journalAt = database.Micros(p.JournalAfter.CreatedAt)
	}
	_, err := s.q.Exec(ctx, `INSERT INTO coherence_place (id, journal_after_at, journal_after_id, log_after, updated_at)
		VALUES (1, $1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET journal_after_at = excluded.journal_after_at, journal_after_id = excluded.journal_after_id,
			log_after = excluded.log_after, updated_at = excluded.updated_at`,
		journalAt, p.JournalAfter.ID, p.LogAfter, database.Micros(p.UpdatedAt))
	if err != nil {
		return fmt.Errorf("save where the coherence check resumes: %w", err)
	}
	return nil
}

// UnreconciledLog implements store.Integrity.
func (s Integrity) UnreconciledLog(ctx context.Context, after, through int64, limit int) ([]store.Discrepancy, error) {
	return unreconciledLog(ctx, s.q, after, through, limit)
}

// JournalMovements implements store.Integrity: the entries and their
// lines in one statement.
func (s Integrity) JournalMovements(ctx context.Context, ids []string) (map[string]audit.Movement, error) {
	out := make(map[string]audit.Movement, len(ids))
	err := queryIn(ctx, s.q, "read journal entries", ids,
		func(in string) string {
			return `SELECT e.id, e.kind, COALESCE(e.contributor_id, ''), COALESCE(e.idea_id, ''), e.amount,
				COALESCE(l.account, ''), COALESCE(l.delta, 0)
			FROM cc_entries e LEFT JOIN cc_lines l ON l.entry_id = e.id
			WHERE e.id IN (` + in + `)`
		},
		func(rows database.Rows) error {
			var (
				m       audit.Movement
				account string
				delta   int64
			)
			if err := rows.Scan(&m.EntryID, &m.Kind, &m.Contributor, &m.Idea, &m.Amount, &account, &delta); err != nil {
				return err
			}
			got, seen := out[m.EntryID]
			if !seen {
				m.Lines = map[string]int64{}
				got = m
			}
			if account != "" {
				got.Lines[account] = delta
			}
			out[m.EntryID] = got
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// JournalLinks implements store.Integrity. The row-value comparison walks
// cc_entries_created in order on both engines.
func (s Integrity) JournalLinks(ctx context.Context, after store.JournalKey, limit int) ([]store.JournalLink, error) {
	// The page is a range of cc_entries_created first; each entry's audit
	// entry and queued entry are then a lookup of their unique entry_id
	// (scalar subqueries, which Postgres runs per row). Joined, a plan
	// cached from the scrubber's first slice merged the whole journal with
	// the queue and sorted it, on every later call.
	rows, err := s.q.Query(ctx, `SELECT e.id, e.kind, e.created_at, e.audit_seq,
			COALESCE((SELECT a.seq FROM audit_entries a WHERE a.entry_id = e.id), 0),
			COALESCE((SELECT a.kind FROM audit_entries a WHERE a.entry_id = e.id), ''),
			COALESCE((SELECT q.kind FROM audit_queue q WHERE q.entry_id = e.id), '')
		FROM (SELECT id, kind, created_at, audit_seq FROM cc_entries
			WHERE (created_at, id) > ($1, $2) ORDER BY created_at, id LIMIT $3) e
		ORDER BY e.created_at, e.id`, database.Micros(after.CreatedAt), after.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("read the journal's links to the audit log: %w", err)
	}
	defer rows.Close()
	out := []store.JournalLink{}
	for rows.Next() {
		var (
			l  store.JournalLink
			at int64
		)
		if err := rows.Scan(&l.Key.ID, &l.Kind, &at, &l.LegacySeq, &l.AuditSeq, &l.AuditKind, &l.QueuedKind); err != nil {
			return nil, fmt.Errorf("read the journal's links to the audit log: %w", err)
		}
		l.Key.CreatedAt = database.Time(at)
		out = append(out, l)
	}
	return out, rows.Err()
}

// accountSums sums the lines of the accounts the subquery accounts
// selects (with the placeholders it uses), beside each one's balance and
// whether every line names the account's owner.
func accountSums(accounts string) string {
	return `SELECT s.account, s.balance, COALESCE(SUM(l.delta), 0),
			COUNT(l.account), MIN(l.bucket) = s.bucket AND MAX(l.bucket) = s.bucket
				AND MIN(COALESCE(l.contributor_id, '')) = s.contributor AND MAX(COALESCE(l.contributor_id, '')) = s.contributor
				AND MIN(COALESCE(l.idea_id, '')) = s.idea AND MAX(COALESCE(l.idea_id, '')) = s.idea
		FROM (SELECT account, balance, bucket, COALESCE(contributor_id, '') AS contributor, COALESCE(idea_id, '') AS idea
			FROM cc_accounts ` + accounts + `) s
		LEFT JOIN cc_lines l ON l.account = s.account
		GROUP BY s.account, s.balance, s.bucket, s.contributor, s.idea ORDER BY s.account`
}

// AccountSum implements store.Integrity.
func (s Integrity) AccountSum(ctx context.Context, account string) (store.AccountSum, bool, error) {
	out, err := s.sums(ctx, accountSums(`WHERE account = $1`), account)
	if err != nil || len(out) == 0 {
		return store.AccountSum{}, false, err
	}
	return out[0], true, nil
}

// AccountSums implements store.Integrity. The slice of accounts is taken
// first, so only its lines are summed (cc_lines_account).
func (s Integrity) AccountSums(ctx context.Context, after string, limit int) ([]store.AccountSum, error) {
	return s.sums(ctx, accountSums(`WHERE account > $1 ORDER BY account LIMIT $2`), after, limit)
}

func (s Integrity) sums(ctx context.Context, query string, args ...any) ([]store.AccountSum, error) {
	rows, err := s.q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("sum the journal's lines by account: %w", err)
	}
	defer rows.Close()
	out := []store.AccountSum{}
	for rows.Next() {
		var (
			a      store.AccountSum
			lines  int
			owners *bool
		)
		if err := rows.Scan(&a.Account, &a.Balance, &a.Lines, &lines, &owners); err != nil {
			return nil, fmt.Errorf("sum the journal's lines by account: %w", err)
		}
		a.OwnersAgree = lines == 0 || (owners != nil && *owners)
		out = append(out, a)
	}
	return out, rows.Err()
}

// Supply implements store.Integrity, in one statement.
func (s Integrity) Supply(ctx context.Context) (money.Micros, money.Micros, error) {
	var outstanding, issuance int64
	err := s.q.QueryRow(ctx, `SELECT e.outstanding_cc, COALESCE((SELECT balance FROM cc_accounts WHERE account = 'issuance'), 0)
		FROM economy e WHERE e.id = 1`).Scan(&outstanding, &issuance)
	if err != nil {
		return 0, 0, fmt.Errorf("read the supply: %w", err)
	}
	return money.Micros(outstanding), money.Micros(issuance), nil
}

// Accounts implements store.Integrity.
func (s Integrity) Accounts(ctx context.Context, names []string) (map[string]credit.Account, error) {
	out := make(map[string]credit.Account, len(names))
	err := queryIn(ctx, s.q, "read accounts", names,
		func(in string) string {
			return `SELECT account, bucket, COALESCE(contributor_id, ''), COALESCE(idea_id, '') FROM cc_accounts
			WHERE account IN (` + in + `)`
		},
		func(rows database.Rows) error {
			var (
				name string
				a    credit.Account
			)
			if err := rows.Scan(&name, &a.Bucket, &a.Contributor, &a.Idea); err != nil {
				return err
			}
			out[name] = a
			return nil
		})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// RestoreBalance implements store.Integrity.
func (s Integrity) RestoreBalance(ctx context.Context, account string, balance money.Micros) error {
	n, err := s.q.Exec(ctx, `UPDATE cc_accounts SET balance = $2 WHERE account = $1`, account, int64(balance))
	if err != nil {
		return fmt.Errorf("restore the balance of %s: %w", account, err)
	}
	if n != 1 {
		return fmt.Errorf("restore the balance of %s: %w", account, store.ErrNotFound)
	}
	return nil
}

// RecentMovements implements store.Integrity, through
// cc_entries_contributor (newest first) and each audit table's entry_id
// index.
func (s Integrity) RecentMovements(ctx context.Context, contributorID string, since time.Time, limit int) ([]store.RecentMovement, error) {
	rows, err := s.q.Query(ctx, `SELECT e.id, COALESCE(a.seq, 0), a.kind IS NOT NULL OR q.kind IS NOT NULL,
			COALESCE(a.kind, q.kind, ''), COALESCE(a.at, q.at, 0), COALESCE(a.actor, q.actor, ''), COALESCE(a.subject, q.subject, ''),
			COALESCE(a.amount, q.amount, 0), COALESCE(a.attrs, q.attrs, '{}')
		FROM cc_entries e
		LEFT JOIN audit_entries a ON a.entry_id = e.id
		LEFT JOIN audit_queue q ON q.entry_id = e.id
		WHERE e.contributor_id = $1 AND e.created_at >= $2
		ORDER BY e.created_at DESC, e.id DESC LIMIT $3`, contributorID, database.Micros(since), limit)
	if err != nil {
		return nil, fmt.Errorf("read the recent movements of %s: %w", contributorID, err)
	}
	defer rows.Close()
	out := []store.RecentMovement{}
	for rows.Next() {
		var (
			m      store.RecentMovement
			logged bool
			e      audit.Entry
			at     int64
			attrs  string
		)
		if err := rows.Scan(&m.EntryID, &m.Seq, &logged, &e.Kind, &at, &e.Actor, &e.Subject, &e.Amount, &attrs); err != nil {
			return nil, fmt.Errorf("read the recent movements of %s: %w", contributorID, err)
		}
		if logged {
			e.Seq, e.At = m.Seq, database.Time(at)
			// Damaged attributes read as none: the comparison then
			// reports every line, never a silent pass.
			if err := json.Unmarshal([]byte(attrs), &e.Attrs); err != nil {
				e.Attrs = nil
			}
			m.Logged = &e
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

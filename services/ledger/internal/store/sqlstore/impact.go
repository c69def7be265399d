package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/platform/database"
)

// Impact is the store.Impact over a querier.
type Impact struct {
	q database.Querier
}

var _ store.Impact = Impact{}

// NewImpact returns the impact repository over q.
func NewImpact(q database.Querier) Impact { return Impact{q: q} }

const impactColumns = `id, idea_id, reference, kind, quantity, unit, amount_usd, minted_cc, fee_usd, earned_cc, positions,
	evidence, COALESCE(entry_id, ''), actor, source, created_at`

func scanImpact(row interface{ Scan(...any) error }) (store.ImpactRecord, error) {
	var (
		rec     store.ImpactRecord
		created int64
	)
	err := row.Scan(&rec.ID, &rec.IdeaID, &rec.Reference, &rec.Kind, &rec.Quantity, &rec.Unit, &rec.AmountUSD, &rec.MintedCC,
		&rec.FeeUSD, &rec.EarnedCC, &rec.Positions, &rec.Evidence, &rec.EntryID, &rec.Actor, &rec.Source, &created)
	rec.CreatedAt = database.Time(created)
	return rec, err
}

// InsertImpact implements store.Impact.
func (s Impact) InsertImpact(ctx context.Context, rec store.ImpactRecord) error {
	var entry *string
	if rec.EntryID != "" {
		entry = &rec.EntryID
	}
	_, err := s.q.Exec(ctx, `INSERT INTO impact_records (id, idea_id, reference, kind, quantity, unit, amount_usd, minted_cc,
		fee_usd, earned_cc, positions, evidence, entry_id, actor, source, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		rec.ID, rec.IdeaID, rec.Reference, rec.Kind, int64(rec.Quantity), rec.Unit, int64(rec.AmountUSD), int64(rec.MintedCC),
		int64(rec.FeeUSD), int64(rec.EarnedCC), rec.Positions, rec.Evidence, entry, rec.Actor, rec.Source,
		database.Micros(rec.CreatedAt))
	if database.IsUniqueViolation(err) {
		return fmt.Errorf("impact record %q of idea %s: %w", rec.Reference, rec.IdeaID, store.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("record impact %q of idea %s: %w", rec.Reference, rec.IdeaID, err)
	}
	return nil
}

// ImpactByReference implements store.Impact.
func (s Impact) ImpactByReference(ctx context.Context, ideaID, reference string) (store.ImpactRecord, error) {
	rec, err := scanImpact(s.q.QueryRow(ctx, `SELECT `+impactColumns+` FROM impact_records WHERE idea_id = $1 AND reference = $2`,
		ideaID, reference))
	if errors.Is(err, database.ErrNoRows) {
		return store.ImpactRecord{}, store.ErrNotFound
	}
	if err != nil {
		return store.ImpactRecord{}, fmt.Errorf("read impact %q of idea %s: %w", reference, ideaID, err)
	}
	return rec, nil
}

// ListImpact implements store.Impact: newest first by time, then id, the
// order of impact_records_idea read backwards.
func (s Impact) ListImpact(ctx context.Context, ideaID string, limit, offset int) ([]store.ImpactRecord, int, error) {
	var total int
	if err := s.q.QueryRow(ctx, `SELECT COUNT(*) FROM impact_records WHERE idea_id = $1`, ideaID).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count the impact of idea %s: %w", ideaID, err)
	}
	rows, err := s.q.Query(ctx, `SELECT `+impactColumns+` FROM impact_records WHERE idea_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, ideaID, limit, offset)
	if err != nil {
		return nil, 0, fmt.Errorf("read the impact of idea %s: %w", ideaID, err)
	}
	defer rows.Close()
	out := []store.ImpactRecord{}
	for rows.Next() {
		rec, err := scanImpact(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("read the impact of idea %s: %w", ideaID, err)
		}
		out = append(out, rec)
	}
	return out, total, rows.Err()
}

// ImpactTotals implements store.Impact.
func (s Impact) ImpactTotals(ctx context.Context, ideaID string) (store.ImpactTotals, error) {
	var (
		t    store.ImpactTotals
		last int64
	)
	err := s.q.QueryRow(ctx, `SELECT
			COALESCE(SUM(CASE WHEN kind = $2 THEN 1 ELSE 0 END), 0), COALESCE(SUM(CASE WHEN kind = $3 THEN 1 ELSE 0 END), 0),
			COALESCE(SUM(earned_cc), 0), COALESCE(SUM(amount_usd), 0), COALESCE(SUM(minted_cc), 0), COALESCE(MAX(created_at), 0)
		FROM impact_records WHERE idea_id = $1`, ideaID, impact.KindUsage, impact.KindRevenue).
		Scan(&t.UsageRecords, &t.RevenueRecords, &t.EarnedCC, &t.RevenueUSD, &t.PaidCC, &last)
	if err != nil {
		return store.ImpactTotals{}, fmt.Errorf("sum the impact of idea %s: %w", ideaID, err)
	}
	if last > 0 {
		t.LastAt = database.Time(last)
	}
	rows, err := s.q.Query(ctx, `SELECT unit, SUM(quantity) FROM impact_records WHERE idea_id = $1 AND kind = $2
		GROUP BY unit ORDER BY unit`, ideaID, impact.KindUsage)
	if err != nil {
		return store.ImpactTotals{}, fmt.Errorf("sum the usage of idea %s: %w", ideaID, err)
	}
	defer rows.Close()
	t.Usage = []store.UnitQuantity{}
	for rows.Next() {
		var u store.UnitQuantity
		if err := rows.Scan(&u.Unit, &u.Quantity); err != nil {
			return store.ImpactTotals{}, fmt.Errorf("sum the usage of idea %s: %w", ideaID, err)
		}
		t.Usage = append(t.Usage, u)
	}
	return t, rows.Err()
}

// ActiveStakes implements store.Impact: the idea's staked accounts with a
// balance (cc_accounts_idea), each with its attribution row if any.
func (s Impact) ActiveStakes(ctx context.Context, ideaID string, limit int) ([]store.Stake, int, error) {
	var total int
	if err := s.q.QueryRow(ctx, `SELECT COUNT(*) FROM cc_accounts WHERE idea_id = $1 AND bucket = $2 AND balance > 0`,
		ideaID, credit.BucketStaked).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("count the positions on idea %s: %w", ideaID, err)
	}
	rows, err := s.q.Query(ctx, `SELECT a.contributor_id, a.balance, COALESCE(t.earned_cc, 0), COALESCE(t.realized_cc, 0)
		FROM cc_accounts a LEFT JOIN cc_attributions t ON t.contributor_id = a.contributor_id AND t.idea_id = a.idea_id
		WHERE a.idea_id = $1 AND a.bucket = $2 AND a.balance > 0
		ORDER BY a.contributor_id LIMIT $3`, ideaID, credit.BucketStaked, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("read the positions on idea %s: %w", ideaID, err)
	}
	defer rows.Close()
	out := []store.Stake{}
	for rows.Next() {
		var st store.Stake
		if err := rows.Scan(&st.ContributorID, &st.Amount, &st.Earned, &st.Realized); err != nil {
			return nil, 0, fmt.Errorf("read the positions on idea %s: %w", ideaID, err)
		}
		out = append(out, st)
	}
	return out, total, rows.Err()
}

// AddAttribution implements store.Impact: one upsert per position, adding
// to what is there, so two records that reach a position at once both
// count. The cap is applied in SQL, where the sum is.
func (s Impact) AddAttribution(ctx context.Context, ideaID string, deltas []store.AttributionDelta) error {
	b := &database.Batch{}
	for _, d := range deltas {
		if d.Earned == 0 && d.Realized == 0 {
			continue
		}
		b.Exec(nil, `INSERT INTO cc_attributions (contributor_id, idea_id, earned_cc, realized_cc) VALUES ($1, $2, $3, $4)
			ON CONFLICT (contributor_id, idea_id) DO UPDATE SET
				earned_cc = CASE WHEN cc_attributions.earned_cc >= $5 - excluded.earned_cc THEN $5
					ELSE cc_attributions.earned_cc + excluded.earned_cc END,
				realized_cc = cc_attributions.realized_cc + excluded.realized_cc`,
			d.ContributorID, ideaID, int64(min(d.Earned, impact.MaxEarned)), int64(d.Realized), int64(impact.MaxEarned))
	}
	if b.Len() == 0 {
		return nil
	}
	if err := s.q.SendBatch(ctx, b); err != nil {
		return fmt.Errorf("add to the attribution of positions on idea %s: %w", ideaID, err)
	}
	return nil
}

// NoteImpact implements store.Impact.
func (s Impact) NoteImpact(ctx context.Context, ideaID string, at time.Time) error {
	_, err := s.q.Exec(ctx, `INSERT INTO impact_notices (idea_id, pending, queued_at) VALUES ($1, 1, $2)
		ON CONFLICT (idea_id) DO UPDATE SET pending = impact_notices.pending + 1`, ideaID, database.Micros(at))
	if err != nil {
		return fmt.Errorf("note the impact of idea %s: %w", ideaID, err)
	}
	return nil
}

// ImpactNotices implements store.Impact.
func (s Impact) ImpactNotices(ctx context.Context, limit int) ([]store.ImpactNotice, error) {
	rows, err := s.q.Query(ctx, `SELECT idea_id, pending, queued_at FROM impact_notices ORDER BY queued_at, idea_id LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("read the impact notices: %w", err)
	}
	defer rows.Close()
	out := []store.ImpactNotice{}
	for rows.Next() {
		var (
			n  store.ImpactNotice
			at int64
		)
		if err := rows.Scan(&n.IdeaID, &n.Pending, &at); err != nil {
			return nil, fmt.Errorf("read the impact notices: %w", err)
		}
		n.QueuedAt = database.Time(at)
		out = append(out, n)
	}
	return out, rows.Err()
}

// ImpactNoticeOf implements store.Impact.
func (s Impact) ImpactNoticeOf(ctx context.Context, ideaID string) (store.ImpactNotice, error) {
	n := store.ImpactNotice{IdeaID: ideaID}
	var at int64
	err := s.q.QueryRow(ctx, `SELECT pending, queued_at FROM impact_notices WHERE idea_id = $1`, ideaID).Scan(&n.Pending, &at)
	if errors.Is(err, database.ErrNoRows) {
		return store.ImpactNotice{}, store.ErrNotFound
	}
	if err != nil {
		return store.ImpactNotice{}, fmt.Errorf("read the impact notice of idea %s: %w", ideaID, err)
	}
	n.QueuedAt = database.Time(at)
	return n, nil
}

// ClearImpactNotice implements store.Impact.
func (s Impact) ClearImpactNotice(ctx context.Context, n store.ImpactNotice) (bool, error) {
	cleared, err := s.q.Exec(ctx, `DELETE FROM impact_notices WHERE idea_id = $1 AND pending = $2`, n.IdeaID, n.Pending)
	if err != nil {
		return false, fmt.Errorf("clear the impact notice of idea %s: %w", n.IdeaID, err)
	}
	return cleared == 1, nil
}

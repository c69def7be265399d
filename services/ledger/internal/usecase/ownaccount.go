package usecase

import (
	"context"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/credit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// ownAccountRecent bounds the movements a withdrawal compares with the log
// itself: a contributor's newest, of those since the scrubber's last
// complete cycle began.
const ownAccountRecent = 1000

// checkOwnAccount is what a withdrawal checks of the contributor's own CC
// before money leaves, beside what every movement checks (the mode, the
// balance, the backing): that the available account's cached balance is
// the sum of its journal lines, and that each of the contributor's
// movements since the scrubber's last complete cycle began (its newest
// ownAccountRecent) is what its audit entry records. Older movements that
// cycle compared with the log already; an edit of one of them after the
// cycle passed it is the window that remains, until the next cycle (docs/ledger.md).
// A disagreement is reported at once — the economy freezes — and the
// withdrawal refused: CC a writer of the database made cannot be paid out
// on the strength of a balance the log does not back.
func (a *App) checkOwnAccount(ctx context.Context, contributorID string) error {
	began := a.now()
	r := a.read()
	var found []store.Finding
	acct := credit.Available(contributorID).Name()
	sum, ok, err := r.Integrity.AccountSum(ctx, acct)
	if err != nil {
		return err
	}
	if ok && sum.Balance != sum.Lines {
		found = append(found, balanceFinding(acct, fmt.Sprintf("account %s holds %s CC, but its journal lines add up to %s (a withdrawal's check)",
			acct, sum.Balance, sum.Lines)))
	}
	var since time.Time
	if st, _, err := a.loadScrub(ctx, r); err != nil {
		return err
	} else if st.Last != nil {
		since = st.Last.StartedAt
	}
	recent, err := r.Integrity.RecentMovements(ctx, contributorID, since, ownAccountRecent)
	if err != nil {
		return err
	}
	var logged []loggedMovement
	for _, m := range recent {
		if m.Logged == nil {
			found = append(found, journalFinding(m.EntryID, 0,
				fmt.Sprintf("journal entry %s is recorded by no audit entry (a withdrawal's check)", m.EntryID)))
			continue
		}
		logged = append(logged, loggedMovement{seq: m.Seq, m: audit.Recorded(*m.Logged)})
	}
	if len(found) == 0 && len(logged) > 0 {
		// Only a disagreement needs the repairs' record (settled).
		diff, err := a.compareJournal(ctx, r, settled{}, logged)
		if err != nil {
			return err
		}
		found = diff
	}
	if len(found) == 0 {
		return nil
	}
	s, err := a.settledPlaces(ctx, r)
	if err != nil {
		return err
	}
	if found, err = a.stillFound(ctx, r, s, found); err != nil || len(found) == 0 {
		return err
	}
	if err := a.report(ctx, "withdrawal", began, found...); err != nil {
		return err
	}
	return allowed(ModeFrozen, credit.KindWithdraw)
}

// stillFound drops the journal findings a repair settled.
func (a *App) stillFound(ctx context.Context, r Repos, s settled, found []store.Finding) ([]store.Finding, error) {
	var problems []linkProblem
	var out []store.Finding
	byEntry := map[string]store.Finding{}
	for _, f := range found {
		if f.Kind != FindingJournal || f.EntryID == "" {
			out = append(out, f)
			continue
		}
		problems = append(problems, linkProblem{entryID: f.EntryID, seq: f.Seq, detail: f.Detail})
		byEntry[f.EntryID] = f
	}
	left, err := a.unsettled(ctx, r, s, problems)
	if err != nil {
		return nil, err
	}
	for _, p := range left {
		out = append(out, byEntry[p.entryID])
	}
	return out, nil
}

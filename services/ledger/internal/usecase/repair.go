package usecase

import (
	"context"
	"fmt"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// Repair is what a repair did.
type Repair struct {
	Found    audit.Result
	Repaired bool
	// Seq is the repair entry's seq (0 when nothing was repaired).
	Seq int64
	// Break is the stretch the repair accepted.
	Break audit.Break
}

// RepairAudit verifies the chain and, when it is broken, appends a repair
// entry that records the first break (audit.PlanBreak: the stretch of
// entries accepted, their fingerprint and the hash the chain resumes from)
// and chains to the current head. Rows are never rewritten or deleted, and
// verification keeps walking the whole chain: it accepts that stretch,
// reports it as repaired, and checks everything else, before and after it.
// One repair records one break; should verification then find another, it
// needs a repair of its own. A sound chain is left alone.
func (a *App) RepairAudit(ctx context.Context, actor string) (Repair, error) {
	var out Repair
	err := a.tx(ctx, func(r Repos) error {
		eco, err := r.Credit.LockEconomy(ctx)
		if err != nil {
			return err
		}
		found, v, err := a.walk(ctx, r, 1, audit.Genesis, eco.AuditSeq, nil)
		if err != nil {
			return err
		}
		out = Repair{Found: found}
		if found.OK {
			return nil
		}
		d, _ := v.Divergence()
		// What the entry after the one found chains to decides where the
		// rest of the chain resumes (audit.PlanBreak).
		nextPrev := eco.AuditHead
		if d.Found != nil && d.Found.Entry.Seq < eco.AuditSeq {
			next, err := r.Audit.Range(ctx, d.Found.Entry.Seq, 1)
			if err != nil {
				return err
			}
			if len(next) == 1 && next[0].Entry.Seq <= eco.AuditSeq {
				nextPrev = next[0].PrevHash
			}
		}
		b := audit.PlanBreak(d, nextPrev, eco.AuditSeq, eco.AuditHead)
		if err := a.appendNow(ctx, r, &eco, audit.RepairEntry(0, a.now(), actor, found, b)); err != nil {
			return err
		}
		b.RepairSeq, b.Reason, b.LastVerified, b.FirstDivergent = eco.AuditSeq, found.Reason, found.LastVerified, found.FirstDivergent
		if err := r.Credit.InsertIncident(ctx, store.Incident{ID: a.cfg.NewID(), Kind: "audit_repair", Severity: "critical",
			Detail: fmt.Sprintf("audit chain broken after seq %d at seq %d (%s); repair entry %d accepts seq %d to %d",
				found.LastVerified, found.FirstDivergent, found.Reason, eco.AuditSeq, b.From, b.To),
			Actor: actor, CreatedAt: a.now()}); err != nil {
			return err
		}
		out.Repaired, out.Seq, out.Break = true, eco.AuditSeq, b
		return nil
	})
	return out, err
}

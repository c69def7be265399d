package usecase

import (
	"context"

	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

// ImpactCmd is the ledger's totals of an idea's impact records.
type ImpactCmd struct {
	IdeaID string
	Impact idea.Impact
}

func (cmd ImpactCmd) validate() error {
	var errs []fault.FieldError
	t := cmd.Impact
	if cmd.IdeaID == "" {
		errs = append(errs, fault.Field("idea_id", "is required"))
	}
	if t.Version <= 0 || t.UsageRecords < 0 || t.RevenueRecords < 0 || t.UsageRecords+t.RevenueRecords != t.Version {
		errs = append(errs, fault.Field("version", "must be the number of records the totals sum, usage_records + revenue_records, at least 1"))
	}
	if t.EarnedMicros < 0 || t.RevenueMicros < 0 || t.PaidMicros < 0 {
		errs = append(errs, fault.Field("impact", "amounts must not be negative"))
	}
	if t.LastAt.IsZero() {
		errs = append(errs, fault.Field("last_recorded_at", "is required"))
	}
	if len(errs) > 0 {
		return fault.Validation(errs...)
	}
	return nil
}

// SetImpact stores the ledger's impact totals of an idea when they are
// newer than the ones it holds (idea.SetImpact), and reports whether they
// were. The totals are the ledger's record, not an edit of the idea: its
// updated_at stays, and an archived idea takes them too (its records
// stay in the ledger).
func (a *App) SetImpact(ctx context.Context, cmd ImpactCmd) (bool, error) {
	if err := cmd.validate(); err != nil {
		return false, err
	}
	var applied bool
	err := a.tx(ctx, func(r Repos) error {
		before, err := r.Ideas.Lock(ctx, cmd.IdeaID)
		if err != nil {
			return err
		}
		after := before
		if applied = after.SetImpact(cmd.Impact); !applied {
			return nil
		}
		return r.Ideas.Update(ctx, before, after)
	})
	return applied, IdeaError(err, cmd.IdeaID)
}

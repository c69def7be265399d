package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
	"github.com/foundryhq/foundry/services/portfolio/internal/store"
)

// revisions is the history of what steers an idea: idea_revisions.
var revisions = newHistory("the revisions", "idea_revisions",
	"name, potential_value, estimated_cost, actual_value, actual_cost, confidence, resistance_risk, values_accepted, actor, actor_handle, reason")

// RecordRevision implements store.Ideas.
func (r *Ideas) RecordRevision(ctx context.Context, v store.Revision) error {
	s := v.Steering
	if _, err := r.q.Exec(ctx, `INSERT INTO idea_revisions (id, idea_id, name, potential_value, estimated_cost,
		actual_value, actual_cost, confidence, resistance_risk, values_accepted, at, actor, actor_handle, reason)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
		v.ID, v.IdeaID, s.Name, s.PotentialValue, s.EstimatedCost, s.ActualValue, s.ActualCost, s.Confidence,
		s.ResistanceRisk, s.Review == idea.Accepted, database.Micros(v.At), v.Actor, database.NullString(v.ActorHandle),
		v.Reason); err != nil {
		return fmt.Errorf("record a revision of %s: %w", v.IdeaID, err)
	}
	return nil
}

// Revisions implements store.Ideas in one round trip (history.page)
// through the (idea_id, at, id) index.
func (r *Ideas) Revisions(ctx context.Context, ideaID string, limit, offset int) ([]store.Revision, int, error) {
	return page(ctx, r.q, revisions, ideaID, limit, offset, func() ([]any, func(string, time.Time) store.Revision) {
		var (
			name, actor, handle, reason                            *string
			potential, cost, actualValue, actualCost, conf, resist *float64
			accepted                                               *bool
		)
		dest := []any{&name, &potential, &cost, &actualValue, &actualCost, &conf, &resist, &accepted, &actor, &handle, &reason}
		return dest, func(id string, at time.Time) store.Revision {
			review := idea.Pending
			if *accepted {
				review = idea.Accepted
			}
			return store.Revision{ID: id, IdeaID: ideaID, At: at, Actor: *actor, ActorHandle: text(handle), Reason: *reason,
				Steering: idea.Steering{Name: *name, PotentialValue: *potential, EstimatedCost: *cost, ActualValue: *actualValue,
					ActualCost: *actualCost, Confidence: *conf, ResistanceRisk: *resist, Review: review}}
		}
	})
}

package handler

import (
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/wire"
	"github.com/foundryhq/foundry/services/portfolio/internal/idea"
)

// toProto renders an idea; the score is shown to 4 decimals.
func toProto(i idea.Idea) *portfoliov1.Idea {
	c, v := i.Costs(), i.Values()
	p := &portfoliov1.Idea{
		Id: i.ID, Name: i.Name, Description: i.Description,
		PotentialValue: i.PotentialValue, EstimatedCost: i.EstimatedCost,
		ActualValue: i.ActualValue, ActualCost: i.ActualCost,
		Confidence: i.Confidence, ResistanceRisk: i.ResistanceRisk,
		Stage: wire.Enum[portfoliov1.Stage](portfoliov1.Stage_value, i.Stage), ManifestationStatus: string(i.Manifestation),
		Tags:              append([]string{}, i.Tags...),
		CostVector:        &portfoliov1.CostVector{Compute: c.Compute, Infrastructure: c.Infrastructure, HumanAttention: c.HumanAttention},
		ValueVector:       &portfoliov1.ValueVector{Adoption: v.Adoption, Lineage: v.Lineage, FrictionAvoided: v.FrictionAvoided},
		Score:             idea.Round4(i.Score()),
		OpenQuestionCount: int32(i.OpenQuestions),
		Archived:          i.Archived,
		CreatedAt:         wire.Time(i.CreatedAt),
		UpdatedAt:         wire.Time(i.UpdatedAt),
		ReviewStatus:      string(i.Review),
	}
	p.ParentIdeaId, p.CreatedBy = wire.OptString(i.ParentID), wire.OptString(i.CreatedBy)
	if t := i.Impact; t != nil {
		p.Impact = &portfoliov1.IdeaImpact{UsageRecords: t.UsageRecords,
			RevenueRecords: t.RevenueRecords, EarnedCc: micros(t.EarnedMicros),
			RevenueUsd: micros(t.RevenueMicros), PaidCc: micros(t.PaidMicros), LastRecordedAt: wire.Time(t.LastAt)}
	}
	return p
}

// micros renders micro-units as the decimal they are: the division by
// 10^6 gives the double nearest to it, which renders as its digits.
func micros(v int64) float64 { return float64(v) / 1e6 }

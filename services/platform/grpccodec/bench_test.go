package grpccodec

import (
	"fmt"
	"testing"

	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// BenchmarkCodec compares the codec with gRPC's default (protobuf-go's
// reflection) on what the hot routes carry: a page of 50 ideas, a
// contribution with its metadata, an agent task. Each unmarshal includes
// allocating the message, as gRPC's generated code does on every call.
// docs/performance.md records the numbers.
func BenchmarkCodec(b *testing.B) {
	messages := []struct {
		name string
		new  func() proto.Message
		msg  proto.Message
	}{
		{"ListIdeasResponse-50", func() proto.Message { return listIdeasResponse() }, listIdeas(50)},
		{"Contribution", func() proto.Message { return &ledgerv1.Contribution{} }, contribution()},
		{"AgentTask", func() proto.Message { return &agentv1.AgentTask{} }, agentTask()},
	}
	codecs := []struct {
		name  string
		codec encoding.CodecV2
	}{{"vtproto", Codec{}}, {"grpc-default", protoCodec}}
	for _, m := range messages {
		wire, err := proto.Marshal(m.msg)
		if err != nil {
			b.Fatal(err)
		}
		for _, c := range codecs {
			b.Run(fmt.Sprintf("%s/%s/marshal", m.name, c.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(wire)))
				for b.Loop() {
					out, err := c.codec.Marshal(m.msg)
					if err != nil {
						b.Fatal(err)
					}
					out.Free()
				}
			})
			b.Run(fmt.Sprintf("%s/%s/unmarshal", m.name, c.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(wire)))
				data := mem.BufferSlice{mem.SliceBuffer(wire)}
				for b.Loop() {
					if err := c.codec.Unmarshal(data, m.new()); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func listIdeasResponse() *portfoliov1.ListIdeasResponse { return &portfoliov1.ListIdeasResponse{} }

// listIdeas is a page of n ideas as GET /api/ideas answers it.
func listIdeas(n int) *portfoliov1.ListIdeasResponse {
	r := &portfoliov1.ListIdeasResponse{
		Summary: &portfoliov1.IdeaSummary{TotalIdeas: 1000, UnvalidatedIdeas: 640, ValidatedIdeas: 360,
			TotalPotentialValue: 1234567.5, TotalActualValue: 234567.25, TotalValueGap: 1000000.25},
		Pagination: &commonv1.Pagination{Limit: int32(n), Total: 1000, HasMore: true, NextCursor: "eyJzIjo0Mi41LCJpZCI6ImlkZWEtMDA0OSJ9"},
	}
	for i := range n {
		idea := &portfoliov1.Idea{
			Id:                  fmt.Sprintf("idea-%04d-7f3c9a2e-5b1d-4e8f-9a6c-2d4b8e1f3a5c", i),
			Name:                fmt.Sprintf("Solar kettle, revision %d", i),
			Description:         "A kettle that boils water with the sun's heat collected by a folding parabolic mirror, for camps and places without power; ships flat, weighs under two kilograms.",
			PotentialValue:      50000 + float64(i)*125.5,
			EstimatedCost:       12000.75,
			ActualValue:         float64(i) * 10,
			ActualCost:          float64(i) * 3.5,
			Confidence:          0.65,
			ResistanceRisk:      0.2,
			Stage:               portfoliov1.Stage_implementing,
			ManifestationStatus: "partial",
			Tags:                []string{"energy", "outdoor", "hardware"},
			CostVector:          &portfoliov1.CostVector{Compute: 120, Infrastructure: 800.5, HumanAttention: 40},
			ValueVector:         &portfoliov1.ValueVector{Adoption: 0.4, Lineage: 0.1, FrictionAvoided: 0.3},
			Score:               42.5 - float64(i)*0.1,
			OpenQuestionCount:   int32(i % 4),
			CreatedAt:           "2026-11-20T10:15:30.123456Z",
			UpdatedAt:           "2026-11-24T08:01:02.654321Z",
		}
		if i%5 == 0 {
			idea.ParentIdeaId = wrapperspb.String("idea-0000-7f3c9a2e-5b1d-4e8f-9a6c-2d4b8e1f3a5c")
		}
		r.Ideas = append(r.Ideas, idea)
	}
	return r
}

// contribution is one contribution as POST /api/contributions answers it.
func contribution() *ledgerv1.Contribution {
	meta, err := structpb.NewStruct(map[string]any{
		"commit": "9f2c1e7a4b3d5f60718293a4b5c6d7e8f9012345", "files_changed": 7.0,
		"tool": "claude", "tags": []any{"backend", "ledger"},
	})
	if err != nil {
		panic(err)
	}
	return &ledgerv1.Contribution{
		Id: "c0ffee00-1234-4abc-8def-0123456789ab", ContributorId: "5b1d4e8f-9a6c-4d4b-8e1f-3a5c7f3c9a2e",
		AssetId: "asset-7f3c9a2e", CostAmount: 12.5, CoherenceScore: 0.82, Metadata: meta, Source: "github",
		CreatedAt: "2026-11-24T08:01:02.654321Z", ContributorHandle: wrapperspb.String("ada"),
	}
}

// agentTask is a running task as GET /api/agent/tasks/{id} answers it.
func agentTask() *agentv1.AgentTask {
	ctx, err := structpb.NewStruct(map[string]any{"idea_id": "idea-0042", "repo": "foundryhq/foundry", "priority": 2.0})
	if err != nil {
		panic(err)
	}
	return &agentv1.AgentTask{
		Id: "task_7f3c9a2e5b1d4e8f", TaskId: "task_7f3c9a2e5b1d4e8f", Direction: "Write the spec for the solar kettle's folding mirror",
		TaskType: "spec", Status: agentv1.TaskStatus_running, Model: "claude-sonnet", Executor: "claude-code",
		Command:     "claude -p 'Write the spec for the solar kettle' --output-format json",
		Output:      "Reading the idea and its open questions...\nDrafting the mirror's hinge section.",
		ProgressPct: 40, CurrentStep: "drafting", Context: ctx, WorkerId: wrapperspb.String("worker-3"),
		PromptVariant: wrapperspb.String("b"), ValueScore: wrapperspb.Double(0.7), ResourceCost: wrapperspb.Double(0.12),
		CreatedAt: "2026-11-24T08:01:02.654321Z", UpdatedAt: "2026-11-24T08:03:10.000001Z",
		StartedAt: wrapperspb.String("2026-11-24T08:01:05.000000Z"), Tier: "standard", Attempts: 1,
		LeaseExpiresAt: wrapperspb.String("2026-11-24T08:06:05.000000Z"),
	}
}

package handler_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	opsinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	"github.com/foundryhq/foundry/services/ops/internal/graph"
	"github.com/foundryhq/foundry/services/ops/internal/handler"
	"github.com/foundryhq/foundry/services/ops/internal/store"
	"github.com/foundryhq/foundry/services/ops/internal/telemetry"
	"github.com/foundryhq/foundry/services/ops/internal/usage"
	"github.com/foundryhq/foundry/services/ops/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/database"
	"github.com/foundryhq/foundry/services/platform/database/dbtest"
	"github.com/foundryhq/foundry/services/platform/fault"
)

// memStore keeps what the use cases store, so the fuzz targets below run
// whole requests without touching a table (their transactions open on an
// empty SQLite database). Every node exists. Methods they do not reach are
// left to the embedded nil interfaces.
type memStore struct {
	store.Nodes
	store.Edges
	store.UsageSnapshots
	node   store.Node
	edge   store.Edge
	filter store.EdgeFilter
	usage  store.UsageSnapshot
}

func (m *memStore) Upsert(_ context.Context, n store.Node) (store.Node, bool, error) {
	m.node = n
	return n, true, nil
}

func (m *memStore) Get(_ context.Context, id string) (store.Node, error) {
	return store.Node{ID: id}, nil
}

func (m *memStore) Create(_ context.Context, e store.Edge) error { m.edge = e; return nil }

func (m *memStore) List(_ context.Context, f store.EdgeFilter) ([]store.Edge, int, error) {
	m.filter = f
	return nil, 0, nil
}

func (m *memStore) Add(_ context.Context, s store.UsageSnapshot) error {
	m.usage = s
	return nil
}

func (m *memStore) Trim(context.Context, string, int) (int64, error) { return 0, nil }

// memSink keeps the telemetry events written.
type memSink struct {
	telemetry.Sink
	events []telemetry.Event
}

func (*memSink) Backend() string { return telemetry.File }

func (s *memSink) Write(_ context.Context, events []telemetry.Event) error {
	s.events = append(s.events, events...)
	return nil
}

// fuzzDB is the empty database the fuzz targets' transactions open on.
func fuzzDB(f *testing.F) *database.DB { return dbtest.Open(f, database.SQLite, "ops", nil) }

// fuzzHandler returns a handler over m (and sink, when not nil).
func fuzzHandler(db *database.DB, m *memStore, sink telemetry.Sink) *handler.Handler {
	open := func(database.Querier) usecase.Repos { return usecase.Repos{Nodes: m, Edges: m, Usage: m} }
	return handler.New(usecase.New(db, open, usecase.Config{Telemetry: sink, Clock: clock.NewFake(t0)}))
}

// decodeRequest reads a request body as the gateway hands it on (protojson
// with unknown fields refused); ok is false for a body it would refuse.
func decodeRequest(body []byte, m proto.Message) bool {
	return protojson.Unmarshal(body, m) == nil
}

// requireAnswer checks a handler's outcome: a refusal is a 422 whose fields
// are among allowed (or inside one: "metrics[0].name"), and an answer
// always encodes (no 5xx on the way out). It reports whether there was an
// answer.
func requireAnswer(t *testing.T, resp proto.Message, err error, allowed ...string) bool {
	t.Helper()
	if err != nil {
		fe, ok := fault.As(err)
		require.True(t, ok, "want a validation failure, got %v", err)
		require.Equal(t, fault.Invalid, fe.Kind, "%v", err)
		for _, f := range fe.Fields {
			known := false
			for _, a := range allowed {
				known = known || f.Field == a || strings.HasPrefix(f.Field, a+"[")
			}
			require.True(t, known, "field %q is not one of %v", f.Field, allowed)
		}
		return false
	}
	_, merr := proto.Marshal(resp)
	require.NoError(t, merr)
	_, merr = protojson.Marshal(resp)
	require.NoError(t, merr)
	return true
}

// FuzzUpsertNode checks a node upsert end to end: a refusal is a 422 on
// node_type, external_id or payload; an accepted node has a valid type,
// and its payload comes back as sent after the store's JSON encoding.
func FuzzUpsertNode(f *testing.F) {
	f.Add([]byte(`{"node_type":"idea","external_id":"i-1","payload":{"k":"v","n":[1,2.5,null,true,{"x":{}}]}}`))
	f.Add([]byte(`{"node_type":" ","external_id":"","payload":null}`))
	f.Add([]byte(`{"node_type":"t","payload":{"big":1e308,"neg":-0,"s":"\u0000\ud83d\ude00"}}`))
	f.Add([]byte(`{"node_type":"` + strings.Repeat("é", 65) + `","payload":{}}`))
	f.Add([]byte(`{"node_type":"t","payload":{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":[[[[[[[]]]]]]]}}}}}}}}}`))
	db := fuzzDB(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req opsv1.UpsertNodeRequest
		if !decodeRequest(body, &req) {
			return
		}
		m := &memStore{}
		resp, err := fuzzHandler(db, m, nil).UpsertNode(context.Background(), &req)
		if !requireAnswer(t, resp, err, "node_type", "external_id", "payload") {
			return
		}
		require.Empty(t, graph.CheckType("node_type", req.GetNodeType()))
		require.Equal(t, req.GetNodeType(), resp.GetNode().GetNodeType())
		if req.ExternalId != nil {
			require.Equal(t, req.GetExternalId(), resp.GetNode().GetExternalId().GetValue())
		}
		require.NotNil(t, req.GetPayload())
		require.True(t, proto.Equal(req.GetPayload(), resp.GetNode().GetPayload()), "payload %v came back as %v",
			req.GetPayload(), resp.GetNode().GetPayload())
	})
}

// FuzzCreateEdge checks an edge creation end to end: a refusal is a 422 on
// the fields at fault; an accepted edge links canonical (lowercase) node
// ids, has a finite weight (1 when none was sent) and its payload as sent.
func FuzzCreateEdge(f *testing.F) {
	f.Add([]byte(`{"edge_type":"depends_on","from_node_id":"6BA7B810-9DAD-11D1-80B4-00C04FD430C8","to_node_id":"6ba7b811-9dad-11d1-80b4-00c04fd430c8","weight":0.5}`))
	f.Add([]byte(`{"edge_type":"e","from_node_id":"x","to_node_id":"","weight":"NaN","payload":{}}`))
	f.Add([]byte(`{"edge_type":"e","from_node_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","to_node_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","weight":"Infinity"}`))
	f.Add([]byte(`{"edge_type":"e","from_node_id":"urn:uuid:6ba7b810-9dad-11d1-80b4-00c04fd430c8","to_node_id":"{6ba7b810-9dad-11d1-80b4-00c04fd430c8}"}`))
	db := fuzzDB(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req opsv1.CreateEdgeRequest
		if !decodeRequest(body, &req) {
			return
		}
		m := &memStore{}
		resp, err := fuzzHandler(db, m, nil).CreateEdge(context.Background(), &req)
		if !requireAnswer(t, resp, err, "edge_type", "from_node_id", "to_node_id", "weight", "payload") {
			return
		}
		e := resp.GetEdge()
		require.Equal(t, strings.ToLower(req.GetFromNodeId()), e.GetFromNodeId())
		require.Equal(t, strings.ToLower(req.GetToNodeId()), e.GetToNodeId())
		require.False(t, math.IsNaN(e.GetWeight()) || math.IsInf(e.GetWeight(), 0))
		if req.Weight == nil {
			require.Equal(t, graph.DefaultWeight, e.GetWeight())
		} else {
			require.Equal(t, req.GetWeight(), e.GetWeight())
		}
		if req.GetPayload() != nil {
			require.True(t, proto.Equal(req.GetPayload(), e.GetPayload()))
		} else {
			require.Empty(t, e.GetPayload().GetFields())
		}
	})
}

// FuzzListNodeEdges checks the traversal query: a refusal is a 422; an
// accepted one asks the store for a canonical node id, one of the three
// directions and a page within 1..MaxLimit from a non-negative offset.
func FuzzListNodeEdges(f *testing.F) {
	f.Add([]byte(`{"node_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","direction":"out","limit":500,"offset":0}`))
	f.Add([]byte(`{"node_id":"6BA7B810-9DAD-11D1-80B4-00C04FD430C8","direction":"sideways","limit":501,"offset":-1,"edge_type":" "}`))
	f.Add([]byte(`{"node_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","limit":0}`))
	db := fuzzDB(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req opsv1.ListNodeEdgesRequest
		if !decodeRequest(body, &req) {
			return
		}
		m := &memStore{}
		resp, err := fuzzHandler(db, m, nil).ListNodeEdges(context.Background(), &req)
		if !requireAnswer(t, resp, err, "node_id", "direction", "edge_type", "limit", "offset") {
			return
		}
		require.Equal(t, strings.ToLower(req.GetNodeId()), m.filter.Node)
		require.Contains(t, []graph.Direction{graph.Outgoing, graph.Incoming, graph.Both}, m.filter.Direction)
		require.True(t, m.filter.Limit >= 1 && m.filter.Limit <= graph.MaxLimit)
		require.GreaterOrEqual(t, m.filter.Offset, 0)
	})
}

// FuzzIngestUsageSnapshot checks an agent's usage report end to end: a
// refusal is a 422; an accepted snapshot is stored under its normalised
// provider name and family, with valid metrics and a collected_at that is
// not in the future (beyond the allowed skew).
func FuzzIngestUsageSnapshot(f *testing.F) {
	f.Add([]byte(`{"provider":"Claude-Code","collected_at":"2026-05-01T11:00:00Z","metrics":[{"name":"weekly","value":1,"limit":10,"is_summary":true}]}`))
	f.Add([]byte(`{"provider":"gemini","metrics":[]}`))
	f.Add([]byte(`{"provider":"openai","collected_at":"2126-01-01T00:00:00Z","metrics":[{"name":"a","value":"NaN","limit":"-Infinity"}]}`))
	f.Add([]byte(`{"provider":"openai","collected_at":"2026-05-01T12:04:59.999999999+00:00","metrics":[{"name":"a","value":0},{"name":"a","value":1}]}`))
	f.Add([]byte(`{"provider":"codex","collected_at":"2026-05-01 12:00:00","metrics":[{"name":"a","value":1}]}`))
	db := fuzzDB(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req opsv1.IngestUsageSnapshotRequest
		if !decodeRequest(body, &req) {
			return
		}
		m := &memStore{}
		resp, err := fuzzHandler(db, m, nil).IngestUsageSnapshot(context.Background(), &req)
		if !requireAnswer(t, resp, err, "provider", "metrics", "collected_at") {
			return
		}
		s := m.usage
		family, verr := usage.Validate(s.Provider, s.Metrics)
		require.NoError(t, verr)
		require.Equal(t, family, s.Family)
		require.Equal(t, usage.NormalizeProvider(req.GetProvider()), s.Provider)
		require.False(t, s.CollectedAt.After(t0.Add(5*time.Minute)), "collected_at %v is in the future", s.CollectedAt)
	})
}

// FuzzRecordEvents checks runtime telemetry events are kept only in the
// form telemetry may hold, whatever a sender puts in them: a route
// without query string or fragment, bounded lengths, a finite
// non-negative duration and a UTC time.
func FuzzRecordEvents(f *testing.F) {
	f.Add([]byte(`{"events":[{"method":"get","route":"GET /api/ideas?token=s3cret#x","status":200,"duration_ms":1.5,"occurred_at":"2026-05-01T11:00:00Z"}]}`))
	f.Add([]byte(`{"events":[{"method":"` + strings.Repeat("é", 20) + `","route":"` + strings.Repeat("r", 300) + `","duration_ms":"NaN","occurred_at":"x"}]}`))
	f.Add([]byte(`{"events":[{"duration_ms":"-Infinity"},{}]}`))
	db := fuzzDB(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		var req opsinternalv1.RecordEventsRequest
		if !decodeRequest(body, &req) {
			return
		}
		sink := &memSink{}
		resp, err := fuzzHandler(db, &memStore{}, sink).RecordEvents(context.Background(), &req)
		if !requireAnswer(t, resp, err, "events") {
			return
		}
		require.Len(t, sink.events, len(req.GetEvents()))
		for _, e := range sink.events {
			require.False(t, strings.ContainsAny(e.Route, "?#"), "route %q", e.Route)
			require.LessOrEqual(t, utf8.RuneCountInString(e.Route), 256)
			require.LessOrEqual(t, utf8.RuneCountInString(e.Method), 16)
			require.Equal(t, strings.ToUpper(e.Method), e.Method)
			require.False(t, math.IsNaN(e.DurationMS) || math.IsInf(e.DurationMS, 0) || e.DurationMS < 0)
			require.Equal(t, time.UTC, e.OccurredAt.Location())
		}
	})
}

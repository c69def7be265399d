package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/fieldmaskpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	authzv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
	commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	opsv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// publicPackages are the packages of the public API, each of which the
// walk of the registry must find (a package missing would pass the test
// by checking nothing of it).
var publicPackages = []string{
	"foundry.agent.v1", "foundry.authz.v1", "foundry.common.v1",
	"foundry.ledger.v1", "foundry.ops.v1", "foundry.portfolio.v1",
}

// publicMessageTypes are every message of the public Foundry protos
// (foundry.*.v1, not foundry.internal), nested ones included, map entries
// excepted: a superset of what the gateway sends. Sorted by name.
func publicMessageTypes(t testing.TB) []protoreflect.MessageType {
	t.Helper()
	// Referenced so the packages (and their files) are linked in.
	_ = []proto.Message{&agentv1.AgentTask{}, &authzv1.Policy{}, &commonv1.Pagination{}, &ledgerv1.Contribution{}, &opsv1.ReadyResponse{}, &portfoliov1.Idea{}}
	var out []protoreflect.MessageType
	seen := map[string]bool{}
	var walk func(protoreflect.MessageDescriptors)
	walk = func(mds protoreflect.MessageDescriptors) {
		for i := range mds.Len() {
			md := mds.Get(i)
			if md.IsMapEntry() {
				continue
			}
			mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
			require.NoError(t, err, md.FullName())
			out = append(out, mt)
			walk(md.Messages())
		}
	}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		pkg := string(fd.Package())
		if strings.HasPrefix(pkg, "foundry.") && strings.HasSuffix(pkg, ".v1") && !strings.HasPrefix(pkg, "foundry.internal.") {
			seen[pkg] = true
			walk(fd.Messages())
		}
		return true
	})
	for _, p := range publicPackages {
		require.True(t, seen[p], "package %s not registered", p)
	}
	slices.SortFunc(out, func(a, b protoreflect.MessageType) int {
		return strings.Compare(string(a.Descriptor().FullName()), string(b.Descriptor().FullName()))
	})
	return out
}

// requireSameRender fails unless marshalJSON and marshalProtojson agree on
// msg: the same bytes, or the same error.
func requireSameRender(t testing.TB, what string, msg proto.Message) (rendered bool) {
	t.Helper()
	want, wantErr := marshalProtojson(msg)
	got, gotErr := marshalJSON(msg)
	if wantErr != nil || gotErr != nil {
		if wantErr == nil || gotErr == nil || wantErr.Error() != gotErr.Error() {
			t.Fatalf("%s: error %v, protojson's %v", what, gotErr, wantErr)
		}
		return false
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %s\n got  %s\n want %s", what, firstDifference(got, want), got, want)
	}
	return true
}

// TestRenderMatchesProtojson renders every public Foundry message, empty,
// nil and filled at random many times over, and the kitchen-sink messages
// below (every field kind, map key kind and well-known type, proto2 and
// extensions), and requires protojson's bytes (or its error) each time.
func TestRenderMatchesProtojson(t *testing.T) {
	t.Parallel()
	types := append(publicMessageTypes(t), sinkTypes(t)...)
	instances := 400
	if testing.Short() {
		instances = 40
	}
	f := newFiller(1)
	var total, errs int
	for _, mt := range types {
		name := string(mt.Descriptor().FullName())
		requireSameRender(t, name+" (zero)", mt.New().Interface())
		requireSameRender(t, name+" (nil)", mt.Zero().Interface())
		rendered := 0
		for i := range instances {
			f.reseed(uint64(i))
			m := mt.New()
			f.fill(m, 0)
			if requireSameRender(t, fmt.Sprintf("%s (instance %d)", name, i), m.Interface()) {
				rendered++
			}
		}
		// Most instances must render: a filler that made every one fail
		// would compare nothing but errors.
		require.Greater(t, rendered, instances/2, name)
		total += instances + 2
		errs += instances - rendered
	}
	t.Logf("%d message types, %d instances (%d of them refused by both)", len(types), total, errs)
}

// TestRenderEdgeCases pins the values protojson spells in special ways.
func TestRenderEdgeCases(t *testing.T) {
	t.Parallel()
	st, err := structpb.NewStruct(map[string]any{
		"b": []any{1.0, "x", nil, true, map[string]any{"z": 1e21, "a": 1e-7}},
		"a": "<&>\u2028\x00\x1f\"\\/é😀", "": math.Copysign(0, -1),
	})
	require.NoError(t, err)
	for _, m := range []proto.Message{
		st, structpb.NewNullValue(), structpb.NewListValue(&structpb.ListValue{}),
		&structpb.Value{}, structpb.NewNumberValue(math.NaN()), structpb.NewNumberValue(math.Inf(-1)),
		wrapperspb.Double(math.NaN()), wrapperspb.Float(float32(math.Inf(1))), wrapperspb.Double(math.Copysign(0, -1)),
		wrapperspb.Double(1e20), wrapperspb.Double(1e21), wrapperspb.Double(1e-6), wrapperspb.Double(9.99e-7),
		wrapperspb.Float(1e-7), wrapperspb.Float(16777217), wrapperspb.Int64(math.MinInt64), wrapperspb.UInt64(math.MaxUint64),
		wrapperspb.Bytes([]byte{0xff, 0, 1}), wrapperspb.String("\xff"), wrapperspb.String("\uFFFD"),
		&timestamppb.Timestamp{}, &timestamppb.Timestamp{Seconds: -62135596800}, &timestamppb.Timestamp{Seconds: 253402300799, Nanos: 999999999},
		&timestamppb.Timestamp{Seconds: 1, Nanos: 1000}, &timestamppb.Timestamp{Seconds: 1, Nanos: 1000000}, &timestamppb.Timestamp{Seconds: 253402300800},
		&timestamppb.Timestamp{Nanos: -1},
		&durationpb.Duration{}, &durationpb.Duration{Seconds: -1, Nanos: -500000000}, &durationpb.Duration{Nanos: -1},
		&durationpb.Duration{Seconds: 315576000000}, &durationpb.Duration{Seconds: 315576000001}, &durationpb.Duration{Seconds: 1, Nanos: -1},
		&fieldmaskpb.FieldMask{}, &fieldmaskpb.FieldMask{Paths: []string{"a.b_c", "d"}}, &fieldmaskpb.FieldMask{Paths: []string{"aB"}},
		&emptypb.Empty{}, &anypb.Any{}, mustAny(t, &portfoliov1.Idea{Name: "x"}), mustAny(t, wrapperspb.String("s")),
		&anypb.Any{TypeUrl: "type.googleapis.com/no.Such"},
		&portfoliov1.ListIdeasResponse{Ideas: []*portfoliov1.Idea{{}, nil}},
	} {
		requireSameRender(t, fmt.Sprintf("%T %v", m, m), m)
	}
	var nilMsg proto.Message
	got, err := marshalJSON(nilMsg)
	require.NoError(t, err)
	require.Equal(t, "{}", string(got))
}

func mustAny(t *testing.T, m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	require.NoError(t, err)
	return a
}

// TestCompactJSONMarshalsMessagesWithRender checks the wiring: the mux's
// marshaller renders a message as marshalJSON does and anything else (a
// response_body that is no message) as before.
func TestCompactJSONMarshalsMessagesWithRender(t *testing.T) {
	t.Parallel()
	m := compactJSON{&runtime.JSONPb{MarshalOptions: marshalOptions, UnmarshalOptions: unmarshalOptions}}
	idea := &portfoliov1.Idea{Name: "a, b", Tags: []string{"x"}}
	got, err := m.Marshal(idea)
	require.NoError(t, err)
	want, err := marshalProtojson(idea)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got))
	got, err = m.Marshal([]*portfoliov1.Idea{idea, idea})
	require.NoError(t, err)
	require.Equal(t, "["+string(want)+","+string(want)+"]", string(got))
}

// FuzzRender decodes the fuzzer's bytes as one of the public messages (or
// the kitchen sink) and requires protojson's rendering of it.
func FuzzRender(f *testing.F) {
	types := append(publicMessageTypes(f), sinkTypes(f)...)
	fl := newFiller(2)
	for i, mt := range types {
		if i%17 != 0 && !strings.HasSuffix(string(mt.Descriptor().Name()), "Sink") {
			continue
		}
		m := mt.New()
		fl.reseed(uint64(i))
		fl.fill(m, 0)
		b, err := proto.MarshalOptions{AllowPartial: true, Deterministic: true}.Marshal(m.Interface())
		if err != nil {
			continue // invalid UTF-8, which the decoder would refuse
		}
		f.Add(uint16(i), b)
	}
	f.Fuzz(func(t *testing.T, which uint16, data []byte) {
		mt := types[int(which)%len(types)]
		m := mt.New().Interface()
		if err := (proto.UnmarshalOptions{AllowPartial: true}).Unmarshal(data, m); err != nil {
			return
		}
		requireSameRender(t, string(mt.Descriptor().FullName()), m)
	})
}

// BenchmarkRenderIdeasList renders GET /api/ideas?limit=50's response, the
// ideas as make bench-http seeds them, the way the gateway did before
// (protojson through runtime.JSONPb, then compact) and now.
func BenchmarkRenderIdeasList(b *testing.B) {
	resp := &portfoliov1.ListIdeasResponse{
		Summary:    &portfoliov1.IdeaSummary{TotalIdeas: 200, UnvalidatedIdeas: 200, TotalPotentialValue: 39900, TotalValueGap: 39900},
		Pagination: &commonv1.Pagination{Limit: 50, Total: 200, HasMore: true, NextCursor: "eyJzIjoyNDkuNTQ1NSwiaWQiOiIwMTkzIn0"},
	}
	for i := range 50 {
		pv := float64(249 - i)
		resp.Ideas = append(resp.Ideas, &portfoliov1.Idea{
			Id:                  fmt.Sprintf("0193f5c2-7a4e-7c1d-9b2a-%012d", i),
			Name:                fmt.Sprintf("Bench idea %03d", 149-i),
			PotentialValue:      pv,
			EstimatedCost:       10,
			Confidence:          0.5,
			ResistanceRisk:      1,
			Stage:               portfoliov1.Stage_none,
			ManifestationStatus: "none",
			Tags:                []string{"bench", "tag-" + strconv.Itoa(i%7)},
			CostVector:          &portfoliov1.CostVector{Compute: 5, Infrastructure: 3, HumanAttention: 2},
			ValueVector:         &portfoliov1.ValueVector{Adoption: pv * 0.5, Lineage: pv * 0.3, FrictionAvoided: pv * 0.2},
			Score:               math.Round(pv*0.5/11*1e4) / 1e4,
			CreatedAt:           "2026-11-25T10:15:30.123456Z",
			UpdatedAt:           "2026-11-25T10:15:30.123456Z",
		})
	}
	before := func(m proto.Message) ([]byte, error) {
		b, err := (&runtime.JSONPb{MarshalOptions: marshalOptions}).Marshal(m)
		if err != nil {
			return nil, err
		}
		return compact(b), nil
	}
	cases := []struct {
		name    string
		marshal func(proto.Message) ([]byte, error)
	}{{"protojson", before}, {"render", marshalJSON}}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var n int
			for b.Loop() {
				out, err := c.marshal(resp)
				if err != nil {
					b.Fatal(err)
				}
				n = len(out)
			}
			b.SetBytes(int64(n))
		})
	}
}

// firstDifference names where two JSON texts first differ: the path of the
// first token that does not match, or the byte offset.
func firstDifference(got, want []byte) string {
	g, w := jsonTokens(got), jsonTokens(want)
	for i := range min(len(g), len(w)) {
		if g[i] != w[i] {
			return fmt.Sprintf("at %s: got %s, want %s", w[i].path, g[i].val, w[i].val)
		}
	}
	if len(g) != len(w) {
		return fmt.Sprintf("got %d tokens, want %d", len(g), len(w))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("same tokens, bytes differ at offset %d", i)
		}
	}
	return "lengths differ"
}

type jsonToken struct{ path, val string }

// jsonTokens lists a JSON text's tokens, each with its path ($.a[0].b; an
// object's keys are tokens of the object's path).
func jsonTokens(b []byte) []jsonToken {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	type frame struct {
		obj     bool
		wantKey bool
		key     string
		idx     int
	}
	stack := []frame{}
	path := func() string {
		var sb strings.Builder
		sb.WriteString("$")
		for _, f := range stack {
			if f.obj {
				sb.WriteString("." + f.key)
			} else {
				fmt.Fprintf(&sb, "[%d]", f.idx)
			}
		}
		return sb.String()
	}
	var out []jsonToken
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].wantKey = true
			} else {
				stack[n-1].idx++
			}
		}
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return append(out, jsonToken{path(), "invalid JSON: " + err.Error()})
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				out = append(out, jsonToken{path(), v.String()})
				stack = append(stack, frame{obj: v == '{', wantKey: true})
			default:
				stack = stack[:len(stack)-1]
				out = append(out, jsonToken{path(), v.String()})
				afterValue()
			}
		default:
			val := fmt.Sprintf("%T %v", tok, tok)
			if n := len(stack); n > 0 && stack[n-1].obj && stack[n-1].wantKey {
				stack[n-1].wantKey = false
				stack[n-1].key, _ = v.(string)
				out = append(out, jsonToken{path() + " (key)", val})
				continue
			}
			out = append(out, jsonToken{path(), val})
			afterValue()
		}
	}
}

// TestNumbersAsProtojson: a float or double renders as protojson writes it,
// for whole numbers on both sides of the integer fast path's bounds (2^53
// for a double, 2^24 for a float), negative zero, the exponent forms and
// random bit patterns of either width.
func TestNumbersAsProtojson(t *testing.T) {
	doubles := []float64{0, math.Copysign(0, -1), 1, -1, 10, 1234567, 0.5, 1.6667, 1e-7, 1e-6, 123.456e10,
		1<<53 - 1, 1 << 53, 1<<53 + 2, -(1 << 53), -(1<<53 - 1), 1e15, 1e16, 1e20, 1e21, -1e21, 123456789012345678,
		math.MaxInt64, math.MinInt64, math.MaxFloat64, math.SmallestNonzeroFloat64}
	floats := []float32{0, float32(math.Copysign(0, -1)), 1, -3, 0.1, 1<<24 - 1, 1 << 24, 1<<24 + 2, -(1 << 24),
		123456790000, 1e10, 3e38, 1e-7}
	rnd := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 { rnd ^= rnd << 13; rnd ^= rnd >> 7; rnd ^= rnd << 17; return rnd }
	for range 2000 {
		doubles = append(doubles, math.Float64frombits(next()), float64(int64(next())>>(next()%64)))
		floats = append(floats, math.Float32frombits(uint32(next())), float32(int32(next())>>(next()%32)))
	}
	for _, v := range doubles {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		want, err := protojson.Marshal(wrapperspb.Double(v))
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONFloat(nil, v, 64)), "double %v (%x)", v, math.Float64bits(v))
	}
	for _, v := range floats {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			continue
		}
		want, err := protojson.Marshal(wrapperspb.Float(v))
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONFloat(nil, float64(v), 32)), "float %v (%x)", v, math.Float32bits(v))
	}
}

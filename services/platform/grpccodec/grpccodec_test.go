package grpccodec

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/encoding"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	// Every generated Foundry package, so that its files are registered
	// (protoregistry.GlobalFiles) for the walk below. A new package under
	// proto/gen/go is added here; TestEveryFoundryPackageIsWalked fails
	// until it is.
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/platform/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
)

// foundryMessages are the message types of every Foundry proto file
// registered in the process, nested ones included (map entries excepted:
// they are no Go types).
func foundryMessages(t testing.TB) []protoreflect.MessageType {
	t.Helper()
	var out []protoreflect.MessageType
	var walk func(protoreflect.MessageDescriptors)
	walk = func(mds protoreflect.MessageDescriptors) {
		for i := range mds.Len() {
			md := mds.Get(i)
			if md.IsMapEntry() {
				continue
			}
			mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
			require.NoError(t, err)
			out = append(out, mt)
			walk(md.Messages())
		}
	}
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(fd.Path(), "foundry/") {
			walk(fd.Messages())
		}
		return true
	})
	return out
}

// TestEveryFoundryPackageIsWalked keeps the imports above complete: every
// Foundry proto file that a walked file imports is registered too.
func TestEveryFoundryPackageIsWalked(t *testing.T) {
	t.Parallel()
	files := 0
	protoregistry.GlobalFiles.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(fd.Path(), "foundry/") {
			files++
		}
		return true
	})
	// agent, authz, common, ledger (+mode), ops, portfolio (+stage) and
	// the four internal ones.
	require.GreaterOrEqual(t, files, 12)
	require.GreaterOrEqual(t, len(foundryMessages(t)), 200)
}

// TestGeneratedMatchesProtobufGo checks, for every Foundry message and a
// few differently populated values of each, that the codec and
// google.golang.org/protobuf read each other's bytes back to an equal
// message, and agree on the size: the generated code and the reference
// implementation agree on every message Foundry sends.
func TestGeneratedMatchesProtobufGo(t *testing.T) {
	t.Parallel()
	c := Codec{}
	for _, mt := range foundryMessages(t) {
		name := string(mt.Descriptor().FullName())
		_, marshals := mt.New().Interface().(vtMarshaler)
		_, unmarshals := mt.New().Interface().(vtUnmarshaler)
		require.True(t, marshals && unmarshals, "%s has no generated marshalling: run make generate", name)
		for variant := range variants {
			msg := mt.New()
			fill(msg, variant, 0)
			want := msg.Interface()
			label := fmt.Sprintf("%s variant %d", name, variant)

			out, err := c.Marshal(want)
			require.NoError(t, err, label)
			wire := out.Materialize()
			out.Free()
			require.Equal(t, proto.Size(want), len(wire), label)
			got := mt.New().Interface()
			require.NoError(t, proto.Unmarshal(wire, got), label)
			require.True(t, proto.Equal(want, got), "%s: protobuf-go read back %v, want %v", label, got, want)

			ref, err := proto.Marshal(want)
			require.NoError(t, err, label)
			got = mt.New().Interface()
			require.NoError(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer(ref)}, got), label)
			require.True(t, proto.Equal(want, got), "%s: the codec read back %v, want %v", label, got, want)
		}
	}
}

// variants is how many differently filled values of each message are
// checked: enough for every member of a oneof (google.protobuf.Value has
// six) to be chosen at the top and to differ between siblings.
const variants = 6

// maxDepth bounds the filling of recursive types (a Struct of Values of
// Structs...).
const maxDepth = 4

// fill sets every field of m: a value of each scalar kind, nested messages
// filled in turn, three elements in each list and map, one member of each
// oneof (chosen by variant). In odd variants a field with explicit
// presence (proto3 optional, a oneof member) is set to its zero value,
// which is still sent.
func fill(m protoreflect.Message, variant, depth int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() && od.Fields().Get(variant%od.Fields().Len()) != fd {
			continue
		}
		isMessage := fd.Message() != nil && !fd.IsMap()
		if (isMessage || fd.IsMap() && fd.MapValue().Message() != nil) && depth >= maxDepth {
			continue
		}
		seed := variant + i
		switch {
		case fd.IsList():
			l := m.Mutable(fd).List()
			for j := range 3 {
				if isMessage {
					e := l.NewElement()
					fill(e.Message(), seed+j, depth+1)
					l.Append(e)
				} else {
					l.Append(scalar(fd, seed+j, false))
				}
			}
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			for j := range 3 {
				k := scalar(fd.MapKey(), seed+j, false).MapKey()
				if fd.MapValue().Message() != nil {
					v := mp.NewValue()
					fill(v.Message(), seed+j, depth+1)
					mp.Set(k, v)
				} else {
					mp.Set(k, scalar(fd.MapValue(), seed+j, false))
				}
			}
		case isMessage:
			v := m.NewField(fd)
			fill(v.Message(), seed, depth+1)
			m.Set(fd, v)
		default:
			m.Set(fd, scalar(fd, seed, fd.HasPresence() && variant%2 == 1))
		}
	}
}

// scalar is a value of fd's kind that seed varies: negative numbers (ten
// bytes as a varint), extremes, text beyond ASCII.
func scalar(fd protoreflect.FieldDescriptor, seed int, zero bool) protoreflect.Value {
	if zero {
		return fd.Default()
	}
	n := int64(seed + 1)
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(seed%2 == 0)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(seed % vals.Len()).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		if seed%3 == 0 {
			return protoreflect.ValueOfInt32(math.MinInt32)
		}
		return protoreflect.ValueOfInt32(int32(-n * 1234))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(math.MaxUint32 - uint32(n))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(-n * 1_000_000_007)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(math.MaxUint64 - uint64(n))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(n) * -1.25)
	case protoreflect.DoubleKind:
		if seed%3 == 0 {
			return protoreflect.ValueOfFloat64(math.SmallestNonzeroFloat64)
		}
		return protoreflect.ValueOfFloat64(float64(n) * 1234.5678)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprintf("%s-%d ünïcode ✓ %s", fd.Name(), seed, strings.Repeat("x", seed*7)))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte{0, byte(seed), 0xff, 0x80})
	}
	panic(fmt.Sprintf("no value for %s of kind %s", fd.FullName(), fd.Kind()))
}

// TestGRPCUsesTheCodec: importing the package replaces gRPC's default.
func TestGRPCUsesTheCodec(t *testing.T) {
	t.Parallel()
	require.IsType(t, Codec{}, encoding.GetCodecV2(Name))
	_, ours := protoCodec.(Codec)
	require.False(t, ours || protoCodec == nil, "the fallback is gRPC's own codec")
}

// TestLargeMessagesAndSplitBuffers covers what the walk above does not: a
// message past gRPC's pooling threshold (a pooled buffer) and bytes that
// arrive in more than one buffer (copied into one).
func TestLargeMessagesAndSplitBuffers(t *testing.T) {
	t.Parallel()
	c := Codec{}
	want := listIdeas(50)
	require.False(t, mem.IsBelowBufferPoolingThreshold(proto.Size(want)))
	out, err := c.Marshal(want)
	require.NoError(t, err)
	wire := out.Materialize()
	out.Free()
	ref, err := proto.Marshal(want)
	require.NoError(t, err)
	require.Equal(t, ref, wire, "no maps: the same bytes as protobuf-go")

	half := len(wire) / 2
	split := mem.BufferSlice{mem.SliceBuffer(wire[:half]), mem.SliceBuffer(wire[half:])}
	got := listIdeasResponse()
	require.NoError(t, c.Unmarshal(split, got))
	require.True(t, proto.Equal(want, got))
}

// TestUnmarshalReplaces: like proto.Unmarshal, decoding into a message
// that holds fields replaces them (UnmarshalVT alone would merge).
func TestUnmarshalReplaces(t *testing.T) {
	t.Parallel()
	c := Codec{}
	got := listIdeas(3)
	want := listIdeas(1)
	out, err := c.Marshal(want)
	require.NoError(t, err)
	require.NoError(t, c.Unmarshal(out, got))
	out.Free()
	require.True(t, proto.Equal(want, got), "got %v", got)
}

// TestOtherMessages go through protobuf-go: grpc.health.v1 has no
// generated marshalling.
func TestOtherMessages(t *testing.T) {
	t.Parallel()
	c := Codec{}
	want := &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}
	_, generated := any(want).(vtMarshaler)
	require.False(t, generated)
	out, err := c.Marshal(want)
	require.NoError(t, err)
	got := &healthpb.HealthCheckResponse{}
	require.NoError(t, c.Unmarshal(out, got))
	out.Free()
	require.True(t, proto.Equal(want, got))

	_, err = c.Marshal("not a message")
	require.Error(t, err)
	require.Error(t, c.Unmarshal(mem.BufferSlice{mem.SliceBuffer([]byte{1})}, new(int)))
}

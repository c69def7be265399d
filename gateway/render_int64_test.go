package gateway

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/foundryhq/foundry/services/platform/wire"
)

// TestInt64AsNumbers: protojson's quoted 64-bit values become numbers in
// a field, a list, a map's value, a wrapper and an Any; a map's key, a
// string of digits and a Struct's string stay strings.
func TestInt64AsNumbers(t *testing.T) {
	t.Parallel()
	var sinkType protoreflect.MessageType
	for _, mt := range sinkTypes(t) {
		if mt.Descriptor().Name() == "Sink" {
			sinkType = mt
		}
	}
	require.NotNil(t, sinkType)
	m := sinkType.New()
	fields := m.Descriptor().Fields()
	set := func(name string, v protoreflect.Value) { m.Set(fields.ByName(protoreflect.Name(name)), v) }
	set("i64", protoreflect.ValueOfInt64(-2147483653))
	set("u64", protoreflect.ValueOfUint64(1<<53+1))
	set("s", protoreflect.ValueOfString("2147483653"))
	list := m.Mutable(fields.ByName("rep_i64")).List()
	list.Append(protoreflect.ValueOfInt64(1 << 31))
	list.Append(protoreflect.ValueOfInt64(0))
	mp := m.Mutable(fields.ByName("map_s64")).Map()
	mp.Set(protoreflect.ValueOfInt64(-7).MapKey(), protoreflect.ValueOfInt64(1<<40))
	set("w_i64", protoreflect.ValueOfMessage(wrapperspb.Int64(1<<33).ProtoReflect()))
	held, err := anypb.New(wrapperspb.UInt64(99))
	require.NoError(t, err)
	set("any", protoreflect.ValueOfMessage(held.ProtoReflect()))
	st, err := structpb.NewStruct(map[string]any{"k": "12"})
	require.NoError(t, err)
	set("st", protoreflect.ValueOfMessage(st.ProtoReflect()))

	raw, err := marshalOptions.Marshal(m.Interface())
	require.NoError(t, err)
	require.Contains(t, string(compact(raw)), `"i64":"-2147483653"`, "protojson quotes them")

	got := string(wire.Int64AsNumbers(compact(raw), m.Descriptor()))
	for _, want := range []string{
		`"i64":-2147483653`, `"u64":9007199254740993`, `"s":"2147483653"`,
		`"rep_i64":[2147483648,0]`, `"map_s64":{"-7":1099511627776}`, `"w_i64":8589934592`,
		`"any":{"@type":"type.googleapis.com/google.protobuf.UInt64Value","value":99}`, `"st":{"k":"12"}`,
		`"u32":0`, `"fx64":0`,
	} {
		require.Contains(t, got, want)
	}
	// What comes back reads as the same message.
	back := sinkType.New()
	require.NoError(t, protojson.Unmarshal([]byte(got), back.Interface()))
	require.Equal(t, int64(-2147483653), back.Get(fields.ByName("i64")).Int())
	require.Equal(t, uint64(1<<53+1), back.Get(fields.ByName("u64")).Uint())

	// A message with no 64-bit integer anywhere is returned as it is.
	plain := []byte(`{"value":"12"}`)
	require.Equal(t, string(plain), string(wire.Int64AsNumbers(plain, wrapperspb.String("12").ProtoReflect().Descriptor())))
}

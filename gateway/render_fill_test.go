package gateway

import (
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	// The well-known types the kitchen sink refers to, registered.
	_ "google.golang.org/protobuf/types/known/anypb"
	_ "google.golang.org/protobuf/types/known/durationpb"
	_ "google.golang.org/protobuf/types/known/emptypb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb"
	_ "google.golang.org/protobuf/types/known/structpb"
	_ "google.golang.org/protobuf/types/known/timestamppb"
	_ "google.golang.org/protobuf/types/known/wrapperspb"
)

// The kitchen sink: dynamic messages (built here, not in proto/) with what
// Foundry's protos do not use yet, so the renderer is tested on it before
// a proto does: every scalar kind, every map key kind, enums with aliases,
// negative and unknown numbers, real oneofs, proto3 optional, a field
// declared before lower numbers, every well-known type, and a proto2 file
// (defaults, a required field, a group, extensions).

type (
	fdp = descriptorpb.FieldDescriptorProto
	typ = descriptorpb.FieldDescriptorProto_Type
)

const (
	tDouble   = descriptorpb.FieldDescriptorProto_TYPE_DOUBLE
	tFloat    = descriptorpb.FieldDescriptorProto_TYPE_FLOAT
	tInt32    = descriptorpb.FieldDescriptorProto_TYPE_INT32
	tInt64    = descriptorpb.FieldDescriptorProto_TYPE_INT64
	tUint32   = descriptorpb.FieldDescriptorProto_TYPE_UINT32
	tUint64   = descriptorpb.FieldDescriptorProto_TYPE_UINT64
	tSint32   = descriptorpb.FieldDescriptorProto_TYPE_SINT32
	tSint64   = descriptorpb.FieldDescriptorProto_TYPE_SINT64
	tFixed32  = descriptorpb.FieldDescriptorProto_TYPE_FIXED32
	tFixed64  = descriptorpb.FieldDescriptorProto_TYPE_FIXED64
	tSfixed32 = descriptorpb.FieldDescriptorProto_TYPE_SFIXED32
	tSfixed64 = descriptorpb.FieldDescriptorProto_TYPE_SFIXED64
	tBool     = descriptorpb.FieldDescriptorProto_TYPE_BOOL
	tString   = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tBytes    = descriptorpb.FieldDescriptorProto_TYPE_BYTES
	tEnum     = descriptorpb.FieldDescriptorProto_TYPE_ENUM
	tMessage  = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	tGroup    = descriptorpb.FieldDescriptorProto_TYPE_GROUP

	lOptional = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	lRepeated = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	lRequired = descriptorpb.FieldDescriptorProto_LABEL_REQUIRED
)

func field(name string, num int32, t typ, typeName string) *fdp {
	f := &fdp{Name: proto.String(name), Number: proto.Int32(num), Type: t.Enum(), Label: lOptional.Enum()}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	return f
}

func repeated(f *fdp) *fdp { f.Label = lRepeated.Enum(); return f }

func inOneof(f *fdp, i int32) *fdp { f.OneofIndex = proto.Int32(i); return f }

// mapField adds to m the entry type of a map field and returns the field.
func mapField(m *descriptorpb.DescriptorProto, scope, name string, num int32, key typ, val typ, valType string) *fdp {
	entry := ""
	for _, w := range strings.Split(name, "_") {
		entry += strings.ToUpper(w[:1]) + w[1:]
	}
	entry += "Entry"
	m.NestedType = append(m.NestedType, &descriptorpb.DescriptorProto{
		Name:    proto.String(entry),
		Field:   []*fdp{field("key", 1, key, ""), field("value", 2, val, valType)},
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
	})
	return repeated(field(name, num, tMessage, scope+"."+entry))
}

var sinkOnce = sync.OnceValues(buildSink)

// sinkTypes are the kitchen sink's message types (each message of its two
// files), built once.
func sinkTypes(t testing.TB) []protoreflect.MessageType {
	t.Helper()
	types, err := sinkOnce()
	require.NoError(t, err)
	return types
}

// sinkExtensions are the proto2 file's extensions by the message they
// extend, for the filler.
var sinkExtensions = map[protoreflect.FullName][]protoreflect.ExtensionType{}

func buildSink() ([]protoreflect.MessageType, error) {
	legacy := &descriptorpb.DescriptorProto{
		Name: proto.String("Legacy"),
		Field: []*fdp{
			func() *fdp { f := field("a", 1, tInt32, ""); f.DefaultValue = proto.String("7"); return f }(),
			func() *fdp { f := field("s", 2, tString, ""); f.DefaultValue = proto.String(`x"y`); return f }(),
			func() *fdp { f := field("r", 3, tInt32, ""); f.Label = lRequired.Enum(); return f }(),
			field("child", 4, tMessage, ".gatewaytest.v2.Legacy"),
			repeated(field("nums", 5, tInt32, "")),
			field("mygroup", 6, tGroup, ".gatewaytest.v2.Legacy.MyGroup"),
			field("d", 7, tDouble, ""),
		},
		NestedType: []*descriptorpb.DescriptorProto{{
			Name:  proto.String("MyGroup"),
			Field: []*fdp{field("g", 1, tInt32, "")},
		}},
	}
	extendable := &descriptorpb.DescriptorProto{
		Name:           proto.String("Extendable"),
		Field:          []*fdp{field("a", 1, tInt32, "")},
		ExtensionRange: []*descriptorpb.DescriptorProto_ExtensionRange{{Start: proto.Int32(100), End: proto.Int32(200)}},
	}
	ext := func(f *fdp) *fdp { f.Extendee = proto.String(".gatewaytest.v2.Extendable"); return f }
	legacyFile := &descriptorpb.FileDescriptorProto{
		Name:        proto.String("gatewaytest/legacy.proto"),
		Package:     proto.String("gatewaytest.v2"),
		Syntax:      proto.String("proto2"),
		MessageType: []*descriptorpb.DescriptorProto{legacy, extendable},
		Extension:   []*fdp{ext(field("ext", 100, tInt32, "")), ext(field("ext_msg", 101, tMessage, ".gatewaytest.v2.Legacy"))},
	}

	const scope = ".gatewaytest.v1.Sink"
	sink := &descriptorpb.DescriptorProto{Name: proto.String("Sink")}
	wkt := func(n string) string { return ".google.protobuf." + n }
	weird := field("Weird_Name_1", 70, tString, "")
	weird.JsonName = proto.String("x")
	optional := func(f *fdp, oneof int32) *fdp { f.Proto3Optional = proto.Bool(true); return inOneof(f, oneof) }
	sink.Field = []*fdp{
		field("first_declared", 100, tInt32, ""),
		field("d", 1, tDouble, ""), field("f", 2, tFloat, ""),
		field("i32", 3, tInt32, ""), field("i64", 4, tInt64, ""),
		field("u32", 5, tUint32, ""), field("u64", 6, tUint64, ""),
		field("s32", 7, tSint32, ""), field("s64", 8, tSint64, ""),
		field("fx32", 9, tFixed32, ""), field("fx64", 10, tFixed64, ""),
		field("sf32", 11, tSfixed32, ""), field("sf64", 12, tSfixed64, ""),
		field("b", 13, tBool, ""), field("s", 14, tString, ""), field("by", 15, tBytes, ""),
		field("e", 16, tEnum, ".gatewaytest.v1.Color"),
		field("child", 17, tMessage, scope),
		repeated(field("rep_d", 18, tDouble, "")), repeated(field("rep_f", 19, tFloat, "")),
		repeated(field("rep_i64", 20, tInt64, "")), repeated(field("rep_s", 21, tString, "")),
		repeated(field("rep_by", 22, tBytes, "")), repeated(field("rep_e", 23, tEnum, ".gatewaytest.v1.Color")),
		repeated(field("rep_child", 24, tMessage, scope)),
		mapField(sink, scope, "map_ss", 25, tString, tString, ""),
		mapField(sink, scope, "map_i32", 26, tInt32, tMessage, scope),
		mapField(sink, scope, "map_i64", 27, tInt64, tEnum, ".gatewaytest.v1.Color"),
		mapField(sink, scope, "map_u32", 28, tUint32, tBytes, ""),
		mapField(sink, scope, "map_u64", 29, tUint64, tDouble, ""),
		mapField(sink, scope, "map_b", 30, tBool, tString, ""),
		mapField(sink, scope, "map_s64", 31, tSint64, tInt64, ""),
		mapField(sink, scope, "map_fx", 32, tFixed32, tFloat, ""),
		inOneof(field("o_s", 33, tString, ""), 0),
		inOneof(field("o_i", 34, tInt32, ""), 0),
		inOneof(field("o_child", 35, tMessage, scope), 0),
		inOneof(field("o_e", 36, tEnum, ".gatewaytest.v1.Color"), 0),
		inOneof(field("o_null", 37, tEnum, wkt("NullValue")), 0),
		inOneof(field("o_wrap", 38, tMessage, wkt("StringValue")), 0),
		inOneof(field("p_d", 39, tDouble, ""), 1),
		inOneof(field("p_ts", 40, tMessage, wkt("Timestamp")), 1),
		optional(field("opt_s", 41, tString, ""), 2),
		optional(field("opt_d", 42, tDouble, ""), 3),
		optional(field("opt_e", 43, tEnum, ".gatewaytest.v1.Color"), 4),
		optional(field("opt_child", 44, tMessage, scope), 5),
		field("ts", 45, tMessage, wkt("Timestamp")), field("dur", 46, tMessage, wkt("Duration")),
		field("fm", 47, tMessage, wkt("FieldMask")), field("empty", 48, tMessage, wkt("Empty")),
		field("any", 49, tMessage, wkt("Any")), field("st", 50, tMessage, wkt("Struct")),
		field("val", 51, tMessage, wkt("Value")), field("lv", 52, tMessage, wkt("ListValue")),
		field("null", 53, tEnum, wkt("NullValue")),
		field("w_bool", 54, tMessage, wkt("BoolValue")), field("w_i32", 55, tMessage, wkt("Int32Value")),
		field("w_i64", 56, tMessage, wkt("Int64Value")), field("w_u32", 57, tMessage, wkt("UInt32Value")),
		field("w_u64", 58, tMessage, wkt("UInt64Value")), field("w_f", 59, tMessage, wkt("FloatValue")),
		field("w_d", 60, tMessage, wkt("DoubleValue")), field("w_s", 61, tMessage, wkt("StringValue")),
		field("w_by", 62, tMessage, wkt("BytesValue")),
		repeated(field("rep_val", 63, tMessage, wkt("Value"))),
		repeated(field("rep_ts", 64, tMessage, wkt("Timestamp"))),
		repeated(field("rep_null", 65, tEnum, wkt("NullValue"))),
		mapField(sink, scope, "map_wrap", 66, tString, tMessage, wkt("StringValue")),
		mapField(sink, scope, "map_val", 67, tString, tMessage, wkt("Value")),
		field("legacy", 68, tMessage, ".gatewaytest.v2.Legacy"),
		field("extendable", 69, tMessage, ".gatewaytest.v2.Extendable"),
		weird,
		repeated(field("rep_any", 71, tMessage, wkt("Any"))),
		field("rep_lv", 72, tMessage, wkt("ListValue")),
	}
	sink.OneofDecl = []*descriptorpb.OneofDescriptorProto{
		{Name: proto.String("choice")}, {Name: proto.String("pick")},
		{Name: proto.String("_opt_s")}, {Name: proto.String("_opt_d")},
		{Name: proto.String("_opt_e")}, {Name: proto.String("_opt_child")},
	}
	color := &descriptorpb.EnumDescriptorProto{
		Name: proto.String("Color"),
		Value: []*descriptorpb.EnumValueDescriptorProto{
			{Name: proto.String("COLOR_UNSPECIFIED"), Number: proto.Int32(0)},
			{Name: proto.String("RED"), Number: proto.Int32(1)},
			{Name: proto.String("GREEN"), Number: proto.Int32(2)},
			{Name: proto.String("VERDE"), Number: proto.Int32(2)}, // an alias: GREEN is written
			{Name: proto.String("NEGATIVE"), Number: proto.Int32(-3)},
			{Name: proto.String("FAR"), Number: proto.Int32(100000)},
		},
		Options: &descriptorpb.EnumOptions{AllowAlias: proto.Bool(true)},
	}
	sinkFile := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("gatewaytest/sink.proto"),
		Package: proto.String("gatewaytest.v1"),
		Syntax:  proto.String("proto3"),
		Dependency: []string{
			"gatewaytest/legacy.proto", "google/protobuf/any.proto", "google/protobuf/duration.proto",
			"google/protobuf/empty.proto", "google/protobuf/field_mask.proto", "google/protobuf/struct.proto",
			"google/protobuf/timestamp.proto", "google/protobuf/wrappers.proto",
		},
		MessageType: []*descriptorpb.DescriptorProto{sink},
		EnumType:    []*descriptorpb.EnumDescriptorProto{color},
	}

	files := new(protoregistry.Files)
	for _, dep := range sinkFile.Dependency[1:] {
		fd, err := protoregistry.GlobalFiles.FindFileByPath(dep)
		if err != nil {
			return nil, err
		}
		if err := files.RegisterFile(fd); err != nil {
			return nil, err
		}
	}
	var types []protoreflect.MessageType
	for _, f := range []*descriptorpb.FileDescriptorProto{legacyFile, sinkFile} {
		fd, err := protodesc.NewFile(f, files)
		if err != nil {
			return nil, err
		}
		if err := files.RegisterFile(fd); err != nil {
			return nil, err
		}
		for i := range fd.Messages().Len() {
			types = append(types, dynamicpb.NewMessageType(fd.Messages().Get(i)))
		}
		for i := range fd.Extensions().Len() {
			xd := fd.Extensions().Get(i)
			sinkExtensions[xd.ContainingMessage().FullName()] = append(sinkExtensions[xd.ContainingMessage().FullName()], dynamicpb.NewExtensionType(xd))
		}
	}
	return types, nil
}

// filler fills messages at random, seeded: every field set or not, zero
// values set, lists and maps of 0 to 4, nested messages to a depth, and
// values chosen for how JSON spells them. Rarely (refuse) a string is
// invalid UTF-8, or a Value, Timestamp, Duration, FieldMask or Any one
// protojson refuses, so the errors are compared too.
type filler struct {
	seed uint64
	r    *rand.Rand
	// anyTypes are what an Any holds: Foundry's public messages.
	anyTypes []protoreflect.MessageType
	// refusing is whether this instance may hold values protojson
	// refuses.
	refusing bool
}

const fillDepth = 4

func newFiller(seed uint64) *filler {
	f := &filler{seed: seed}
	f.reseed(0)
	for _, name := range []protoreflect.FullName{"foundry.portfolio.v1.Idea", "foundry.common.v1.Pagination", "google.protobuf.StringValue", "google.protobuf.Struct", "google.protobuf.Timestamp"} {
		mt, err := protoregistry.GlobalTypes.FindMessageByName(name)
		if err == nil {
			f.anyTypes = append(f.anyTypes, mt)
		}
	}
	return f
}

func (f *filler) reseed(i uint64) {
	f.r = rand.New(rand.NewPCG(f.seed, i))
	f.refusing = f.chance(10)
}

func (f *filler) chance(n int) bool { return f.r.IntN(n) == 0 }

// refuse is whether to write a value protojson refuses: in one instance
// of ten, one value in 50 (an instance of the kitchen sink holds hundreds).
func (f *filler) refuse() bool { return f.refusing && f.chance(50) }

func (f *filler) fill(m protoreflect.Message, depth int) {
	md := m.Descriptor()
	if md.FullName().Parent() == "google.protobuf" && f.wellKnown(m, depth) {
		return
	}
	fds := md.Fields()
	for i := range fds.Len() {
		fd := fds.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			continue
		}
		if fd.Cardinality() == protoreflect.Required {
			if !f.refuse() { // an unset one is an error
				f.set(m, fd, depth)
			}
			continue
		}
		if f.chance(4) {
			continue
		}
		f.set(m, fd, depth)
	}
	for i := range md.Oneofs().Len() {
		od := md.Oneofs().Get(i)
		if od.IsSynthetic() {
			continue
		}
		if k := f.r.IntN(od.Fields().Len() + 1); k < od.Fields().Len() {
			f.set(m, od.Fields().Get(k), depth)
		}
	}
	for _, xt := range sinkExtensions[md.FullName()] {
		if f.chance(2) {
			xd := xt.TypeDescriptor()
			if xd.Kind() == protoreflect.MessageKind {
				if depth < fillDepth {
					v := xt.New()
					f.fill(v.Message(), depth+1)
					m.Set(xd, v)
				}
				continue
			}
			m.Set(xd, f.scalar(xd))
		}
	}
}

func isMessage(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind
}

// count is a list's or map's length: 0 to 4, fewer messages the deeper
// (a recursive message's instances would grow as 4^depth).
func (f *filler) count(depth int, messages bool) int {
	switch {
	case !messages || depth == 0:
		return f.r.IntN(5)
	case depth >= fillDepth:
		return 0
	case depth == 1:
		return f.r.IntN(3)
	}
	return f.r.IntN(2)
}

func (f *filler) set(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	switch {
	case fd.IsMap():
		n := f.count(depth, isMessage(fd.MapValue()))
		mp := m.Mutable(fd).Map()
		for range n {
			k := f.scalar(fd.MapKey()).MapKey()
			if isMessage(fd.MapValue()) {
				v := mp.NewValue()
				f.fill(v.Message(), depth+1)
				mp.Set(k, v)
			} else {
				mp.Set(k, f.scalar(fd.MapValue()))
			}
		}
	case fd.IsList():
		n := f.count(depth, isMessage(fd))
		l := m.Mutable(fd).List()
		for range n {
			if isMessage(fd) {
				v := l.NewElement()
				f.fill(v.Message(), depth+1)
				l.Append(v)
			} else {
				l.Append(f.scalar(fd))
			}
		}
	case isMessage(fd):
		if depth >= fillDepth {
			return
		}
		v := m.Mutable(fd).Message()
		// Set and empty, sometimes: not a Value (empty is no JSON) or a
		// message with required fields (unless refusing).
		md := v.Descriptor()
		if md.FullName() != "google.protobuf.Value" && (md.RequiredNumbers().Len() == 0 || f.refuse()) && f.chance(6) {
			return
		}
		f.fill(v, depth+1)
	default:
		m.Set(fd, f.scalar(fd))
	}
}

// wellKnown fills the well-known types whose JSON has rules of its own
// with values inside and (rarely) outside those rules; the wrappers and
// Empty are filled as any message.
func (f *filler) wellKnown(m protoreflect.Message, depth int) bool {
	fds := m.Descriptor().Fields()
	set := func(name protoreflect.Name, v protoreflect.Value) { m.Set(fds.ByName(name), v) }
	nanos := func() int64 {
		switch f.r.IntN(5) {
		case 0:
			return 0
		case 1:
			return int64(f.r.IntN(1000)) * 1e6
		case 2:
			return int64(f.r.IntN(1e6)) * 1e3
		case 3:
			return 999999999
		}
		return int64(f.r.IntN(1e9))
	}
	switch m.Descriptor().Name() {
	case "Timestamp":
		secs := []int64{0, -62135596800, 253402300799, 1764000000, -1}[f.r.IntN(5)]
		if f.chance(2) {
			secs = -62135596800 + f.r.Int64N(253402300799+62135596800+1)
		}
		n := nanos()
		if f.refuse() {
			secs, n = []int64{253402300800, -62135596801, 0}[f.r.IntN(3)], []int64{0, 0, -1}[f.r.IntN(3)]
		}
		set("seconds", protoreflect.ValueOfInt64(secs))
		set("nanos", protoreflect.ValueOfInt32(int32(n)))
	case "Duration":
		secs := f.r.Int64N(315576000001)
		if f.chance(3) {
			secs = int64(f.r.IntN(3))
		}
		n := nanos()
		if f.chance(2) {
			secs, n = -secs, -n
		}
		if f.refuse() {
			secs, n = []int64{315576000001, 1, 0}[f.r.IntN(3)], []int64{0, -1, 1e9}[f.r.IntN(3)]
		}
		set("seconds", protoreflect.ValueOfInt64(secs))
		set("nanos", protoreflect.ValueOfInt32(int32(n)))
	case "FieldMask":
		l := m.Mutable(fds.ByName("paths")).List()
		for range f.r.IntN(4) {
			p := []string{"a", "foo_bar", "foo.bar_baz", "x1.y2_z3", "idea.cost_vector"}[f.r.IntN(5)]
			if f.refuse() {
				p = []string{"Foo", "foo__bar", "a..b", "_a", "a_1", "é"}[f.r.IntN(6)]
			}
			l.Append(protoreflect.ValueOfString(p))
		}
	case "Any":
		if depth >= fillDepth || f.chance(5) {
			return true // empty: {}
		}
		mt := f.anyTypes[f.r.IntN(len(f.anyTypes))]
		v := mt.New()
		f.fill(v, depth+1)
		b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(v.Interface())
		if err != nil {
			return true
		}
		url := "type.googleapis.com/" + string(mt.Descriptor().FullName())
		if f.refuse() {
			url = "type.googleapis.com/no.such.Type"
		}
		set("type_url", protoreflect.ValueOfString(url))
		set("value", protoreflect.ValueOfBytes(b))
	case "Value":
		f.value(m, depth)
	case "Struct":
		if depth >= fillDepth {
			return true
		}
		mp := m.Mutable(fds.ByName("fields")).Map()
		for range f.r.IntN(5) {
			v := mp.NewValue()
			f.value(v.Message(), depth+1)
			mp.Set(protoreflect.ValueOfString(f.str()).MapKey(), v)
		}
	case "ListValue":
		if depth >= fillDepth {
			return true
		}
		l := m.Mutable(fds.ByName("values")).List()
		for range f.r.IntN(5) {
			v := l.NewElement()
			f.value(v.Message(), depth+1)
			l.Append(v)
		}
	default:
		return false
	}
	return true
}

// value fills a google.protobuf.Value with one kind (rarely none, or
// NaN, both refused).
func (f *filler) value(m protoreflect.Message, depth int) {
	fds := m.Descriptor().Fields()
	if f.refuse() {
		if f.chance(2) {
			m.Set(fds.ByName("number_value"), protoreflect.ValueOfFloat64(math.NaN()))
		}
		return
	}
	k := f.r.IntN(6)
	if depth >= fillDepth {
		k = f.r.IntN(4)
	}
	switch k {
	case 0:
		m.Set(fds.ByName("null_value"), protoreflect.ValueOfEnum(0))
	case 1:
		d := f.double()
		if math.IsNaN(d) || math.IsInf(d, 0) {
			d = 0.25
		}
		m.Set(fds.ByName("number_value"), protoreflect.ValueOfFloat64(d))
	case 2:
		m.Set(fds.ByName("string_value"), protoreflect.ValueOfString(f.str()))
	case 3:
		m.Set(fds.ByName("bool_value"), protoreflect.ValueOfBool(f.chance(2)))
	case 4:
		f.wellKnown(m.Mutable(fds.ByName("struct_value")).Message(), depth+1)
	case 5:
		f.wellKnown(m.Mutable(fds.ByName("list_value")).Message(), depth+1)
	}
}

// stringPieces are what the strings are made of: JSON's escapes, what
// other encoders escape and protojson does not, multi-byte characters, the
// comma-space compact removes outside strings.
var stringPieces = []string{
	"", "a", "Bench idea 042", "idée", "日本語", "😀", "\"", "\\", "/", "\n", "\r\n", "\t", "\b\f",
	"\x00", "\x01", "\x1f", "\x7f", "<script>&amp;", "\u2028\u2029", "\uFFFD", ", ", " ,", ",", " ",
	"{\"a\":[1, 2]}", "null", "0", "\u00e9\u0301", "\U0010FFFF",
}

func (f *filler) str() string {
	var b strings.Builder
	for range f.r.IntN(5) {
		b.WriteString(stringPieces[f.r.IntN(len(stringPieces))])
	}
	if f.refuse() {
		b.WriteString([]string{"\xff", "\xc3", "\xed\xa0\x80"}[f.r.IntN(3)])
	}
	return b.String()
}

func (f *filler) double() float64 {
	switch f.r.IntN(4) {
	case 0:
		return []float64{
			0, math.Copysign(0, -1), 1, -1, 0.1, 0.5, 1e-6, 9.99e-7, 1e-7, 1e20, 1e21, 123456789012345678901234.0,
			math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-300, 5e-324, math.NaN(), math.Inf(1), math.Inf(-1),
			249.5455, 100.0 / 3, 1 << 53, 1<<53 + 1,
		}[f.r.IntN(23)]
	case 1:
		return math.Float64frombits(f.r.Uint64())
	case 2:
		return math.Round(f.r.Float64()*1e6) / 1e4
	}
	return (f.r.Float64() - 0.5) * math.Pow(10, float64(f.r.IntN(60)-30))
}

func (f *filler) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(f.chance(2))
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		switch {
		case f.chance(10):
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber([]int32{42, -7, 255, 256, math.MaxInt32, math.MinInt32}[f.r.IntN(6)]))
		case f.chance(4):
			return protoreflect.ValueOfEnum(0)
		}
		return protoreflect.ValueOfEnum(vals.Get(f.r.IntN(vals.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32([]int32{0, 1, -1, math.MaxInt32, math.MinInt32, f.r.Int32(), -f.r.Int32N(1000), f.r.Int32N(100)}[f.r.IntN(8)])
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32([]uint32{0, 1, math.MaxUint32, f.r.Uint32(), f.r.Uint32N(100)}[f.r.IntN(5)])
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64([]int64{0, 1, -1, math.MaxInt64, math.MinInt64, f.r.Int64(), -f.r.Int64N(1e6), 1<<53 + 1}[f.r.IntN(8)])
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64([]uint64{0, 1, math.MaxUint64, f.r.Uint64(), f.r.Uint64N(100)}[f.r.IntN(5)])
	case protoreflect.FloatKind:
		if f.chance(3) {
			return protoreflect.ValueOfFloat32(math.Float32frombits(f.r.Uint32()))
		}
		return protoreflect.ValueOfFloat32(float32(f.double()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(f.double())
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(f.str())
	case protoreflect.BytesKind:
		b := make([]byte, f.r.IntN(20))
		for i := range b {
			b[i] = byte(f.r.Uint32())
		}
		return protoreflect.ValueOfBytes(b)
	}
	panic("no scalar of kind " + fd.Kind().String())
}

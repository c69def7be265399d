package gateway

import (
	"bytes"
	"encoding/base64"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/foundryhq/foundry/services/platform/wire"
)

// The gateway renders responses itself instead of through protojson: for a
// list of 50 ideas protojson took 38 % of the gateway's CPU, 40 % of that in
// sort.Slice, because it collects and sorts every message's fields each
// time it renders one (internal/order.RangeFields). A renderPlan is that
// order and everything else protojson looks up per field (the JSON name,
// the kind, the enum's names), computed once per message descriptor.
//
// The output is byte for byte what marshalProtojson writes (protojson with
// marshalOptions, compact, with 64-bit integers as numbers: render_int64.go):
// TestRenderMatchesProtojson compares them
// over every public Foundry message. What protojson would refuse (invalid
// UTF-8, a google.protobuf.Value without a kind or with NaN, a Timestamp
// out of range, a missing required field) is not reproduced: the render
// stops and protojson renders the whole message, so the error is its own.
// Types this file does not render (google.protobuf.Any, messages with
// extension ranges) are rendered by protojson, message by message.

// generatedRenders are the renderings generated for Foundry's public
// messages (render_gen.go, made by TestGeneratedRenderIsCurrent from the
// same rules as the plans), by Go type: each writes its
// message's fields by name from the Go struct, where a plan reads each
// through protobuf reflection (a Has and a Get per field, which were most
// of a response's rendering). A field the generator leaves to the plans
// (a map, a well-known type other than a wrapper) is rendered by its plan
// from within; a message it does not generate (one with a oneof, or no
// Foundry message at all) is rendered by its plan. Without render_gen.go
// every message is rendered by its plan, the same bytes.
var generatedRenders map[reflect.Type]func(*renderer, proto.Message) error

// errRenderDelegate stops a render that protojson must do instead.
var errRenderDelegate = errors.New("gateway: rendering left to protojson")

// marshalJSON renders a message with Foundry's JSON conventions: what
// protojson writes with marshalOptions, compact.
func marshalJSON(msg proto.Message) ([]byte, error) {
	if msg == nil {
		// protojson renders a nil message as an empty object.
		return []byte("{}"), nil
	}
	m := msg.ProtoReflect()
	p := planFor(m.Descriptor())
	r := renderer{buf: make([]byte, 0, p.sizeHint())}
	var err error
	if generated := generatedRenders[reflect.TypeOf(msg)]; generated != nil && m.IsValid() {
		err = generated(&r, msg)
	} else {
		err = r.message(p, m)
	}
	if err == nil {
		err = proto.CheckInitialized(msg)
	}
	if err != nil {
		return marshalProtojson(msg)
	}
	p.noteSize(len(r.buf))
	return r.buf, nil
}

// marshalProtojson is marshalJSON through protojson, its 64-bit integers
// unquoted (wire.Int64AsNumbers): the reference the renderer is tested
// against, and what it falls back to.
func marshalProtojson(msg proto.Message) ([]byte, error) {
	b, err := marshalOptions.Marshal(msg)
	if err != nil {
		return nil, err
	}
	return wire.Int64AsNumbers(compact(b), msg.ProtoReflect().Descriptor()), nil
}

// planShape is how a message is rendered: its fields, or one of the
// well-known types' own JSON forms.
type planShape uint8

const (
	shapeFields    planShape = iota // a JSON object of its fields
	shapeDelegate                   // protojson renders it (Any, extensions)
	shapeWrapper                    // google.protobuf.*Value: the bare value
	shapeStruct                     // an object of its map
	shapeListValue                  // an array
	shapeValue                      // the JSON value its kind holds
	shapeTimestamp                  // RFC 3339 in UTC, Z
	shapeDuration                   // seconds with a suffix s
	shapeFieldMask                  // camelCase paths joined by commas
)

// presence is what an unset field renders as under EmitUnpopulated.
type presence uint8

const (
	// presenceNone: the field has no presence; its value (the zero value,
	// an empty list or map) is always written.
	presenceNone presence = iota
	// presenceNull: a message field (or a proto2 scalar) unset is null.
	presenceNull
	// presenceOmit: a oneof member or a proto3 optional field unset is
	// left out.
	presenceOmit
)

type cardinality uint8

const (
	singular cardinality = iota
	list
	mapOf
)

// renderPlan is one message descriptor's rendering, computed once.
type renderPlan struct {
	shape  planShape
	fields []fieldPlan // in declaration order, protojson's order
	// a and b are the well-known types' fields: the wrapper's value, the
	// Struct's fields, the ListValue's values, the FieldMask's paths;
	// the Timestamp's and Duration's seconds (a) and nanos (b).
	a, b  protoreflect.FieldDescriptor
	aPlan *fieldPlan
	kind  protoreflect.OneofDescriptor // google.protobuf.Value's kind
	// size is the length of this message's last rendering when it was
	// the top-level one: the next one's buffer starts that large.
	size atomic.Int64
}

// fieldPlan is one field: its name as written and how its value is.
type fieldPlan struct {
	fd       protoreflect.FieldDescriptor
	name     []byte // `"name":`, the proto name (UseProtoNames)
	presence presence
	card     cardinality
	key      protoreflect.Kind // a map's key kind
	val      valuePlan         // the value, a list's element or a map's value
}

// valuePlan renders one singular value of a kind.
type valuePlan struct {
	kind protoreflect.Kind
	null bool       // google.protobuf.NullValue: always null
	enum *enumNames // an enum's value names
	msg  *renderPlan
}

// enumNames are an enum's quoted value names by number; a number without
// a name is written as the number.
type enumNames struct {
	dense  [][]byte // numbers 0..len-1
	sparse map[protoreflect.EnumNumber][]byte
}

func (e *enumNames) name(n protoreflect.EnumNumber) []byte {
	if n >= 0 && int(n) < len(e.dense) {
		return e.dense[n]
	}
	return e.sparse[n]
}

var (
	// plans are the finished plans by message descriptor (the generated
	// descriptors are one value per type; a dynamic one gets its own).
	plans sync.Map // protoreflect.MessageDescriptor → *renderPlan
	// planning serialises building plans: a message's plan refers to its
	// fields' plans, recursive types included, and is published only when
	// every plan it reaches is complete.
	planning sync.Mutex
)

// planFor returns md's plan, building it (and every plan it reaches) once.
func planFor(md protoreflect.MessageDescriptor) *renderPlan {
	if p, ok := plans.Load(md); ok {
		return p.(*renderPlan)
	}
	planning.Lock()
	defer planning.Unlock()
	b := planBuilder{built: map[protoreflect.MessageDescriptor]*renderPlan{}}
	p := b.plan(md)
	for d, q := range b.built {
		plans.Store(d, q)
	}
	return p
}

type planBuilder struct {
	built map[protoreflect.MessageDescriptor]*renderPlan
}

func (b *planBuilder) plan(md protoreflect.MessageDescriptor) *renderPlan {
	if p, ok := plans.Load(md); ok {
		return p.(*renderPlan)
	}
	if p, ok := b.built[md]; ok {
		return p
	}
	p := &renderPlan{}
	b.built[md] = p
	// Extensions are rendered after the fields by full name, and a
	// MessageSet (which has extension ranges) is refused: protojson does
	// both. Only descriptor options have extension ranges in proto3.
	if md.ExtensionRanges().Len() > 0 {
		p.shape = shapeDelegate
		return p
	}
	fds := md.Fields()
	p.fields = make([]fieldPlan, fds.Len())
	for i := range fds.Len() {
		p.fields[i] = b.field(fds.Get(i))
	}
	if md.FullName().Parent() != "google.protobuf" {
		return p
	}
	byNumber := func(n protoreflect.FieldNumber) (protoreflect.FieldDescriptor, *fieldPlan) {
		fd := fds.ByNumber(n)
		return fd, &p.fields[fd.Index()]
	}
	switch md.Name() {
	case "Any":
		// protojson resolves the type URL and renders the embedded
		// message with an "@type" member; not reproduced here (no Foundry
		// response holds an Any).
		p.shape = shapeDelegate
	case "BoolValue", "Int32Value", "Int64Value", "UInt32Value", "UInt64Value",
		"FloatValue", "DoubleValue", "StringValue", "BytesValue":
		p.shape = shapeWrapper
		p.a, p.aPlan = byNumber(1)
	case "Struct":
		p.shape = shapeStruct
		p.a, p.aPlan = byNumber(1)
	case "ListValue":
		p.shape = shapeListValue
		p.a, p.aPlan = byNumber(1)
	case "Value":
		p.shape = shapeValue
		p.kind = md.Oneofs().ByName("kind")
	case "Timestamp":
		p.shape = shapeTimestamp
		p.a, p.b = fds.ByNumber(1), fds.ByNumber(2)
	case "Duration":
		p.shape = shapeDuration
		p.a, p.b = fds.ByNumber(1), fds.ByNumber(2)
	case "FieldMask":
		p.shape = shapeFieldMask
		p.a, p.aPlan = byNumber(1)
	}
	// Empty and every other google.protobuf message render as fields.
	return p
}

func (b *planBuilder) field(fd protoreflect.FieldDescriptor) fieldPlan {
	f := fieldPlan{fd: fd}
	f.name, _ = appendJSONString(nil, fd.TextName())
	f.name = append(f.name, ':')
	switch {
	case fd.ContainingOneof() != nil:
		// Real oneofs and proto3 optional (a synthetic oneof) alike.
		f.presence = presenceOmit
	case fd.HasPresence():
		f.presence = presenceNull
	}
	switch {
	case fd.IsMap():
		f.card = mapOf
		f.key = fd.MapKey().Kind()
		f.val = b.value(fd.MapValue())
	case fd.IsList():
		f.card = list
		f.val = b.value(fd)
	default:
		f.val = b.value(fd)
	}
	return f
}

func (b *planBuilder) value(fd protoreflect.FieldDescriptor) valuePlan {
	v := valuePlan{kind: fd.Kind()}
	switch v.kind {
	case protoreflect.EnumKind:
		ed := fd.Enum()
		if ed.FullName() == "google.protobuf.NullValue" {
			v.null = true
			break
		}
		v.enum = enumPlan(ed)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		v.msg = b.plan(fd.Message())
	}
	return v
}

func enumPlan(ed protoreflect.EnumDescriptor) *enumNames {
	vals := ed.Values()
	e := &enumNames{}
	for i := range vals.Len() {
		n := vals.Get(i).Number()
		// ByNumber is protojson's look-up: with aliases, the first
		// value declared with the number.
		name, _ := appendJSONString(nil, string(vals.ByNumber(n).Name()))
		switch {
		case n >= 0 && n < 256:
			for int(n) >= len(e.dense) {
				e.dense = append(e.dense, nil)
			}
			e.dense[n] = name
		default:
			if e.sparse == nil {
				e.sparse = map[protoreflect.EnumNumber][]byte{}
			}
			e.sparse[n] = name
		}
	}
	return e
}

func (p *renderPlan) sizeHint() int {
	n := p.size.Load()
	return int(n + n/8 + 64)
}

func (p *renderPlan) noteSize(n int) { p.size.Store(int64(n)) }

// renderer appends one response's JSON to buf.
type renderer struct {
	buf []byte
}

func (r *renderer) message(p *renderPlan, m protoreflect.Message) error {
	switch p.shape {
	case shapeFields:
	case shapeDelegate:
		return r.delegate(m)
	case shapeWrapper:
		return r.singular(&p.aPlan.val, m.Get(p.a))
	case shapeStruct:
		return r.mapOf(p.aPlan, m.Get(p.a).Map())
	case shapeListValue:
		return r.list(p.aPlan, m.Get(p.a).List())
	case shapeValue:
		return r.knownValue(p, m)
	case shapeTimestamp:
		return r.timestamp(m.Get(p.a).Int(), m.Get(p.b).Int())
	case shapeDuration:
		return r.duration(m.Get(p.a).Int(), m.Get(p.b).Int())
	case shapeFieldMask:
		return r.fieldMask(m.Get(p.a).List())
	}
	r.buf = append(r.buf, '{')
	first := true
	for i := range p.fields {
		f := &p.fields[i]
		if f.presence != presenceNone && !m.Has(f.fd) {
			if f.presence == presenceOmit {
				continue
			}
			r.name(f, first)
			first = false
			r.buf = append(r.buf, "null"...)
			continue
		}
		r.name(f, first)
		first = false
		if err := r.field(f, m); err != nil {
			return err
		}
	}
	r.buf = append(r.buf, '}')
	return nil
}

// field writes the value of m's field f: a list, a map or one value.
func (r *renderer) field(f *fieldPlan, m protoreflect.Message) error {
	v := m.Get(f.fd)
	switch f.card {
	case list:
		return r.list(f, v.List())
	case mapOf:
		return r.mapOf(f, v.Map())
	}
	return r.singular(&f.val, v)
}

func (r *renderer) name(f *fieldPlan, first bool) {
	if !first {
		r.buf = append(r.buf, ',')
	}
	r.buf = append(r.buf, f.name...)
}

// delegate renders m through protojson: a type this file does not render.
// Its output is the same inside a message as alone.
func (r *renderer) delegate(m protoreflect.Message) error {
	b, err := marshalOptions.Marshal(m.Interface())
	if err != nil {
		return errRenderDelegate
	}
	r.buf = append(r.buf, wire.Int64AsNumbers(compact(b), m.Descriptor())...)
	return nil
}

func (r *renderer) singular(v *valuePlan, val protoreflect.Value) error {
	switch v.kind {
	case protoreflect.BoolKind:
		r.buf = strconv.AppendBool(r.buf, val.Bool())
	case protoreflect.StringKind:
		return r.str(val.String())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		r.buf = strconv.AppendInt(r.buf, val.Int(), 10)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		r.buf = strconv.AppendUint(r.buf, val.Uint(), 10)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		// Numbers, where protojson writes strings (render_int64.go).
		r.buf = strconv.AppendInt(r.buf, val.Int(), 10)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		r.buf = strconv.AppendUint(r.buf, val.Uint(), 10)
	case protoreflect.FloatKind:
		r.buf = appendJSONFloat(r.buf, val.Float(), 32)
	case protoreflect.DoubleKind:
		r.buf = appendJSONFloat(r.buf, val.Float(), 64)
	case protoreflect.BytesKind:
		r.buf = append(r.buf, '"')
		r.buf = base64.StdEncoding.AppendEncode(r.buf, val.Bytes())
		r.buf = append(r.buf, '"')
	case protoreflect.EnumKind:
		if v.null {
			r.buf = append(r.buf, "null"...)
		} else {
			r.enum(v.enum, int32(val.Enum()))
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return r.message(v.msg, val.Message())
	default:
		return errRenderDelegate
	}
	return nil
}

func (r *renderer) list(f *fieldPlan, l protoreflect.List) error {
	r.buf = append(r.buf, '[')
	for i := range l.Len() {
		if i > 0 {
			r.buf = append(r.buf, ',')
		}
		if err := r.singular(&f.val, l.Get(i)); err != nil {
			return err
		}
	}
	r.buf = append(r.buf, ']')
	return nil
}

type mapEntry struct {
	k protoreflect.MapKey
	v protoreflect.Value
}

// mapEntries is scratch space for sorting a map's keys.
var mapEntries = sync.Pool{New: func() any { return new([]mapEntry) }}

// mapOf writes a map's entries by key, as protojson orders them: false
// before true, numbers ascending, strings by bytes (UTF-8 code points).
func (r *renderer) mapOf(f *fieldPlan, mv protoreflect.Map) error {
	if mv.Len() == 0 {
		r.buf = append(r.buf, '{', '}')
		return nil
	}
	sp := mapEntries.Get().(*[]mapEntry)
	entries := (*sp)[:0]
	mv.Range(func(k protoreflect.MapKey, v protoreflect.Value) bool {
		entries = append(entries, mapEntry{k, v})
		return true
	})
	var cmp func(a, b mapEntry) int
	switch f.key {
	case protoreflect.BoolKind:
		cmp = func(a, b mapEntry) int {
			switch ab, bb := a.k.Bool(), b.k.Bool(); {
			case ab == bb:
				return 0
			case !ab:
				return -1
			default:
				return 1
			}
		}
	case protoreflect.StringKind:
		cmp = func(a, b mapEntry) int { return strings.Compare(a.k.String(), b.k.String()) }
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		cmp = func(a, b mapEntry) int {
			x, y := a.k.Uint(), b.k.Uint()
			return compareOrdered(x, y)
		}
	default:
		cmp = func(a, b mapEntry) int {
			x, y := a.k.Int(), b.k.Int()
			return compareOrdered(x, y)
		}
	}
	slices.SortFunc(entries, cmp)
	err := r.entries(f, entries)
	clear(entries)
	if cap(entries) < 1024 {
		*sp = entries[:0]
		mapEntries.Put(sp)
	}
	return err
}

func compareOrdered[T int64 | uint64](x, y T) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func (r *renderer) entries(f *fieldPlan, entries []mapEntry) error {
	r.buf = append(r.buf, '{')
	for i, e := range entries {
		if i > 0 {
			r.buf = append(r.buf, ',')
		}
		var err error
		switch f.key {
		case protoreflect.StringKind:
			r.buf, err = appendJSONString(r.buf, e.k.String())
		case protoreflect.BoolKind:
			r.buf = append(r.buf, '"')
			r.buf = strconv.AppendBool(r.buf, e.k.Bool())
			r.buf = append(r.buf, '"')
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			r.buf = append(r.buf, '"')
			r.buf = strconv.AppendUint(r.buf, e.k.Uint(), 10)
			r.buf = append(r.buf, '"')
		default:
			r.buf = append(r.buf, '"')
			r.buf = strconv.AppendInt(r.buf, e.k.Int(), 10)
			r.buf = append(r.buf, '"')
		}
		if err != nil {
			return err
		}
		r.buf = append(r.buf, ':')
		if err := r.singular(&f.val, e.v); err != nil {
			return err
		}
	}
	r.buf = append(r.buf, '}')
	return nil
}

// knownValue writes a google.protobuf.Value: the JSON value of its kind.
// protojson refuses one without a kind and a number that is NaN or
// infinite; so does this, by leaving it to protojson.
func (r *renderer) knownValue(p *renderPlan, m protoreflect.Message) error {
	fd := m.WhichOneof(p.kind)
	if fd == nil {
		return errRenderDelegate
	}
	v := m.Get(fd)
	if fd.Kind() == protoreflect.DoubleKind {
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return errRenderDelegate
		}
	}
	return r.singular(&p.fields[fd.Index()].val, v)
}

// The ranges protojson accepts for google.protobuf.Timestamp and Duration.
const (
	maxTimestampSeconds  = 253402300799
	minTimestampSeconds  = -62135596800
	maxDurationSeconds   = 315576000000
	maxFractionNanos     = 999999999
	timestampFormatNanos = "2006-01-02T15:04:05.000000000"
)

// timestamp writes RFC 3339 in UTC with 0, 3, 6 or 9 fractional digits,
// as protojson does.
func (r *renderer) timestamp(secs, nanos int64) error {
	if secs < minTimestampSeconds || secs > maxTimestampSeconds || nanos < 0 || nanos > maxFractionNanos {
		return errRenderDelegate
	}
	r.buf = append(r.buf, '"')
	r.buf = time.Unix(secs, nanos).UTC().AppendFormat(r.buf, timestampFormatNanos)
	r.trimFraction()
	r.buf = append(r.buf, 'Z', '"')
	return nil
}

// duration writes seconds with 0, 3, 6 or 9 fractional digits and an s,
// as protojson does.
func (r *renderer) duration(secs, nanos int64) error {
	if secs < -maxDurationSeconds || secs > maxDurationSeconds ||
		nanos < -maxFractionNanos || nanos > maxFractionNanos ||
		(secs > 0 && nanos < 0) || (secs < 0 && nanos > 0) {
		return errRenderDelegate
	}
	r.buf = append(r.buf, '"')
	if secs < 0 || nanos < 0 {
		r.buf = append(r.buf, '-')
		secs, nanos = -secs, -nanos
	}
	r.buf = strconv.AppendInt(r.buf, secs, 10)
	r.buf = append(r.buf, '.')
	for d := int64(100000000); d > 0; d /= 10 {
		r.buf = append(r.buf, byte('0'+nanos/d%10))
	}
	r.trimFraction()
	r.buf = append(r.buf, 's', '"')
	return nil
}

// trimFraction drops trailing groups of three zeros from the nine
// fractional digits just written, and the point with the last group.
func (r *renderer) trimFraction() {
	for range 2 {
		if bytes.HasSuffix(r.buf, []byte("000")) {
			r.buf = r.buf[:len(r.buf)-3]
		}
	}
	if bytes.HasSuffix(r.buf, []byte(".000")) {
		r.buf = r.buf[:len(r.buf)-4]
	}
}

// fieldMask writes the paths in lowerCamelCase joined by commas; a path
// that is not a proto name or does not convert back (protojson's errors)
// is left to protojson.
func (r *renderer) fieldMask(paths protoreflect.List) error {
	joined := make([]string, 0, paths.Len())
	for i := range paths.Len() {
		s := paths.Get(i).String()
		if !protoreflect.FullName(s).IsValid() {
			return errRenderDelegate
		}
		cc := jsonCamelCase(s)
		if s != jsonSnakeCase(cc) {
			return errRenderDelegate
		}
		joined = append(joined, cc)
	}
	var err error
	r.buf, err = appendJSONString(r.buf, strings.Join(joined, ","))
	return err
}

// jsonCamelCase and jsonSnakeCase are protojson's (internal/strs) field
// mask conversions; proto identifiers are ASCII.
func jsonCamelCase(s string) string {
	var b []byte
	var wasUnderscore bool
	for i := range len(s) {
		c := s[i]
		if c != '_' {
			if wasUnderscore && 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			b = append(b, c)
		}
		wasUnderscore = c == '_'
	}
	return string(b)
}

func jsonSnakeCase(s string) string {
	var b []byte
	for i := range len(s) {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			b = append(b, '_')
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return string(b)
}

// appendJSONString writes s as protojson does: quotes, backslashes and
// control characters escaped (\b \f \n \r \t, otherwise \u00xx), nothing
// else — not <, > or &, not U+2028 — and invalid UTF-8 refused.
func appendJSONString(out []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return out, errRenderDelegate
	}
	const hex = "0123456789abcdef"
	out = append(out, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= ' ' && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[start:i]...)
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	out = append(out, s[start:]...)
	return append(out, '"'), nil
}

// appendJSONFloat is protojson's number format (internal/encoding/json,
// after encoding/json): NaN and the infinities as strings, exponent form
// below 1e-6 and from 1e21, shortest digits that round-trip at bitSize.
func appendJSONFloat(out []byte, n float64, bitSize int) []byte {
	switch {
	case math.IsNaN(n):
		return append(out, `"NaN"`...)
	case math.IsInf(n, +1):
		return append(out, `"Infinity"`...)
	case math.IsInf(n, -1):
		return append(out, `"-Infinity"`...)
	}
	// An integer below the float's integer precision is written as its
	// digits, which is what the shortest form is for such a value, without
	// strconv's shortest-digits search: most of Foundry's numbers are whole
	// (values, costs, counts), and the search was most of a response's
	// rendering of them. Negative zero keeps its sign through strconv.
	if limit := integerPrecision(bitSize); n > -limit && n < limit {
		if i := int64(n); float64(i) == n && (i != 0 || !math.Signbit(n)) {
			return strconv.AppendInt(out, i, 10)
		}
	}
	format := byte('f')
	if abs := math.Abs(n); abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	out = strconv.AppendFloat(out, n, format, -1, bitSize)
	if format == 'e' {
		// 1e-07 becomes 1e-7.
		n := len(out)
		if n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out
}

// integerPrecision is the bound below which every integer a float of
// bitSize holds is exact and no two of them share a shortest decimal form:
// 2^53 for a double, 2^24 for a float.
func integerPrecision(bitSize int) float64 {
	if bitSize == 32 {
		return 1 << 24
	}
	return 1 << 53
}

// str writes a string value.
func (r *renderer) str(s string) error {
	var err error
	r.buf, err = appendJSONString(r.buf, s)
	return err
}

// enum writes an enum value: its name, or its number when it has none.
func (r *renderer) enum(e *enumNames, n int32) {
	if name := e.name(protoreflect.EnumNumber(n)); name != nil {
		r.buf = append(r.buf, name...)
		return
	}
	r.buf = strconv.AppendInt(r.buf, int64(n), 10)
}

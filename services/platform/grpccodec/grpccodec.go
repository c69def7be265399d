// Package grpccodec is the protobuf codec of every gRPC call a Foundry
// process makes or serves. Foundry's messages are marshalled, sized and
// unmarshalled by the code vtprotobuf generates beside them
// (proto/gen/go/**/*_vtproto.pb.go), which walks each message's fields
// directly where google.golang.org/protobuf walks them by reflection; any
// other message (grpc.health.v1, reflection's) goes through gRPC's own
// codec. vtprotobuf's codec (codec/grpc) is not used: it refuses those
// other messages, and as gRPC's older Codec interface it copies every
// received message once more.
//
// Importing the package registers the codec under gRPC's name "proto",
// replacing gRPC's default for every client and server of the process (gRPC
// looks the codec up by that name on each call). grpcserver imports it, so
// every process built on it uses the codec on both ends of the hop.
//
// One difference from protobuf-go: the generated code does not check that a
// string field holds UTF-8 (protobuf-go refuses to marshal or unmarshal one
// that does not). The gateway checks paths, queries and bodies before it
// calls, and grpcserver's text check refuses a bad string from any other
// caller as a validation error naming the field, except from a call that
// carries a principal, which it takes for the gateway's (docs/performance.md,
// "The gRPC hop's marshalling").
package grpccodec

import (
	"google.golang.org/grpc/encoding"
	// gRPC's codec registers itself in its package's init, which runs
	// before this package's variables are initialised: protoCodec below
	// is that codec, and this package's init then replaces it.
	_ "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// Name is the name gRPC knows the protobuf codec by (and the content
// subtype of application/grpc+proto).
const Name = "proto"

// protoCodec is gRPC's own protobuf codec, kept for the messages without
// generated marshalling.
var protoCodec = encoding.GetCodecV2(Name)

func init() {
	encoding.RegisterCodecV2(Codec{})
}

// Codec is the protobuf codec: generated marshalling when the message has
// it, protobuf-go's otherwise.
type Codec struct{}

// vtMarshaler is what vtprotobuf's size and marshal features generate.
type vtMarshaler interface {
	SizeVT() int
	MarshalToSizedBufferVT(dAtA []byte) (int, error)
}

// vtUnmarshaler is what its unmarshal feature generates, beside the Reset
// every message has.
type vtUnmarshaler interface {
	Reset()
	UnmarshalVT(dAtA []byte) error
}

// Marshal encodes v into one buffer of the exact size: a plain slice for a
// small message, one from gRPC's pool (which gRPC frees once it is
// written) for a large one, as gRPC's codec does.
func (Codec) Marshal(v any) (mem.BufferSlice, error) {
	vt, ok := v.(vtMarshaler)
	if !ok {
		return protoCodec.Marshal(v)
	}
	size := vt.SizeVT()
	if mem.IsBelowBufferPoolingThreshold(size) {
		buf := make([]byte, size)
		if _, err := vt.MarshalToSizedBufferVT(buf); err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(size)
	// The generated code writes backwards from the end of a buffer of
	// exactly SizeVT bytes, every one of them.
	if _, err := vt.MarshalToSizedBufferVT((*buf)[:size]); err != nil {
		pool.Put(buf)
		return nil, err
	}
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// Unmarshal decodes data into v. The generated code copies every string
// and bytes field out of data (the unmarshal feature, not unmarshal_unsafe),
// so nothing points into the buffers gRPC frees when this returns.
func (Codec) Unmarshal(data mem.BufferSlice, v any) error {
	vt, ok := v.(vtUnmarshaler)
	if !ok {
		return protoCodec.Unmarshal(data, v)
	}
	// UnmarshalVT merges into the message where proto.Unmarshal replaces
	// it; a message received into twice (a stream's RecvMsg into the same
	// value) must not keep the first one's fields.
	vt.Reset()
	// One buffer (the usual case) is used as it is; several are copied
	// into one from the pool.
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return vt.UnmarshalVT(buf.ReadOnlyData())
}

// Name is "proto".
func (Codec) Name() string { return Name }

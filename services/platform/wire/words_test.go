package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/typepb"
)

func TestWords(t *testing.T) {
	t.Parallel()
	syntax := typepb.Syntax(0).Descriptor() // SYNTAX_PROTO2 = 0, SYNTAX_PROTO3, SYNTAX_EDITIONS
	require.Equal(t, []string{"SYNTAX_PROTO3", "SYNTAX_EDITIONS"}, Words(syntax), "the zero is not a word")
	require.True(t, IsWord(syntax, "SYNTAX_PROTO3"))
	require.False(t, IsWord(syntax, "SYNTAX_PROTO2"), "the zero's name")
	require.False(t, IsWord(syntax, "2"), "a number")
	require.False(t, IsWord(syntax, "syntax_proto3"), "another case")
	require.Empty(t, Words(structpb.NullValue(0).Descriptor()), "an enum of its zero alone")
}

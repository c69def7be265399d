package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// words are the words of a vocabulary enum a client may send, in the
// enum's order: every value but the zero, which stands for "not given".
func words(d protoreflect.EnumDescriptor) []string {
	var out []string
	for i := range d.Values().Len() {
		if v := d.Values().Get(i); v.Number() != 0 {
			out = append(out, string(v.Name()))
		}
	}
	return out
}

// enumFlag is a flag whose value is a word of a vocabulary enum (a stage, a
// task status): the CLI refuses a word the API does not have before it
// calls, with the same message the API would give, and completes the words
// from the enum, so the CLI's list cannot drift from the protos.
type enumFlag[E protoreflect.Enum] struct {
	target *E
	word   string
}

// String implements pflag.Value.
func (f *enumFlag[E]) String() string { return f.word }

// Type implements pflag.Value.
func (f *enumFlag[E]) Type() string { return "string" }

// Set implements pflag.Value.
func (f *enumFlag[E]) Set(s string) error {
	var zero E
	d := zero.Descriptor()
	v := d.Values().ByName(protoreflect.Name(s))
	if v == nil || v.Number() == 0 {
		return fmt.Errorf("must be one of %s", strings.Join(words(d), ", "))
	}
	*f.target = zero.Type().New(v.Number()).(E)
	f.word = s
	return nil
}

// enumVar defines an enum flag on cmd that sets *target, with completion.
func enumVar[E protoreflect.Enum](cmd *cobra.Command, target *E, name, usage string) {
	cmd.Flags().Var(&enumFlag[E]{target: target}, name, usage)
	var zero E
	completeWith(cmd, name, words(zero.Descriptor()))
}

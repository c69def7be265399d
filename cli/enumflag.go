package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/foundryhq/foundry/services/platform/wire"
)

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
	if !wire.IsWord(d, s) {
		return fmt.Errorf("must be one of %s", strings.Join(wire.Words(d), ", "))
	}
	*f.target = zero.Type().New(d.Values().ByName(protoreflect.Name(s)).Number()).(E)
	f.word = s
	return nil
}

// enumVar defines an enum flag on cmd that sets *target, with completion.
func enumVar[E protoreflect.Enum](cmd *cobra.Command, target *E, name, usage string) {
	cmd.Flags().Var(&enumFlag[E]{target: target}, name, usage)
	var zero E
	completeWith(cmd, name, wire.Words(zero.Descriptor()))
}

// choiceFlag is a flag whose value is one word of a fixed list: the open
// vocabularies the protos keep as strings (task types, failure categories,
// token roles, asset types) and the client's own (-o). A word outside the
// list is refused while the command line is read, before any request, with
// the message the API gives for the field; the list completes on <TAB>.
// Repeated, it collects every word (tasks claim --type impl --type test).
type choiceFlag struct {
	one   *string
	many  *[]string
	words []string
}

// String implements pflag.Value.
func (f *choiceFlag) String() string {
	if f.many != nil {
		return "[" + strings.Join(*f.many, ",") + "]"
	}
	return *f.one
}

// Type implements pflag.Value: the names pflag gives its own string flags,
// so help reads as before.
func (f *choiceFlag) Type() string {
	if f.many != nil {
		return "stringArray"
	}
	return "string"
}

// Set implements pflag.Value.
func (f *choiceFlag) Set(s string) error {
	if !slices.Contains(f.words, s) {
		return fmt.Errorf("must be one of %s", strings.Join(f.words, ", "))
	}
	if f.many != nil {
		*f.many = append(*f.many, s)
	} else {
		*f.one = s
	}
	return nil
}

// choiceVar defines a flag on cmd that sets *target to one of words, with
// completion.
func choiceVar(cmd *cobra.Command, target *string, name string, words []string, usage string) {
	cmd.Flags().Var(&choiceFlag{one: target, words: words}, name, usage)
	completeWith(cmd, name, words)
}

// choicesVar defines a repeatable flag on cmd that appends to *target, each
// value one of words, with completion.
func choicesVar(cmd *cobra.Command, target *[]string, name string, words []string, usage string) {
	cmd.Flags().Var(&choiceFlag{many: target, words: words}, name, usage)
	completeWith(cmd, name, words)
}

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/mattn/go-isatty"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"

	commonv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/common/v1"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// format is how a command prints its answer (-o).
type format string

const (
	// formatTable is for people: aligned columns, or a field per line.
	formatTable format = "table"
	// formatJSON is the API's answer, one JSON document.
	formatJSON format = "json"
	// formatID is the id of each thing the command created, showed or
	// listed, one per line: what a script keeps in a variable.
	formatID format = "id"
)

// formats are the words of -o, in the order help lists them.
var formats = []string{string(formatJSON), string(formatTable), string(formatID)}

// idAnnotation is the cobra annotation naming where a command's answer
// holds its ids, as a path of JSON members from the answer's top; a member
// that is a list is walked item by item ("tasks.id": the id of every task).
// A command without it prints no ids, and -o id is refused before it runs.
const idAnnotation = "foundry.ids"

// withIDs marks cmd as printing the ids found at path with -o id.
func withIDs(cmd *cobra.Command, path string) *cobra.Command {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[idAnnotation] = path
	return cmd
}

// machine reports whether the answer is printed for a program (-o json or
// -o id) rather than as a table: commands then print the API's answer,
// which printJSON renders as the format asks.
func (e *env) machine() bool { return e.format != formatTable }

// printJSON writes one JSON document and a newline: the API's own bytes
// over REST, the same rendering over gRPC. With -o id it writes the ids
// the document holds instead.
func (e *env) printJSON(raw []byte) error {
	if e.format == formatID {
		return e.printIDs(raw)
	}
	if e.jq != nil {
		return e.printFiltered(raw)
	}
	_, err := fmt.Fprintf(e.stdout, "%s\n", raw)
	return err
}

// printIDs writes the ids at the command's id path in raw, one per line;
// nothing for a null (tasks claim finding no task).
func (e *env) printIDs(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // a seq stays as written
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return fmt.Errorf("unexpected answer (not JSON): %.200s", raw)
	}
	var b strings.Builder
	for _, id := range idsAt(doc, strings.Split(e.idPath, ".")) {
		b.WriteString(printable(id) + "\n")
	}
	_, err := io.WriteString(e.stdout, b.String())
	return err
}

// idsAt returns the scalars at path in v, walking every item of a list.
func idsAt(v any, path []string) []string {
	switch v := v.(type) {
	case []any:
		var out []string
		for _, it := range v {
			out = append(out, idsAt(it, path)...)
		}
		return out
	case map[string]any:
		if len(path) == 0 {
			return nil
		}
		return idsAt(v[path[0]], path[1:])
	case nil:
		return nil
	}
	if len(path) > 0 {
		return nil
	}
	return []string{fmt.Sprint(v)}
}

// note writes a message for people on stderr (a hint, a detail beside
// the answer), unless -q asks for quiet.
func (e *env) note(format string, args ...any) {
	if !e.quiet {
		fmt.Fprintf(e.stderr, format, args...)
	}
}

// pageHint says on stderr that a list has more pages than the one shown,
// and how to read on (with --all where the command has it).
func (e *env) pageHint(what string, shown int, p *commonv1.Pagination, hasAll bool) {
	if !p.GetHasMore() {
		return
	}
	how := "for more"
	if hasAll {
		how = "or --all for more"
	}
	e.note("%d of %d %s shown: --offset %d %s\n", shown, p.GetTotal(), what, p.GetOffset()+int32(shown), how)
}

// printMessage writes a message the client assembled itself (the pages of
// --all merged into one list) with the API's JSON conventions.
func (e *env) printMessage(m proto.Message) error {
	raw, err := renderMessage(m)
	if err != nil {
		return err
	}
	return e.printJSON(raw)
}

// renderMessage is m as the REST API would answer it: the gateway's JSON
// options, compact (protojson varies its spacing on purpose), with 64-bit
// integers as numbers (wire.Int64AsNumbers).
func renderMessage(m proto.Message) ([]byte, error) {
	b, err := marshalOptions.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return wire.Int64AsNumbers(buf.Bytes(), m.ProtoReflect().Descriptor()), nil
}

// printObject writes one object of the API: its JSON (or its id) with -o
// json (-o id), else a "field  value" line per field in the API's order.
func (e *env) printObject(raw []byte) error {
	if e.machine() {
		return e.printJSON(raw)
	}
	fields, err := objectFields(raw)
	if err != nil {
		return err
	}
	rows := make([][]string, len(fields))
	for i, f := range fields {
		rows[i] = []string{f.name, cell(f.value)}
	}
	return e.table(nil, rows)
}

// table writes rows as aligned columns under header (none when nil).
func (e *env) table(header []string, rows [][]string) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	if header != nil {
		fmt.Fprintln(tw, strings.Join(header, "\t"))
	}
	for _, r := range rows {
		clean := make([]string, len(r))
		for i, c := range r {
			clean[i] = printable(c)
		}
		fmt.Fprintln(tw, strings.Join(clean, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Padding before an empty last cell is no use to anyone.
	for line := range strings.Lines(buf.String()) {
		if _, err := fmt.Fprintln(e.stdout, strings.TrimRight(line, " \n")); err != nil {
			return err
		}
	}
	return nil
}

// field is one member of a JSON object.
type field struct {
	name  string
	value json.RawMessage
}

// objectFields splits a JSON object into its members, in order.
func objectFields(raw []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("unexpected answer (not a JSON object): %.200s", raw)
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, field{name: fmt.Sprint(t), value: v})
	}
	return out, nil
}

// member returns the member name of a JSON object (null when absent).
func member(raw []byte, name string) (json.RawMessage, error) {
	fields, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		if f.name == name {
			return f.value, nil
		}
	}
	return json.RawMessage("null"), nil
}

// cell renders a JSON value for a table: strings bare, null as "-",
// numbers and booleans as written, objects and lists as compact JSON.
func cell(v json.RawMessage) string {
	var s string
	switch {
	case string(v) == "null":
		return "-"
	case json.Unmarshal(v, &s) == nil:
		return s
	}
	return string(v)
}

// printable keeps a cell on one line and keeps the terminal safe from
// control characters in the data (escape sequences).
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

// truncate shortens s to n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// isTerminal reports whether w is a terminal; progress is shown only
// there, so scripts and logs never see it. A writer that is no file may
// say for itself (an IsTerminal method): a program embedding the client,
// or a test of its progress output.
func isTerminal(w io.Writer) bool {
	if t, ok := w.(interface{ IsTerminal() bool }); ok {
		return t.IsTerminal()
	}
	f, ok := w.(interface{ Fd() uintptr })
	return ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// progress is a status line on stderr, rewritten in place, shown only
// when stderr is a terminal and -q is not given.
type progress struct {
	w     io.Writer
	on    bool
	shown bool
}

func (e *env) progress() *progress {
	return &progress{w: e.stderr, on: !e.quiet && isTerminal(e.stderr)}
}

// update replaces the status line.
func (p *progress) update(format string, args ...any) {
	if !p.on {
		return
	}
	fmt.Fprintf(p.w, "\r\x1b[K"+format, args...)
	p.shown = true
}

// done clears the status line.
func (p *progress) done() {
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}

// printFiltered writes what --jq's filter makes of raw, one value a line:
// a string bare (as jq -r, so a script reads it as is), anything else as
// compact JSON. A filter's runtime error is the command's error.
func (e *env) printFiltered(raw []byte) error {
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("unexpected answer (not JSON): %.200s", raw)
	}
	var b strings.Builder
	iter := e.jq.Run(doc)
	for {
		v, ok := iter.Next()
		if !ok {
			break
		}
		if err, isErr := v.(error); isErr {
			return fmt.Errorf("--jq: %w", err)
		}
		if s, isString := v.(string); isString {
			b.WriteString(printable(s) + "\n")
			continue
		}
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("--jq: %w", err)
		}
		b.Write(out)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(e.stdout, b.String())
	return err
}

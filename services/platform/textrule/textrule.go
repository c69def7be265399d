// Package textrule is the rule for text people write that others read: an
// idea's name and description, a token's name. Such text may hold any
// script, but not characters that change how the rest is shown without
// being seen themselves: control characters, and the bidirectional
// controls and zero-width characters that let "Ignore previous
// instructions" read as something harmless (U+202E RIGHT-TO-LEFT OVERRIDE
// reverses what follows it). It is pure: no I/O, no state.
package textrule

import (
	"fmt"
	"unicode"
)

// hidden are the format characters refused besides control characters:
// the bidirectional marks, embeddings, overrides and isolates, and the
// zero-width characters that join or split nothing visible. Other format
// characters (U+200D ZERO WIDTH JOINER in emoji sequences, U+200C in
// Persian words, the soft hyphen) carry meaning and are kept.
var hidden = map[rune]bool{
	0x061C: true,               // ARABIC LETTER MARK
	0x200B: true,               // ZERO WIDTH SPACE
	0x200E: true, 0x200F: true, // LEFT-TO-RIGHT MARK, RIGHT-TO-LEFT MARK
	0x202A: true, 0x202B: true, 0x202C: true, 0x202D: true, 0x202E: true, // embeddings, pop, overrides
	0x2060: true,                                           // WORD JOINER
	0x2066: true, 0x2067: true, 0x2068: true, 0x2069: true, // isolates
	0xFEFF: true, // ZERO WIDTH NO-BREAK SPACE (a byte-order mark)
}

// Check returns nil when s holds no control character (but newline, tab
// and carriage return when multiline) and no hidden character, else a
// sentence naming the first one and where it is, for a field error.
func Check(s string, multiline bool) error {
	for i, r := range s {
		switch {
		case multiline && (r == '\n' || r == '\t' || r == '\r'):
		case unicode.IsControl(r):
			return fmt.Errorf("must not contain control characters (U+%04X at byte %d)", r, i)
		case hidden[r]:
			return fmt.Errorf("must not contain invisible or bidirectional control characters (U+%04X at byte %d)", r, i)
		}
	}
	return nil
}

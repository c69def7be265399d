package idea

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// MaxTags bounds an idea's tags.
const MaxTags = 32

var (
	tagPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,39}$`)
	spaces     = regexp.MustCompile(`\s+`)
)

// NormalizeTag lowercases a tag, trims it and joins inner runs of white space
// with a hyphen ("  Machine Learning " → "machine-learning").
func NormalizeTag(tag string) string {
	return spaces.ReplaceAllString(strings.ToLower(strings.TrimSpace(tag)), "-")
}

// NormalizeTags normalises every tag, drops duplicates and sorts them. A tag
// that is empty or not [a-z0-9][a-z0-9_-]{0,39} after normalising is an
// error, as are more than MaxTags tags.
func NormalizeTags(tags []string) ([]string, error) {
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		n := NormalizeTag(t)
		if !tagPattern.MatchString(n) {
			return nil, fmt.Errorf("tag %q must be 1 to 40 letters, digits, _ or - after normalising", t)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxTags {
		return nil, fmt.Errorf("at most %d tags", MaxTags)
	}
	return out, nil
}

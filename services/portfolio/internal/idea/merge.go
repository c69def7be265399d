package idea

import "time"

// Merge folds fold into keep, as right-sizing's merge applies it: keep
// gains fold's tags and fold is archived as merged into keep, both stamped
// now. It only computes the two ideas; storing them together is the
// caller's job.
func Merge(keep, fold Idea, now time.Time) (kept, folded Idea) {
	kept = keep
	kept.Tags = unionTags(keep.Tags, fold.Tags)
	kept.UpdatedAt = now
	folded = fold
	folded.Archived, folded.MergedIntoID, folded.UpdatedAt = true, keep.ID, now
	return kept, folded
}

func unionTags(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range append(append([]string(nil), a...), b...) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	normalized, err := NormalizeTags(out)
	if err != nil {
		return a // both lists were valid; the union can only exceed the count limit
	}
	return normalized
}

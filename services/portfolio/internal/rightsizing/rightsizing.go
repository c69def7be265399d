// Package rightsizing judges whether ideas are the right size: too large
// (many open questions or tasks: split it), too small (in progress with no
// linked work), or overlapping another idea (similar name and description:
// merge them). It computes per-idea signals, split and merge suggestions,
// and the portfolio health counts a snapshot records.
package rightsizing

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Thresholds of the signals.
const (
	// TooLargeQuestions open questions or more make an idea too large.
	TooLargeQuestions = 10
	// TooLargeTasks tasks or fewer are fine; more make an idea too large.
	TooLargeTasks = 8
	// OverlapSimilarity is the cosine similarity at or above which two ideas overlap.
	OverlapSimilarity = 0.80
	// questionsPerChild is how many open questions a proposed child takes.
	questionsPerChild = 5
	// maxChildren bounds a split proposal.
	maxChildren = 5
)

// Item is what right-sizing needs to know about one active idea.
type Item struct {
	ID          string
	Name        string
	Description string
	Score       float64
	// InProgress is true between specced and reviewing.
	InProgress bool
	// OpenQuestions are the texts of the idea's open questions, oldest first.
	OpenQuestions []string
	TaskCount     int
	// ChildCount counts ideas split from this one.
	ChildCount int
}

// Signals are one idea's right-sizing signals.
type Signals struct {
	IdeaID            string
	Name              string
	TooLarge          bool
	TooSmall          bool
	Overlap           bool
	OpenQuestionCount int
	TaskCount         int
	// OverlapWith names the overlapping ideas, most similar first.
	OverlapWith []string
}

// Child is an idea a split would create.
type Child struct {
	Name        string
	Description string
}

// Suggestion proposes a split or a merge.
type Suggestion struct {
	// Type is "split" or "merge".
	Type       string
	IdeaID     string
	Confidence float64
	Rationale  string
	// Children is set for a split.
	Children []Child
	// OverlapWithID is set for a merge: the idea to fold into IdeaID.
	OverlapWithID string
}

// Suggestion types and the actions that apply them.
const (
	Split           = "split"
	Merge           = "merge"
	SplitIntoChild  = "split_into_children"
	MergeAndArchive = "merge_and_archive"
)

// Health counts ideas by signal; an idea may raise several.
type Health struct {
	Total, TooLarge, TooSmall, Overlap, Healthy, Suggestions int
}

// Report is the portfolio's right-sizing view.
type Report struct {
	Health      Health
	Signals     []Signals
	Suggestions []Suggestion
}

// Analyze computes signals for every item, suggestions ordered by confidence
// (descending, then idea id), and the health counts.
func Analyze(items []Item) Report {
	overlaps := findOverlaps(items)
	r := Report{Health: Health{Total: len(items)}}
	for i, it := range items {
		s := Signals{
			IdeaID: it.ID, Name: it.Name,
			OpenQuestionCount: len(it.OpenQuestions), TaskCount: it.TaskCount,
			TooLarge: len(it.OpenQuestions) >= TooLargeQuestions || it.TaskCount > TooLargeTasks,
			TooSmall: it.InProgress && it.TaskCount == 0 && it.ChildCount == 0,
		}
		for _, o := range overlaps[i] {
			s.OverlapWith = append(s.OverlapWith, items[o.other].ID)
		}
		s.Overlap = len(s.OverlapWith) > 0
		r.Signals = append(r.Signals, s)
		if s.TooLarge {
			r.Health.TooLarge++
			r.Suggestions = append(r.Suggestions, splitSuggestion(it))
		}
		if s.TooSmall {
			r.Health.TooSmall++
		}
		if s.Overlap {
			r.Health.Overlap++
		}
		if !s.TooLarge && !s.TooSmall && !s.Overlap {
			r.Health.Healthy++
		}
		for _, o := range overlaps[i] {
			if keep, fold := keeper(items[i], items[o.other]); keep.ID == it.ID {
				r.Suggestions = append(r.Suggestions, Suggestion{
					Type: Merge, IdeaID: keep.ID, OverlapWithID: fold.ID, Confidence: round4(o.similarity),
					Rationale: fmt.Sprintf("%q and %q describe much the same work (similarity %.2f): merge %q into %q, the higher-scoring one",
						keep.Name, fold.Name, o.similarity, fold.Name, keep.Name),
				})
			}
		}
	}
	sort.SliceStable(r.Suggestions, func(a, b int) bool {
		sa, sb := r.Suggestions[a], r.Suggestions[b]
		if sa.Confidence != sb.Confidence {
			return sa.Confidence > sb.Confidence
		}
		if sa.IdeaID != sb.IdeaID {
			return sa.IdeaID < sb.IdeaID
		}
		return sa.OverlapWithID < sb.OverlapWithID
	})
	r.Health.Suggestions = len(r.Suggestions)
	return r
}

// keeper decides which of two overlapping ideas survives a merge: the higher
// score, then the smaller id (so the choice is stable).
func keeper(a, b Item) (keep, fold Item) {
	if a.Score > b.Score || (a.Score == b.Score && a.ID < b.ID) {
		return a, b
	}
	return b, a
}

// SplitConfidence is min(1, 0.5 + 0.05 × excess).
func SplitConfidence(excess int) float64 {
	return round4(math.Min(1, 0.5+0.05*float64(excess)))
}

// excess is how far past the thresholds an idea is: open questions beyond
// TooLargeQuestions plus tasks beyond TooLargeTasks (an idea exactly at the
// question threshold has excess 0, confidence 0.5).
func excess(it Item) int {
	return max(0, len(it.OpenQuestions)-TooLargeQuestions) + max(0, it.TaskCount-TooLargeTasks)
}

func splitSuggestion(it Item) Suggestion {
	return Suggestion{
		Type: Split, IdeaID: it.ID, Confidence: SplitConfidence(excess(it)), Children: ProposeChildren(it),
		Rationale: fmt.Sprintf("%q carries %d open questions and %d tasks (limits: fewer than %d questions, at most %d tasks): split it into smaller ideas",
			it.Name, len(it.OpenQuestions), it.TaskCount, TooLargeQuestions, TooLargeTasks),
	}
}

// ProposeChildren splits an idea's open questions into groups of five (at
// most five children; the last takes the rest), one child idea per group,
// each described by its questions. An idea too large by tasks alone is split
// in two halves.
func ProposeChildren(it Item) []Child {
	qs := it.OpenQuestions
	if len(qs) == 0 {
		return []Child{
			{Name: it.Name + " (part 1)", Description: "First half of the work of " + it.Name},
			{Name: it.Name + " (part 2)", Description: "Second half of the work of " + it.Name},
		}
	}
	n := min(maxChildren, (len(qs)+questionsPerChild-1)/questionsPerChild)
	children := make([]Child, 0, n)
	for i := range n {
		lo := i * questionsPerChild
		hi := lo + questionsPerChild
		if i == n-1 {
			hi = len(qs)
		}
		children = append(children, Child{
			Name:        fmt.Sprintf("%s (part %d)", it.Name, i+1),
			Description: "Answers: " + strings.Join(qs[lo:hi], " / "),
		})
	}
	return children
}

func round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Package rightsizing judges whether ideas are the right size: too large
// (many open questions or tasks: split it), too small (in progress with no
// linked work), or overlapping another idea (similar name and description:
// merge them). It computes per-idea signals, split and merge suggestions,
// and the portfolio health counts a snapshot records.
package rightsizing

import (
	"container/heap"
	"fmt"
	"math"
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

// Limits bound the analysis, so its time and memory grow linearly with the
// portfolio whatever the ideas say.
type Limits struct {
	// CandidatesPerIdea is how many other ideas one idea is compared with
	// for overlap (its rarest shared terms first).
	CandidatesPerIdea int
	// MaxSuggestions is how many suggestions a report keeps: the most
	// confident.
	MaxSuggestions int
}

// DefaultLimits are the documented bounds.
var DefaultLimits = Limits{CandidatesPerIdea: 50, MaxSuggestions: 200}

// Analyze is AnalyzeWithin with the default limits.
func Analyze(items []Item) Report { return AnalyzeWithin(items, DefaultLimits) }

// AnalyzeWithin computes signals for every item, the most confident
// suggestions ordered by confidence (descending, then idea id, then the
// merged idea's id), at most lim.MaxSuggestions of them, and the health
// counts. Health.Suggestions counts every suggestion found; the report
// carries the best ones.
func AnalyzeWithin(items []Item, lim Limits) Report {
	if lim.CandidatesPerIdea <= 0 {
		lim.CandidatesPerIdea = DefaultLimits.CandidatesPerIdea
	}
	if lim.MaxSuggestions <= 0 {
		lim.MaxSuggestions = DefaultLimits.MaxSuggestions
	}
	overlaps, pairs := findOverlaps(items, lim.CandidatesPerIdea)
	best := &suggestionHeap{}
	found := 0
	// offer keeps s when it ranks among the best so far; the rationale, the
	// costly part, is written only for a suggestion that is kept.
	offer := func(s Suggestion, rationale func() string) {
		found++
		switch {
		case best.Len() < lim.MaxSuggestions:
			s.Rationale = rationale()
			heap.Push(best, s)
		case before(s, (*best)[0]):
			s.Rationale = rationale()
			(*best)[0] = s
			heap.Fix(best, 0)
		}
	}
	r := Report{Health: Health{Total: len(items)}}
	for i, it := range items {
		s := Signals{
			IdeaID: it.ID, Name: it.Name,
			OpenQuestionCount: len(it.OpenQuestions), TaskCount: it.TaskCount,
			TooLarge: len(it.OpenQuestions) >= TooLargeQuestions || it.TaskCount > TooLargeTasks,
			TooSmall: it.InProgress && it.TaskCount == 0 && it.ChildCount == 0,
		}
		if len(overlaps[i]) > 0 {
			s.OverlapWith = make([]string, 0, len(overlaps[i]))
		}
		for _, o := range overlaps[i] {
			s.OverlapWith = append(s.OverlapWith, items[o.other].ID)
		}
		s.Overlap = len(s.OverlapWith) > 0
		r.Signals = append(r.Signals, s)
		if s.TooLarge {
			r.Health.TooLarge++
			sp := splitSuggestion(it)
			offer(sp, func() string { return sp.Rationale })
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
	}
	// One merge per overlapping pair found, whichever side found it.
	for _, p := range pairs {
		keep, fold := keeper(items[p.a], items[p.b])
		sim := p.similarity
		offer(Suggestion{Type: Merge, IdeaID: keep.ID, OverlapWithID: fold.ID, Confidence: round4(sim)}, func() string {
			return fmt.Sprintf("%q and %q describe much the same work (similarity %.2f): merge %q into %q, the higher-scoring one",
				keep.Name, fold.Name, sim, fold.Name, keep.Name)
		})
	}
	r.Suggestions = make([]Suggestion, best.Len())
	for k := len(r.Suggestions) - 1; k >= 0; k-- {
		r.Suggestions[k] = heap.Pop(best).(Suggestion)
	}
	r.Health.Suggestions = found
	return r
}

// before reports whether a ranks before b: more confident first, then by
// idea id, then by the merged idea's id.
func before(a, b Suggestion) bool {
	if a.Confidence != b.Confidence {
		return a.Confidence > b.Confidence
	}
	if a.IdeaID != b.IdeaID {
		return a.IdeaID < b.IdeaID
	}
	return a.OverlapWithID < b.OverlapWithID
}

// suggestionHeap keeps the best suggestions seen so far with the worst of
// them on top, so a better one replaces it in O(log n): the report holds
// at most MaxSuggestions however many are found.
type suggestionHeap []Suggestion

func (h suggestionHeap) Len() int           { return len(h) }
func (h suggestionHeap) Less(i, j int) bool { return before(h[j], h[i]) }
func (h suggestionHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *suggestionHeap) Push(x any)        { *h = append(*h, x.(Suggestion)) }
func (h *suggestionHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
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

// Shares divides an amount (a value or a cost estimate, kept to six
// decimals) into n equal shares for a split's children, exactly: in
// micro-units, the first children taking the micro-units left over, so
// the shares add up to the amount and each prints as a short decimal.
// amount × (1/n) in floats gave 0.19999999999999998 for a third of 0.6.
func Shares(amount float64, n int) []float64 {
	if n <= 0 {
		return nil
	}
	total := int64(math.Round(amount * 1e6))
	each, left := total/int64(n), total%int64(n)
	out := make([]float64, n)
	for i := range out {
		m := each
		if int64(i) < left {
			m++
		}
		out[i] = float64(m) / 1e6
	}
	return out
}

package rightsizing

import (
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// stopWords are left out of term vectors: they make unrelated texts look
// alike.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a about above after again against all am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further had
		has have having he her here hers herself him himself his how i if in into is it its itself just me more most my
		myself no nor not now of off on once only or other our ours ourselves out over own same she should so some such
		than that the their theirs them themselves then there these they this those through to too under until up very
		was we were what when where which while who whom why will with would you your yours yourself yourselves use
		using via new add make`) {
		stopWords[w] = true
	}
}

// Terms is the term-frequency vector of a text: lowercase words of letters
// and digits, stop words and one-letter words left out.
func Terms(text string) map[string]int {
	tf := map[string]int{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) < 2 || stopWords[w] {
			continue
		}
		tf[w]++
	}
	return tf
}

// Cosine is the cosine similarity of two term-frequency vectors, in [0, 1];
// 0 when either is empty.
func Cosine(a, b map[string]int) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	if len(b) < len(a) {
		a, b = b, a
	}
	var dot float64
	for t, x := range a {
		dot += float64(x * b[t])
	}
	if dot == 0 {
		return 0
	}
	return math.Min(1, dot/(norm(a)*norm(b)))
}

func norm(v map[string]int) float64 {
	var s float64
	for _, x := range v {
		s += float64(x * x)
	}
	return math.Sqrt(s)
}

type overlap struct {
	other      int
	similarity float64
}

// pair is one overlapping pair of items, a < b.
type pair struct {
	a, b       int
	similarity float64
}

// findOverlaps returns, per item, the items it overlaps, most similar first,
// and every overlapping pair once. Only items sharing a term are compared
// (an inverted index), and each item is compared with at most perItem
// candidates, gathered through its rarest terms first (a rare shared term
// is the best evidence of overlap): the work is at most n × perItem
// comparisons and the result at most n × perItem pairs, however alike the
// ideas are. Without the bound, a few thousand near-identical ideas made
// every pair a candidate and an overlap.
//
// A pair found by either side is an overlap of both (one side may have
// spent its candidates elsewhere), so an idea another overlaps is never
// reported healthy; each list then keeps its perItem most similar.
func findOverlaps(items []Item, perItem int) ([][]overlap, []pair) {
	vecs := make([]map[string]int, len(items))
	index := map[string][]int{}
	for i, it := range items {
		vecs[i] = Terms(it.Name + " " + it.Description)
		for t := range vecs[i] {
			index[t] = append(index[t], i)
		}
	}
	out := make([][]overlap, len(items))
	var pairs []pair
	// cands[i] are the candidates item i was compared with, sorted: a pair
	// an earlier item already compared is not compared again.
	cands := make([][]int, len(items))
	// seenBy[j] == i+1 once item i has taken j as a candidate: no set to
	// clear per item.
	seenBy := make([]int, len(items))
	terms := []string{}
	for i := range items {
		terms = terms[:0]
		for t := range vecs[i] {
			terms = append(terms, t)
		}
		sort.Slice(terms, func(a, b int) bool {
			if la, lb := len(index[terms[a]]), len(index[terms[b]]); la != lb {
				return la < lb
			}
			return terms[a] < terms[b]
		})
		mine := make([]int, 0, min(perItem, len(items)-1))
	gather:
		for _, t := range terms {
			for _, j := range index[t] {
				if j == i || seenBy[j] == i+1 {
					continue
				}
				seenBy[j] = i + 1
				mine = append(mine, j)
				// A pair the earlier item compared is settled already; it
				// still counts as one of this item's candidates.
				if _, done := slices.BinarySearch(cands[j], i); !(j < i && done) {
					if s := Cosine(vecs[i], vecs[j]); s >= OverlapSimilarity {
						pairs = append(pairs, pair{a: min(i, j), b: max(i, j), similarity: s})
						out[i] = append(out[i], overlap{other: j, similarity: s})
						out[j] = append(out[j], overlap{other: i, similarity: s})
					}
				}
				if len(mine) >= perItem {
					break gather
				}
			}
		}
		slices.Sort(mine)
		cands[i] = mine
	}
	for i := range out {
		sort.Slice(out[i], func(a, b int) bool {
			if out[i][a].similarity != out[i][b].similarity {
				return out[i][a].similarity > out[i][b].similarity
			}
			return items[out[i][a].other].ID < items[out[i][b].other].ID
		})
		if len(out[i]) > perItem {
			out[i] = out[i][:perItem:perItem]
		}
	}
	return out, pairs
}

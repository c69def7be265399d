package rightsizing

import (
	"math"
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

// Similarity compares two ideas by their name and description.
func Similarity(aName, aDesc, bName, bDesc string) float64 {
	return Cosine(Terms(aName+" "+aDesc), Terms(bName+" "+bDesc))
}

type overlap struct {
	other      int
	similarity float64
}

// findOverlaps returns, per item, the items it overlaps, most similar first.
// Only pairs sharing a term are compared (an inverted index), so a portfolio
// of unrelated ideas costs far less than every pair.
func findOverlaps(items []Item) [][]overlap {
	vecs := make([]map[string]int, len(items))
	index := map[string][]int{}
	for i, it := range items {
		vecs[i] = Terms(it.Name + " " + it.Description)
		for t := range vecs[i] {
			index[t] = append(index[t], i)
		}
	}
	out := make([][]overlap, len(items))
	for i := range items {
		seen := map[int]bool{}
		for t := range vecs[i] {
			for _, j := range index[t] {
				if j <= i || seen[j] {
					continue
				}
				seen[j] = true
				if s := Cosine(vecs[i], vecs[j]); s >= OverlapSimilarity {
					out[i] = append(out[i], overlap{other: j, similarity: s})
					out[j] = append(out[j], overlap{other: i, similarity: s})
				}
			}
		}
	}
	for i := range out {
		sort.Slice(out[i], func(a, b int) bool {
			if out[i][a].similarity != out[i][b].similarity {
				return out[i][a].similarity > out[i][b].similarity
			}
			return items[out[i][a].other].ID < items[out[i][b].other].ID
		})
	}
	return out
}

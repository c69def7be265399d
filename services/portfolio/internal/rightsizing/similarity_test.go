package rightsizing_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/foundryhq/foundry/services/portfolio/internal/rightsizing"
)

func TestTerms(t *testing.T) {
	t.Parallel()
	require.Equal(t, map[string]int{"cache": 2, "redis": 1, "v2": 1}, rightsizing.Terms("The cache, a Redis cache for the V2!"))
	require.Empty(t, rightsizing.Terms("the and of a"))
}

func TestCosine(t *testing.T) {
	t.Parallel()
	a := rightsizing.Terms("cache invoices in redis")
	require.InDelta(t, 1, rightsizing.Cosine(a, a), 1e-12)
	require.Equal(t, 0.0, rightsizing.Cosine(a, rightsizing.Terms("paint the shed")))
	require.Equal(t, 0.0, rightsizing.Cosine(a, nil))
	// {cache, invoices, redis} vs {cache, invoices, memcached}: 2 / 3.
	require.InDelta(t, 2.0/3.0, rightsizing.Cosine(a, rightsizing.Terms("cache invoices memcached")), 1e-12)
}

var word = rapid.SampledFrom([]string{"cache", "invoice", "redis", "billing", "agent", "queue", "score", "idea", "the", "and", "ledger", "x"})

func text(t *rapid.T, label string) string {
	return strings.Join(rapid.SliceOfN(word, 0, 12).Draw(t, label), " ")
}

// TestCosineProperties: similarity is symmetric, within [0, 1], 1 for a
// non-empty text against itself, unchanged by repeating a text (only
// direction matters), and 0 against an empty text.
func TestCosineProperties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		a, b := rightsizing.Terms(text(t, "a")), rightsizing.Terms(text(t, "b"))
		ab, ba := rightsizing.Cosine(a, b), rightsizing.Cosine(b, a)
		if math.Abs(ab-ba) > 1e-12 {
			t.Fatalf("asymmetric: %v vs %v", ab, ba)
		}
		if ab < 0 || ab > 1 {
			t.Fatalf("out of range: %v", ab)
		}
		if len(a) > 0 && math.Abs(rightsizing.Cosine(a, a)-1) > 1e-12 {
			t.Fatalf("self-similarity %v", rightsizing.Cosine(a, a))
		}
		doubled := map[string]int{}
		for k, v := range a {
			doubled[k] = 2 * v
		}
		if math.Abs(rightsizing.Cosine(doubled, b)-ab) > 1e-12 {
			t.Fatalf("scale changed similarity: %v vs %v", rightsizing.Cosine(doubled, b), ab)
		}
		if rightsizing.Cosine(a, map[string]int{}) != 0 {
			t.Fatal("similarity with an empty text must be 0")
		}
	})
}

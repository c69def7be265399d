package metrics_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/foundryhq/foundry/services/agent/internal/metrics"
)

func TestBucketOfAndBounds(t *testing.T) {
	for _, d := range []float64{0, -3, math.NaN(), metrics.HistogramFloor} {
		if b := metrics.BucketOf(d); b != 0 {
			t.Errorf("BucketOf(%v) = %d, want 0", d, b)
		}
	}
	// Every duration lies within the bounds of its bucket.
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		d := math.Exp(rnd.Float64()*30 - 8) // about 3e-4 s to 3e9 s
		b := metrics.BucketOf(d)
		lo, hi := metrics.BucketBounds(b)
		if !(d > lo*(1-1e-12) && d <= hi*(1+1e-12)) {
			t.Fatalf("BucketOf(%v) = %d with bounds (%v, %v]", d, b, lo, hi)
		}
		if b > 0 && math.Abs(hi/lo-metrics.HistogramGrowth) > 1e-9 {
			t.Fatalf("bucket %d is %v wide, want %v", b, hi/lo, metrics.HistogramGrowth)
		}
	}
	if b := metrics.BucketOf(math.Inf(1)); b <= 0 {
		t.Errorf("BucketOf(+Inf) = %d, want a positive bucket", b)
	}
	// Bounds chain: bucket b's upper bound is bucket b+1's lower bound.
	for b := range 50 {
		_, hi := metrics.BucketBounds(b)
		lo, _ := metrics.BucketBounds(b + 1)
		if math.Abs(hi-lo) > 1e-15 {
			t.Fatalf("bucket %d ends at %v but bucket %d starts at %v", b, hi, b+1, lo)
		}
	}
}

// histogramOf counts values into sorted buckets.
func histogramOf(values []float64) []metrics.Bucket {
	counts := map[int]int64{}
	for _, v := range values {
		counts[metrics.BucketOf(v)]++
	}
	out := make([]metrics.Bucket, 0, len(counts))
	for b, n := range counts {
		out = append(out, metrics.Bucket{Index: b, N: n})
	}
	slices.SortFunc(out, func(x, y metrics.Bucket) int { return x.Index - y.Index })
	return out
}

func TestHistogramPercentileIsWithinTheBucketError(t *testing.T) {
	for seed := range uint64(5) {
		rnd := rand.New(rand.NewPCG(seed, 7))
		for _, n := range []int{1, 2, 10, 1000, 100000} {
			values := make([]float64, n)
			for i := range values {
				values[i] = math.Exp(rnd.NormFloat64()*1.5 + 4) // log-normal around 55 s
			}
			h := histogramOf(values)
			for _, p := range []float64{0, 5, 50, 95, 99, 100} {
				want, _ := metrics.Percentile(values, p)
				got, ok := metrics.HistogramPercentile(h, p)
				if !ok {
					t.Fatalf("seed %d n %d p%v: no answer", seed, n, p)
				}
				if rel := math.Abs(got-want) / want; rel > metrics.HistogramGrowth-1 {
					t.Errorf("seed %d n %d p%v = %v, exact %v: relative error %.4f above %.2f",
						seed, n, p, got, want, rel, metrics.HistogramGrowth-1)
				}
			}
		}
	}
}

func TestHistogramPercentileHandWorked(t *testing.T) {
	if _, ok := metrics.HistogramPercentile(nil, 50); ok {
		t.Fatal("an empty histogram answered")
	}
	if _, ok := metrics.HistogramPercentile([]metrics.Bucket{{Index: 3, N: 0}}, 50); ok {
		t.Fatal("a histogram of empty buckets answered")
	}
	// Two values in bucket 0 ((0, 0.001]): spread at 0.25 ms and 0.75 ms;
	// the median interpolates halfway between them.
	got, _ := metrics.HistogramPercentile([]metrics.Bucket{{Index: 0, N: 2}}, 50)
	if math.Abs(got-0.0005) > 1e-12 {
		t.Errorf("median of two bucket-0 values = %v, want 0.0005", got)
	}
	// One value in bucket b: every percentile is the bucket's midpoint.
	b := metrics.BucketOf(60)
	lo, hi := metrics.BucketBounds(b)
	for _, p := range []float64{0, 50, 100} {
		got, _ := metrics.HistogramPercentile([]metrics.Bucket{{Index: b, N: 1}}, p)
		if math.Abs(got-(lo+hi)/2) > 1e-9 {
			t.Errorf("p%v of one value = %v, want the midpoint %v", p, got, (lo+hi)/2)
		}
	}
}

package metrics

import "math"

// Durations beyond the exact sample are counted in a log-bucketed
// histogram (the shape of HdrHistogram and DDSketch, small enough to keep
// as rows): bucket 0 holds every duration up to HistogramFloor seconds,
// bucket b ≥ 1 holds (HistogramFloor·g^(b−1), HistogramFloor·g^b] with
// g = HistogramGrowth. A percentile read from it lies in the bucket of
// the true value, so its relative error is below g − 1 (2 %) for any
// number of durations, and the rows a window reads depend on how spread
// the durations are, not on how many there are.
//
// Changing these constants changes what stored bucket numbers mean: a new
// scheme needs a new table (or a migration that rebuilds it from tasks).
const (
	HistogramFloor  = 0.001
	HistogramGrowth = 1.02
)

// logGrowth is ln(HistogramGrowth), computed once.
var logGrowth = math.Log(HistogramGrowth)

// BucketOf is the histogram bucket of a duration in seconds. NaN and
// anything at or below HistogramFloor (zero, negatives) fall in bucket 0.
func BucketOf(seconds float64) int {
	if !(seconds > HistogramFloor) {
		return 0
	}
	if math.IsInf(seconds, 1) {
		seconds = math.MaxFloat64
	}
	// Ceil, not floor: bucket b's upper bound belongs to it, so a
	// duration exactly on a bound is not counted one bucket high.
	return max(1, int(math.Ceil(math.Log(seconds/HistogramFloor)/logGrowth)))
}

// BucketBounds are the lower and upper bounds (seconds) of bucket b.
func BucketBounds(b int) (lo, hi float64) {
	if b <= 0 {
		return 0, HistogramFloor
	}
	lo = HistogramFloor * math.Pow(HistogramGrowth, float64(b-1))
	return lo, lo * HistogramGrowth
}

// Bucket is one histogram bucket and how many durations it holds.
type Bucket struct {
	Index int
	N     int64
}

// HistogramPercentile is Percentile's rule applied to a histogram: the
// rank r = p/100 × (n−1) is located in its bucket, the bucket's N values
// are taken as evenly spread across it (value j of N at its (j + ½)/N
// point), and the result is interpolated between ranks ⌊r⌋ and ⌈r⌉ as
// Percentile does. buckets must be in ascending Index order; ok is false
// when they hold nothing.
func HistogramPercentile(buckets []Bucket, p float64) (float64, bool) {
	var n int64
	for _, b := range buckets {
		n += max(b.N, 0)
	}
	if n == 0 {
		return 0, false
	}
	p = min(max(p, 0), 100)
	r := p / 100 * float64(n-1)
	lo, hi := int64(math.Floor(r)), int64(math.Ceil(r))
	vlo := rankValue(buckets, lo)
	if lo == hi {
		return vlo, true
	}
	return vlo + (rankValue(buckets, hi)-vlo)*(r-float64(lo)), true
}

// rankValue is the estimated value of the k-th smallest duration
// (0-based; k is within the histogram).
func rankValue(buckets []Bucket, k int64) float64 {
	var seen int64
	for _, b := range buckets {
		if b.N <= 0 {
			continue
		}
		if k < seen+b.N {
			lo, hi := BucketBounds(b.Index)
			return lo + (hi-lo)*(float64(k-seen)+0.5)/float64(b.N)
		}
		seen += b.N
	}
	_, hi := BucketBounds(buckets[len(buckets)-1].Index)
	return hi
}

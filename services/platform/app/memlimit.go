package app

import (
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// memoryLimitShare is the part of the container's memory limit the Go
// runtime aims to stay under: the rest is headroom for what the soft
// limit does not count or cannot hold back (a burst between collections,
// the kernel's page cache charged to the container), so a pod near its
// limit collects harder instead of being killed.
const memoryLimitShare = 0.9

// memoryLimit is the soft memory limit a process should set: 0 (leave the
// runtime's) when GOMEMLIMIT is set, since the runtime read it already and
// an operator's explicit value wins, or when no container limit is known;
// else memoryLimitShare of containerLimit, FOUNDRY_MEMORY_LIMIT in bytes
// (the Deployments fill it from their container's limits.memory through
// the downward API). A value that is not a positive number of bytes is an
// error: a typo should not silently mean "no limit".
func memoryLimit(gomemlimit, containerLimit string) (int64, error) {
	if strings.TrimSpace(gomemlimit) != "" || strings.TrimSpace(containerLimit) == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(containerLimit), 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("FOUNDRY_MEMORY_LIMIT %q: want the container's memory limit in bytes (the downward API's limits.memory)", containerLimit)
	}
	return int64(math.Floor(float64(n) * memoryLimitShare)), nil
}

// applyMemoryLimit sets the runtime's soft memory limit from the
// container's (memoryLimit) and logs what it set.
func applyMemoryLimit(log *zap.Logger, getenv func(string) string) error {
	limit, err := memoryLimit(getenv("GOMEMLIMIT"), getenv("FOUNDRY_MEMORY_LIMIT"))
	if err != nil || limit == 0 {
		return err
	}
	debug.SetMemoryLimit(limit)
	log.Info("Go memory limit set from the container's", zap.Int64("bytes", limit), zap.Float64("share", memoryLimitShare))
	return nil
}

// gcPercent is the collector's target a process sets when GOGC is not set:
// the heap may grow to three times what is live (Go's default is two)
// before a collection. A Foundry process keeps a small live heap (tens of
// MiB) and allocates a little for every request, so under load the
// default collected many times a second: 7-13 % of each process's CPU in
// make bench-http's profiles. At 200 that work about halves, for a heap
// goal of a few tens of MiB more; the soft memory limit (above), where one
// is known, still makes the collector work harder near the container's
// limit. An operator's GOGC wins.
const gcPercent = 200

// gcPercentFor is the GC percent a process should set: 0 (leave the
// runtime's) when GOGC is set, gcPercent otherwise.
func gcPercentFor(gogc string) int {
	if strings.TrimSpace(gogc) != "" {
		return 0
	}
	return gcPercent
}

// applyGCPercent sets the collector's target (gcPercentFor).
func applyGCPercent(log *zap.Logger, getenv func(string) string) {
	if p := gcPercentFor(getenv("GOGC")); p != 0 {
		debug.SetGCPercent(p)
		log.Debug("Go GC percent set", zap.Int("percent", p))
	}
}

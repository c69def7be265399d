// Package wire is how Foundry's APIs write the values their protos carry
// as text, the same in every service: a time is RFC 3339 with nanoseconds,
// in UTC (trailing zeros of the fraction dropped, as time.RFC3339Nano
// prints it), which is also what the gateway's JSON shows.
package wire

import "time"

// Time writes t in UTC as RFC 3339 with nanoseconds.
func Time(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

package database

import "time"

// The storage conventions of every Foundry schema, in one place: times are
// BIGINT Unix microseconds (UTC), and an empty value is stored as NULL
// where a column is optional.

// Micros is how a time is stored.
func Micros(t time.Time) int64 { return t.UnixMicro() }

// Time reads a stored time, in UTC.
func Time(us int64) time.Time { return time.UnixMicro(us).UTC() }

// NullMicros stores the zero time as NULL.
func NullMicros(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	us := t.UnixMicro()
	return &us
}

// NullString stores "" as NULL.
func NullString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

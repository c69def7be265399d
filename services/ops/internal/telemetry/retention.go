package telemetry

import "time"

// DefaultRetention is how long events are kept unless configured: a month
// answers "what happened last week" without letting a busy gateway grow
// the table without bound. A retention.Retainer over the ops use case's
// PruneEvents keeps it (ops.go).
const DefaultRetention = 30 * 24 * time.Hour

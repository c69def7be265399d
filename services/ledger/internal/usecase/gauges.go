package usecase

import (
	"context"
	"time"
)

// Gauges are the economy's readings /metrics reports, read in the
// background every interval (the module's refresher), never per scrape.
type Gauges struct {
	// Supply is the economy row (CC outstanding, treasury, mode) and the
	// rate in force with the breaker's state: two single-row reads.
	Supply Supply
	// Backlog is the audit queue, which holds only the entries the
	// sequencer has yet to integrate: its count is bounded by the backlog,
	// not by the log.
	Backlog Backlog
	// Verified is the last verification of the audit log this process ran
	// (the monitor's check, GET /api/audit/verify); nil before the first.
	// Reading it walks nothing.
	Verified *Verification
	// OpenFindings counts the open integrity findings (one count of a
	// table that holds only what went wrong), and Scrub is the scrubber's
	// progress (one row).
	OpenFindings int
	Scrub        ScrubReport
	// At is when the readings were taken.
	At time.Time
}

// Gauges reads the economy's gauges.
func (a *App) Gauges(ctx context.Context) (Gauges, error) {
	s, err := a.Supply(ctx)
	if err != nil {
		return Gauges{}, wrap("read the economy's gauges", err)
	}
	b, err := a.AuditBacklog(ctx)
	if err != nil {
		return Gauges{}, wrap("read the economy's gauges", err)
	}
	open, err := a.OpenFindings(ctx)
	if err != nil {
		return Gauges{}, wrap("read the economy's gauges", err)
	}
	scrub, err := a.ScrubReport(ctx)
	if err != nil {
		return Gauges{}, wrap("read the economy's gauges", err)
	}
	out := Gauges{Supply: s, Backlog: b, OpenFindings: open.Total, Scrub: scrub, At: a.now()}
	if v := a.lastVerified.Load(); v != nil {
		c := *v
		out.Verified = &c
	}
	return out, nil
}

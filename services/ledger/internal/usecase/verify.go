package usecase

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
)

// auditPage is how many records verification reads at a time.
const auditPage = 1000

// verifyCacheFor is how long an incremental verification's answer is
// served again while the log has not grown: GET /api/audit/verify is
// public, and a client polling it must not make the ledger walk anything.
const verifyCacheFor = 5 * time.Second

// Verification is what verifying the audit log found.
type Verification struct {
	audit.Result
	// From is the seq the walk started at: 1 for a full walk, the end of
	// the last verified checkpoint for an incremental one.
	From int64
	// TreeSize and Root are the signed checkpoint verified against (0
	// before the first batch: then only the chain is walked).
	TreeSize int64
	Root     audit.Hash
	// Full is true for a walk from the first entry.
	Full bool
	At   time.Time
	// Findings are the open integrity findings, and Scrub the scrubber's
	// progress, read with the verdict: one answer says everything the
	// ledger knows is wrong with what it signed.
	Findings Findings
	Scrub    ScrubReport
	// Untrusted is set when the latest checkpoint is signed by no key the
	// ledger trusts (ErrUntrustedKey).
	Untrusted bool
}

// Valid is the answer's verdict: the walk checked out and no integrity
// finding is open.
func (v Verification) Valid() bool { return v.OK && v.Findings.Total == 0 }

// Divergent is what the answer names as broken ("" when valid): the
// earliest of the walk's first divergence and the open findings' lowest
// seq, with its reason (the findings' summary when no finding names a
// seq and the walk checked out).
func (v Verification) Divergent() (seq int64, reason string) {
	first := v.Findings.FirstSeq()
	switch {
	case !v.OK && (first == 0 || v.FirstDivergent <= first):
		return v.FirstDivergent, v.Reason
	case v.Findings.Total > 0:
		return first, "integrity finding: " + v.Findings.Summary()
	}
	return 0, ""
}

type verifyCache struct {
	size int64
	at   time.Time
	out  Verification
}

// VerifyAudit verifies the log against its latest signed checkpoint: the
// checkpoint's signature, the chain from the last verified checkpoint (or
// from the first entry when full) to the checkpoint's last entry, every
// entry against the leaf the tree holds for it, and the tree against the
// signed root. The breaks repairs recorded are accepted exactly as
// recorded and listed (audit.Break). A sound verification moves the
// verified checkpoint, where the next incremental one starts, so each
// entry is walked once in the ordinary course; a full walk is for an
// administrator who suspects the history before that point. Its verdict
// is kept for the metrics (Gauges).
func (a *App) VerifyAudit(ctx context.Context, full bool) (Verification, error) {
	began := a.now()
	v, err := a.verifyAudit(ctx, full)
	if err != nil {
		return v, err
	}
	if !v.OK {
		// Whoever asked, what a walk finds moves the economy at once.
		f := logFinding(v.FirstDivergent, fmt.Sprintf("audit entry %d: %s", v.FirstDivergent, v.Reason))
		if v.Untrusted {
			f = store.Finding{Kind: FindingCheckpoint, Place: "checkpoint:latest", Detail: v.Reason}
		}
		if err := a.report(ctx, "verification", began, f); err != nil {
			return v, err
		}
	}
	if v.Findings, err = a.OpenFindings(ctx); err != nil {
		return v, err
	}
	if v.Scrub, err = a.ScrubReport(ctx); err != nil {
		return v, err
	}
	a.lastVerified.Store(&v)
	return v, nil
}

func (a *App) verifyAudit(ctx context.Context, full bool) (Verification, error) {
	r := a.read()
	latest, err := r.Audit.Checkpoint(ctx, checkpointLatest)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return Verification{}, err
	}
	if !full {
		a.verifyMu.Lock()
		c := a.verified
		a.verifyMu.Unlock()
		if c.size == latest.Size && latest.Size > 0 && a.clock.Now().Sub(c.at) < verifyCacheFor {
			return c.out, nil
		}
	}
	// The head is read after the checkpoint: the sequencer moves both in
	// one transaction, so a sound log's head is never behind it.
	eco, err := r.Credit.Economy(ctx)
	if err != nil {
		return Verification{}, err
	}
	out := Verification{Full: full, At: a.now(), TreeSize: latest.Size, Root: latest.Root, From: 1}
	if latest.Size == 0 {
		// Before the first batch: the chain only.
		breaks, err := a.breaks(ctx, r, eco.AuditSeq)
		if err != nil {
			return Verification{}, err
		}
		res, _, err := a.walk(ctx, r, breaks, 1, audit.Genesis, eco.AuditSeq, nil, nil)
		out.Result = res
		return out, err
	}
	fail := func(seq int64, reason string) (Verification, error) {
		out.Result = audit.Result{FirstDivergent: seq, LastVerified: max(seq-1, 0), Reason: reason}
		return out, nil
	}
	if _, err := a.openCheckpoint(ctx, r, latest); err != nil {
		if !errors.Is(err, ErrLogTampered) {
			return Verification{}, err
		}
		out.Untrusted = errors.Is(err, ErrUntrustedKey)
		return fail(1, err.Error())
	}
	last := latest.Size - 1
	if eco.AuditSeq < last {
		return fail(eco.AuditSeq+1, fmt.Sprintf("entries missing: the chain's head is seq %d, but the signed checkpoint covers seq %d",
			eco.AuditSeq, last))
	}
	next, prev := int64(1), audit.Genesis
	var frontier *audit.Frontier
	if !full {
		v, err := r.Audit.Checkpoint(ctx, checkpointVerified)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return Verification{}, err
		}
		if err == nil && v.Size >= 1 && v.Size <= latest.Size {
			if frontier, err = audit.LoadFrontier(v.Size, treeReader{ctx, r}); err != nil {
				return fail(v.Size, "the stored tree lost hashes it had when last verified: "+err.Error())
			}
			if audit.Hash(frontier.Root()) != v.Root {
				return fail(v.Size, fmt.Sprintf("the stored tree of size %d changed since it was verified", v.Size))
			}
			next, prev, out.From = v.Size, v.Chain, v.Size
		}
	}
	if frontier == nil {
		frontier = &audit.Frontier{}
		genesis, err := r.Audit.TreeHashes(ctx, []int64{0})
		if err != nil || genesis[0] != audit.LeafHash(audit.GenesisRecord) {
			return fail(0, "the tree's first record is not the log's genesis record")
		}
		frontier.Append(tlog.Hash(genesis[0]))
	}
	breaks, err := a.breaks(ctx, r, last)
	if err != nil {
		return Verification{}, err
	}
	res, v, err := a.walk(ctx, r, breaks, next, prev, last, frontier, nil)
	if err != nil {
		return Verification{}, err
	}
	out.Result = res
	if !res.OK {
		return out, nil
	}
	if audit.Hash(frontier.Root()) != latest.Root {
		return fail(next, "the stored tree does not hash to the signed checkpoint's root")
	}
	if err := r.Audit.SaveCheckpoint(ctx, checkpointVerified, store.Checkpoint{Size: latest.Size, Root: latest.Root,
		Chain: v.Head(), At: out.At}); err != nil {
		return Verification{}, err
	}
	if !full {
		a.verifyMu.Lock()
		a.verified = verifyCache{size: latest.Size, at: a.clock.Now(), out: out}
		a.verifyMu.Unlock()
	}
	return out, nil
}

// breaks reads the breaks the repairs up to seq upTo recorded (a damaged
// repair entry records none: audit.ParseRepair).
func (a *App) breaks(ctx context.Context, r Repos, upTo int64) ([]audit.Break, error) {
	repairs, err := r.Audit.Repairs(ctx, upTo)
	if err != nil {
		return nil, err
	}
	var out []audit.Break
	for _, rec := range repairs {
		if b, ok := audit.ParseRepair(rec); ok {
			out = append(out, b)
		}
	}
	return out, nil
}

// visitor sees each record a walk accepted, with the tree's leaf for it
// (the zero hash without a frontier) and whether it lay in a recorded
// break (so it was not checked).
type visitor func(rec audit.Record, leaf audit.Hash, skipped bool)

// walk verifies the chain from seq next (whose record must chain to prev)
// to seq last, in pages and in constant memory, accepting the breaks
// given (breaks). With frontier, each entry is also checked against the
// leaf the tree stores for it, computed from its columns (except in a
// recorded break: a repair accepts those entries as they are), and the
// stored leaves are appended to frontier, whose root the caller compares
// with the signed one. visit, when given, sees every accepted record.
func (a *App) walk(ctx context.Context, r Repos, breaks []audit.Break, next int64, prev audit.Hash, last int64,
	frontier *audit.Frontier, visit visitor) (audit.Result, *audit.Verifier, error) {
	v := audit.ResumeVerifier(breaks, next, prev)
	// leafBreaks are the recorded breaks of one entry whose chain checks
	// out but whose fields are not what the tree signed (an entry and the
	// hashes after it rewritten consistently): the verifier never meets
	// them, the leaf check does.
	var leafBreaks []audit.Break
	finish := func(res audit.Result) audit.Result {
		res.Repaired = append(res.Repaired, leafBreaks...)
		slices.SortFunc(res.Repaired, func(x, y audit.Break) int { return cmp.Compare(x.From, y.From) })
		return res
	}
	// The walk ends at last, read before it started. Movements keep
	// appending while a verification outside the sequencer's transaction
	// reads: entries past it belong to the next check.
	after := next - 1
	for after < last {
		page, err := r.Audit.Range(ctx, after, int(min(auditPage, last-after)))
		if err != nil {
			return audit.Result{}, nil, err
		}
		if len(page) == 0 {
			break
		}
		// The page spans seq after+1 to end; the tree has a leaf for each
		// of them, those of entries a repair accepted as deleted included.
		end := min(page[len(page)-1].Entry.Seq, last)
		var leaves []audit.Hash
		if frontier != nil && end > after {
			idx := make([]int64, 0, end-after)
			for seq := after + 1; seq <= end; seq++ {
				idx = append(idx, tlog.StoredHashIndex(0, seq))
			}
			leaves, err = r.Audit.TreeHashes(ctx, idx)
			switch {
			case errors.Is(err, store.ErrNotFound):
				// A leaf missing from the tree is a finding, not a failure.
				res := v.Result()
				res.OK, res.FirstDivergent = false, after+1
				res.Reason = "the tree has no leaf for an entry: " + err.Error()
				return res, v, nil //nolint:nilerr // reported in the result
			case err != nil:
				return audit.Result{}, nil, err
			}
		}
		for _, rec := range page {
			if rec.Entry.Seq > last {
				break
			}
			if !v.Add(rec) {
				return finish(v.Result()), v, nil
			}
			var leaf audit.Hash
			skipped := v.Skipped()
			if frontier != nil {
				leaf = leaves[rec.Entry.Seq-after-1]
				// The leaf from the entry's columns, what the API shows (the
				// verifier has checked that they encode to the stored copy).
				if audit.Leaf(rec.Entry) != leaf && !skipped {
					b, ok := leafBreak(breaks, rec)
					if !ok {
						res := finish(v.Result())
						res.OK, res.FirstDivergent, res.LastVerified = false, rec.Entry.Seq, rec.Entry.Seq-1
						res.Reason = LeafMismatch
						return res, v, nil
					}
					leafBreaks, skipped = append(leafBreaks, b), true
				}
			}
			if visit != nil {
				visit(rec, leaf, skipped)
			}
		}
		// Reached only when every entry of the page was accepted (a seq
		// missing outside a recorded break diverges above).
		for _, h := range leaves {
			frontier.Append(tlog.Hash(h))
		}
		after = end
	}
	// Finish also finds a tail cut off.
	return finish(v.Finish(last)), v, nil
}

// LeafMismatch is the reason a walk gives for an entry whose chain checks
// out but whose fields do not hash to the tree's leaf.
const LeafMismatch = "the entry is not the one the log signed: its encoding does not hash to the tree's leaf"

// leafBreak is the recorded break that accepts rec alone, as it is (nil,
// false when none does).
func leafBreak(breaks []audit.Break, rec audit.Record) (audit.Break, bool) {
	for _, b := range breaks {
		if b.From == rec.Entry.Seq && b.To == rec.Entry.Seq && !b.Legacy && b.Digest == audit.Digest(rec) {
			return b, true
		}
	}
	return audit.Break{}, false
}

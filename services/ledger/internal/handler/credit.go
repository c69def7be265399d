package handler

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	ledgerinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/audit"
	"github.com/foundryhq/foundry/services/ledger/internal/impact"
	"github.com/foundryhq/foundry/services/ledger/internal/money"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/idempotency"
	"github.com/foundryhq/foundry/services/platform/paging"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
	"github.com/foundryhq/foundry/services/platform/wire"
)

// owner is the contributor whose CC the request moves. The method's policy
// (contributors only, self: the request's contributor id) has checked that
// the caller's session is that contributor's; this refuses anything else
// all the same, should a policy ever be loosened by mistake.
func owner(ctx context.Context, contributorID string) (string, error) {
	p := authz.FromContext(ctx)
	if p.Kind != authz.Session || p.ContributorID == "" || p.ContributorID != contributorID {
		return "", fault.New(fault.Forbidden, "only the contributor's own session moves its CC")
	}
	return p.ContributorID, nil
}

// ownerKeyed is the caller of a request that moves a contributor's CC
// (owner) and the request's Idempotency-Key, scoped by that caller. A
// refusal of either is not answered here but carried by the command
// (usecase's Refused), so a request with bad fields learns those first.
func ownerKeyed(ctx context.Context, op, contributorID string, req proto.Message) (actor string, key *idempotency.Request, refused error) {
	actor, err := owner(ctx, contributorID)
	if err != nil {
		return "", nil, err
	}
	key, err = idempotency.FromContext(ctx, op, actor, req)
	if err != nil {
		return "", nil, err
	}
	return actor, key, nil
}

// callerHandle is the handle of the caller's session ("" for any other
// credential): for a request owner let through, the handle of the
// contributor whose CC it moves, known without a read.
func callerHandle(ctx context.Context) string {
	if p := authz.FromContext(ctx); p.Kind == authz.Session {
		return p.Name
	}
	return ""
}

func micros(m money.Micros) float64 { return m.Float64() }

// Deposit implements LedgerService.Deposit (administrator).
func (h *Handler) Deposit(ctx context.Context, req *ledgerv1.DepositRequest) (*ledgerv1.DepositResponse, error) {
	actor := authz.FromContext(ctx).Actor()
	key, keyErr := idempotency.FromContext(ctx, "deposit", actor, req)
	d, err := h.app.Deposit(ctx, usecase.DepositCmd{ContributorID: req.GetContributorId(), AmountUSD: req.GetAmountUsd(),
		Reference: req.GetReference(), Actor: actor, Refused: keyErr}, key)
	if err != nil {
		return nil, err
	}
	if !d.Duplicate {
		rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	}
	return &ledgerv1.DepositResponse{
		ContributorId: d.ContributorID, AmountUsd: micros(d.AmountUSD), AmountCc: micros(d.MintedCC), Reference: d.Reference,
		BuyRate: micros(d.BuyRate), SpreadUsd: micros(d.FeeUSD), Duplicate: d.Duplicate, CreatedAt: wire.Time(d.CreatedAt),
		ContributorHandle: wire.OptString(d.ContributorHandle),
	}, nil
}

// Withdraw implements LedgerService.Withdraw (owner).
func (h *Handler) Withdraw(ctx context.Context, req *ledgerv1.WithdrawRequest) (*ledgerv1.WithdrawResponse, error) {
	actor, key, refused := ownerKeyed(ctx, "withdraw", req.GetContributorId(), req)
	w, err := h.app.Withdraw(ctx, usecase.WithdrawCmd{ContributorID: req.GetContributorId(), AmountCC: req.GetAmountCc(), Actor: actor,
		Refused: refused}, key)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.WithdrawResponse{ContributorId: w.ContributorID, AmountCc: micros(w.AmountCC), AmountUsd: micros(w.AmountUSD),
		SpreadUsd: micros(w.FeeUSD), SellRate: micros(w.SellRate), CreatedAt: wire.Time(w.CreatedAt),
		ContributorHandle: wire.OptString(w.ContributorHandle)}, nil
}

// Stake implements LedgerService.Stake (owner, except on dry_run).
func (h *Handler) Stake(ctx context.Context, req *ledgerv1.StakeRequest) (*ledgerv1.StakeResponse, error) {
	cmd := usecase.StakeCmd{ContributorID: req.GetContributorId(), IdeaID: req.GetIdeaId(), AmountCC: req.GetAmountCc(), DryRun: req.GetDryRun()}
	var key *idempotency.Request
	if !req.GetDryRun() {
		cmd.Actor, key, cmd.Refused = ownerKeyed(ctx, "stake", req.GetContributorId(), req)
		cmd.ActorHandle = callerHandle(ctx)
	}
	s, err := h.app.Stake(ctx, cmd, key)
	if err != nil {
		return nil, err
	}
	if !s.DryRun {
		rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	}
	return &ledgerv1.StakeResponse{
		DryRun: s.DryRun, ContributorId: s.ContributorID, IdeaId: s.IdeaID, AmountCc: micros(s.AmountCC),
		PositionCc: micros(s.PositionCC), AvailableCcAfter: micros(s.AvailableAfter), Stage: stage(s.Stage),
		Projection: &ledgerv1.StakeProjection{LowMultiplier: s.Projection.LowMultiplier, HighMultiplier: s.Projection.HighMultiplier,
			StageUnlockPct: s.Projection.StageUnlockPct},
		ContributorHandle: wire.OptString(s.ContributorHandle),
	}, nil
}

// Unstake implements LedgerService.Unstake (owner).
func (h *Handler) Unstake(ctx context.Context, req *ledgerv1.UnstakeRequest) (*ledgerv1.UnstakeResponse, error) {
	actor, key, refused := ownerKeyed(ctx, "unstake", req.GetContributorId(), req)
	u, err := h.app.Unstake(ctx, usecase.UnstakeCmd{ContributorID: req.GetContributorId(), IdeaID: req.GetIdeaId(), AmountCC: req.GetAmountCc(),
		Actor: actor, ActorHandle: callerHandle(ctx), Refused: refused}, key)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.UnstakeResponse{ContributorId: u.ContributorID, IdeaId: u.IdeaID, AmountCc: micros(u.AmountCC),
		CooldownHours: int32(u.Cooldown.Hours()), AvailableAt: wire.Time(u.AvailableAt), Status: u.Status,
		ContributorHandle: wire.OptString(u.ContributorHandle)}, nil
}

// CreatePledge implements LedgerService.CreatePledge (owner).
func (h *Handler) CreatePledge(ctx context.Context, req *ledgerv1.CreatePledgeRequest) (*ledgerv1.CreatePledgeResponse, error) {
	_, key, refused := ownerKeyed(ctx, "pledge", req.GetId(), req)
	p, err := h.app.Pledge(ctx, usecase.PledgeCmd{ContributorID: req.GetId(), IdeaID: req.GetIdeaId(), HoursPledged: req.GetHoursPledged(),
		Refused: refused}, key)
	if err != nil {
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &ledgerv1.CreatePledgeResponse{Pledge: &ledgerv1.Pledge{Id: p.ID, ContributorId: p.ContributorID, IdeaId: p.IdeaID,
		HoursPledged: micros(p.MicroHours), CcEquivalent: micros(p.CCEquivalent), CreatedAt: wire.Time(p.CreatedAt),
		ContributorHandle: wire.OptString(p.ContributorHandle)}}, nil
}

// GetBalances implements LedgerService.GetBalances.
func (h *Handler) GetBalances(ctx context.Context, req *ledgerv1.GetBalancesRequest) (*ledgerv1.GetBalancesResponse, error) {
	acc, err := h.app.Account(ctx, req.GetContributorId())
	if err != nil {
		return nil, err
	}
	b := acc.Balances
	return &ledgerv1.GetBalancesResponse{ContributorId: req.GetContributorId(), AvailableCc: micros(b.Available),
		StakedCc: micros(b.Staked), CoolingCc: micros(b.Cooling), ContributorHandle: wire.OptString(acc.Contributor.Handle)}, nil
}

// ListInvestments implements LedgerService.ListInvestments.
func (h *Handler) ListInvestments(ctx context.Context, req *ledgerv1.ListInvestmentsRequest) (*ledgerv1.ListInvestmentsResponse, error) {
	inv, err := h.app.Investments(ctx, req.GetId(), usecase.Page{Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.ListInvestmentsResponse{ContributorId: req.GetId(), ContributorHandle: wire.OptString(inv.Contributor.Handle),
		Positions: make([]*ledgerv1.Position, len(inv.Positions)),
		Summary: &ledgerv1.PositionSummary{PositionCount: int64(inv.Total), TotalStakedCc: micros(inv.Balances.Staked),
			AvailableCc: micros(inv.Balances.Available), CoolingCc: micros(inv.Balances.Cooling)},
		Pagination: paging.Of(inv.Limit, inv.Offset, inv.Total, len(inv.Positions), "")}
	for i, p := range inv.Positions {
		out.Positions[i] = &ledgerv1.Position{IdeaId: p.IdeaID, AmountCc: micros(p.Amount), Since: wire.Time(p.Since),
			EarnedCc: micros(p.Earned), AttributionCc: micros(p.Amount + p.Earned), RealizedCc: micros(p.Realized),
			GainPct: impact.GainPct(p.Realized, p.Amount)}
	}
	return out, nil
}

// GetInvestmentHistory implements LedgerService.GetInvestmentHistory.
func (h *Handler) GetInvestmentHistory(ctx context.Context, req *ledgerv1.GetInvestmentHistoryRequest) (*ledgerv1.GetInvestmentHistoryResponse, error) {
	page, err := h.app.History(ctx, req.GetId(), usecase.Page{Limit: req.Limit, Offset: req.GetOffset()})
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.GetInvestmentHistoryResponse{ContributorId: req.GetId(), Events: make([]*ledgerv1.FlowEvent, len(page.Items)),
		Pagination: pageOf(page.Listed), ContributorHandle: wire.OptString(page.Contributor.Handle)}
	for i, e := range page.Items {
		ev := &ledgerv1.FlowEvent{Id: e.ID, Kind: string(e.Entry.Kind), AmountCc: micros(e.Amount), CreatedAt: wire.Time(e.CreatedAt),
			AuditSeq: e.AuditSeq, Lines: make([]*ledgerv1.JournalLine, len(e.Entry.Lines))}
		if e.IdeaID != "" {
			ev.IdeaId = wrapperspb.String(e.IdeaID)
		}
		for j, l := range e.Entry.Lines {
			ev.Lines[j] = &ledgerv1.JournalLine{Account: l.Account.Name(), AmountCc: micros(l.Delta)}
		}
		out.Events[i] = ev
	}
	return out, nil
}

// GetInvestPreview implements LedgerService.GetInvestPreview.
func (h *Handler) GetInvestPreview(ctx context.Context, req *ledgerv1.GetInvestPreviewRequest) (*ledgerv1.GetInvestPreviewResponse, error) {
	p, err := h.app.InvestPreview(ctx, req.GetIdeaId())
	if err != nil {
		return nil, err
	}
	basis := "stage"
	if p.FromImpact {
		basis = "impact"
	}
	return &ledgerv1.GetInvestPreviewResponse{IdeaId: p.Idea.ID, Stage: stage(p.Idea.Stage), CoherenceScore: p.Coherence,
		TotalCcStaked: micros(p.StakedCC), StakerCount: int64(p.Stakers), StageUnlockPct: p.Projection.StageUnlockPct,
		Basis: basis, PaidCc: micros(p.PaidCC),
		Projections: &ledgerv1.InvestProjection{LowMultiplier: p.Projection.LowMultiplier, HighMultiplier: p.Projection.HighMultiplier}}, nil
}

// GetExchangeRate implements LedgerService.GetExchangeRate.
func (h *Handler) GetExchangeRate(ctx context.Context, _ *ledgerv1.GetExchangeRateRequest) (*ledgerv1.GetExchangeRateResponse, error) {
	r, err := h.app.ExchangeRate(ctx)
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.GetExchangeRateResponse{CcPerUsd: micros(r.Quote.Mid), SpreadPct: r.Quote.SpreadPct(),
		BuyRate: micros(r.Quote.Buy), SellRate: micros(r.Quote.Sell), UsdPerCc: r.Quote.USDPerCC(), Source: r.Source,
		BreakerTripped: r.Breaker.Tripped}
	if !r.AsOf.IsZero() {
		out.AsOf = wrapperspb.String(wire.Time(r.AsOf))
	}
	return out, nil
}

func supplyProto(s usecase.Supply) *ledgerv1.GetSupplyResponse {
	status := "healthy"
	if s.ReserveRatio < 1 {
		status = "under_reserved"
	}
	return &ledgerv1.GetSupplyResponse{TotalCcOutstanding: micros(s.OutstandingCC), TreasuryValueUsd: micros(s.TreasuryUSD),
		ExchangeRate: s.Rate.Quote.USDPerCC(), CcPerUsd: micros(s.Rate.Quote.Mid), ReserveRatio: s.ReserveRatio, Status: status,
		Mode: mode(s.Mode)}
}

// GetSupply implements LedgerService.GetSupply.
func (h *Handler) GetSupply(ctx context.Context, _ *ledgerv1.GetSupplyRequest) (*ledgerv1.GetSupplyResponse, error) {
	s, err := h.app.Supply(ctx)
	if err != nil {
		return nil, err
	}
	return supplyProto(s), nil
}

// RecordOraclePrice implements LedgerService.RecordOraclePrice (administrator).
func (h *Handler) RecordOraclePrice(ctx context.Context, req *ledgerv1.RecordOraclePriceRequest) (*ledgerv1.RecordOraclePriceResponse, error) {
	r, err := h.app.RecordOraclePrice(ctx, usecase.OraclePriceCmd{CCPerUSD: req.GetCcPerUsd(), Actor: authz.FromContext(ctx).Actor()})
	if err != nil {
		return nil, err
	}
	return &ledgerv1.RecordOraclePriceResponse{Verdict: string(r.Verdict), BreakerTripped: r.State.Tripped,
		ReadingCcPerUsd: micros(r.Price), CcPerUsd: micros(r.State.LastGood), CleanReadings: int32(r.State.Clean)}, nil
}

// auditProto maps a chain entry with its actor's and subject's handles.
// Its amount is answered in whole units (CC, USD, CC per USD) like every
// other amount of the API; the chain records micro-units, named by
// attrs.unit, and its hashes cover those, so only the answer converts.
func auditProto(l store.ListedRecord) *ledgerv1.AuditEntry {
	r := l.Record
	attrs := r.Entry.Attrs
	if attrs == nil {
		attrs = map[string]string{}
	}
	unit, micro := strings.CutPrefix(attrs["unit"], "micro_")
	if !micro {
		unit = ""
	}
	return &ledgerv1.AuditEntry{Seq: r.Entry.Seq, Kind: r.Entry.Kind, Actor: r.Entry.Actor, Subject: r.Entry.Subject,
		Amount: micros(money.Micros(r.Entry.Amount)), Unit: unit, Attrs: attrs, PrevHash: r.PrevHash.String(), Hash: r.Hash.String(),
		CreatedAt: wire.Time(r.Entry.At), ActorHandle: wire.OptString(l.ActorHandle), SubjectHandle: wire.OptString(l.SubjectHandle),
		AmountMicros: strconv.FormatInt(r.Entry.Amount, 10)}
}

// ListAuditEntries implements LedgerService.ListAuditEntries.
func (h *Handler) ListAuditEntries(ctx context.Context, req *ledgerv1.ListAuditEntriesRequest) (*ledgerv1.ListAuditEntriesResponse, error) {
	page, err := h.app.AuditPage(ctx, usecase.Page{Limit: req.Limit, Offset: req.GetOffset(), Cursor: req.GetCursor()})
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.ListAuditEntriesResponse{Entries: make([]*ledgerv1.AuditEntry, len(page.Items)), Pagination: cursorPageOf(page)}
	for i, r := range page.Items {
		out.Entries[i] = auditProto(r)
	}
	return out, nil
}

func repairedProto(b audit.Break) *ledgerv1.RepairedBreak {
	return &ledgerv1.RepairedBreak{RepairSeq: b.RepairSeq, FromSeq: b.From, ToSeq: b.To, Reason: b.Reason}
}

// verifyProto maps a chain's verdict (logProto adds what the log's
// verification knows besides).
func verifyProto(res audit.Result) *ledgerv1.VerifyAuditResponse {
	out := &ledgerv1.VerifyAuditResponse{Valid: res.OK, EntriesChecked: res.Checked,
		RepairedBreaks: make([]*ledgerv1.RepairedBreak, len(res.Repaired))}
	for i, b := range res.Repaired {
		out.RepairedBreaks[i] = repairedProto(b)
	}
	if res.LastVerified > 0 {
		out.LastVerifiedSeq = wrapperspb.Int64(res.LastVerified)
	}
	if !res.OK {
		// A finding that names no entry (a journal entry no audit entry
		// records has no seq of its own) answers null, not seq 0.
		if res.FirstDivergent > 0 {
			out.FirstDivergentSeq = wrapperspb.Int64(res.FirstDivergent)
		}
		out.Reason = wrapperspb.String(res.Reason)
	}
	return out
}

// VerifyAudit implements LedgerService.VerifyAudit (full: administrator).
func (h *Handler) VerifyAudit(ctx context.Context, req *ledgerv1.VerifyAuditRequest) (*ledgerv1.VerifyAuditResponse, error) {
	// The backlog first: when it is empty, every entry committed before
	// the request is in the checkpoint verification reads after it.
	b, err := h.app.AuditBacklog(ctx)
	if err != nil {
		return nil, err
	}
	v, err := h.app.VerifyAudit(ctx, req.GetFull())
	if err != nil {
		return nil, err
	}
	return logProto(v, verdictOf(v), b), nil
}

// RepairAudit implements LedgerService.RepairAudit (administrator).
func (h *Handler) RepairAudit(ctx context.Context, _ *ledgerv1.RepairAuditRequest) (*ledgerv1.RepairAuditResponse, error) {
	rep, err := h.app.RepairAudit(ctx, authz.FromContext(ctx).Actor())
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.RepairAuditResponse{Repaired: rep.Repaired}
	if rep.Found.LastVerified > 0 {
		out.LastVerifiedSeq = wrapperspb.Int64(rep.Found.LastVerified)
	}
	if !rep.Found.OK {
		out.FirstDivergentSeq = wrapperspb.Int64(rep.Found.FirstDivergent)
	}
	if rep.Seq > 0 {
		out.RepairedBreak = repairedProto(rep.Break)
		if rec, ok, err := h.app.AuditEntry(ctx, rep.Seq); err == nil && ok {
			out.RepairEntry = auditProto(rec)
		}
	}
	out.RepairedBreaks = make([]*ledgerv1.RepairedBreak, len(rep.Breaks))
	for i, b := range rep.Breaks {
		out.RepairedBreaks[i] = repairedProto(b)
	}
	out.RestoredSeqs = append(out.RestoredSeqs, rep.Restored...)
	out.LostSeqs = append(out.LostSeqs, rep.Lost...)
	if rep.Correction != "" {
		out.CorrectionEntryId = wrapperspb.String(rep.Correction)
	}
	out.CorrectedEntries, out.RestoredAccounts = rep.Corrected, rep.Balances
	out.SupplyRestored, out.ResolvedFindings, out.Mode = rep.Supply, int32(rep.Resolved), mode(rep.Mode)
	out.OpenFindings = make([]*ledgerv1.IntegrityFinding, len(rep.Open.Open))
	for i, f := range rep.Open.Open {
		out.OpenFindings[i] = findingProto(f)
	}
	return out, nil
}

// Freeze implements LedgerService.Freeze (a configured signer; the use case
// checks the fields, the signature, the time and the nonce).
func (h *Handler) Freeze(ctx context.Context, req *ledgerv1.FreezeRequest) (*ledgerv1.FreezeResponse, error) {
	m, err := h.app.Freeze(ctx, usecase.FreezeCmd{SignerID: req.GetSignerId(), IssuedAt: req.GetIssuedAt(), Nonce: req.GetNonce(),
		Reason: req.GetReason(), Signature: req.GetSignature()})
	if err != nil {
		return nil, err
	}
	return &ledgerv1.FreezeResponse{Frozen: true, SignerId: req.GetSignerId(), Reason: m.Reason, FrozenAt: wire.Time(m.Since)}, nil
}

// Unfreeze implements LedgerService.Unfreeze (administrator).
func (h *Handler) Unfreeze(ctx context.Context, req *ledgerv1.UnfreezeRequest) (*ledgerv1.UnfreezeResponse, error) {
	m, err := h.app.Unfreeze(ctx, req.GetReason(), authz.FromContext(ctx).Actor())
	if err != nil {
		return nil, err
	}
	return &ledgerv1.UnfreezeResponse{Frozen: false, Mode: mode(m.Mode)}, nil
}

// GetIncidentStatus implements LedgerService.GetIncidentStatus.
func (h *Handler) GetIncidentStatus(ctx context.Context, _ *ledgerv1.GetIncidentStatusRequest) (*ledgerv1.GetIncidentStatusResponse, error) {
	c, err := h.app.CheckCoherence(ctx)
	if err != nil {
		return nil, err
	}
	severity := "normal"
	// The trail's verdict includes the journal's reconciliation with it
	// (usecase.Coherence.Trail); the proto has no field of its own for it.
	trail := c.Trail()
	switch {
	case c.Supply.Mode == usecase.ModeFrozen || c.Supply.Mode == usecase.ModeReadOnly || !trail.OK:
		severity = "critical"
	case c.Supply.Mode != usecase.ModeNormal || c.Supply.ReserveRatio < 1 || c.Supply.Rate.Breaker.Tripped || len(c.Mismatched) > 0:
		severity = "elevated"
	}
	out := &ledgerv1.GetIncidentStatusResponse{Frozen: c.Supply.Mode == usecase.ModeFrozen, OracleBreakerTripped: c.Supply.Rate.Breaker.Tripped,
		ReserveRatio: c.Supply.ReserveRatio, AuditChainValid: trail.OK, Severity: severity, Mode: mode(c.Supply.Mode)}
	if c.Supply.ModeReason != "" {
		out.ModeReason = wrapperspb.String(c.Supply.ModeReason)
		if out.Frozen {
			out.FrozenReason = wrapperspb.String(c.Supply.ModeReason)
		}
	}
	return out, nil
}

// ListIncidents implements LedgerService.ListIncidents.
func (h *Handler) ListIncidents(ctx context.Context, req *ledgerv1.ListIncidentsRequest) (*ledgerv1.ListIncidentsResponse, error) {
	page, err := h.app.Incidents(ctx, usecase.Page{Limit: req.Limit, Offset: req.GetOffset(), Cursor: req.GetCursor()})
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.ListIncidentsResponse{Incidents: make([]*ledgerv1.Incident, len(page.Items)), Pagination: cursorPageOf(page)}
	for i, in := range page.Items {
		out.Incidents[i] = &ledgerv1.Incident{Id: in.ID, Kind: in.Kind, Severity: in.Severity, Detail: in.Detail, Actor: in.Actor,
			CreatedAt: wire.Time(in.CreatedAt)}
	}
	return out, nil
}

// CheckCoherence implements LedgerService.CheckCoherence (internal).
func (h *Handler) CheckCoherence(ctx context.Context, _ *ledgerinternalv1.CheckCoherenceRequest) (*ledgerinternalv1.CheckCoherenceResponse, error) {
	c, err := h.app.CheckCoherence(ctx)
	if err != nil {
		return nil, err
	}
	// chain carries the journal's reconciliation with the trail too
	// (usecase.Coherence.Trail), so the monitor treats a movement the trail
	// does not record like a chain break.
	return &ledgerinternalv1.CheckCoherenceResponse{Supply: supplyProto(c.Supply), Chain: logProto(c.Log, c.Trail(), c.Backlog),
		MismatchedAccounts: c.Mismatched, OracleBreakerTripped: c.Supply.Rate.Breaker.Tripped}, nil
}

// SetEconomyMode implements LedgerService.SetEconomyMode (internal: the monitor).
func (h *Handler) SetEconomyMode(ctx context.Context, req *ledgerinternalv1.SetEconomyModeRequest) (*ledgerinternalv1.SetEconomyModeResponse, error) {
	m, err := h.app.SetMode(ctx, wire.Word(ledgerv1.EconomyMode_name, req.GetMode()), req.GetReason(), "monitor")
	if err != nil {
		return nil, err
	}
	return &ledgerinternalv1.SetEconomyModeResponse{Mode: mode(m.Mode), Changed: m.Changed}, nil
}

// stage is the portfolio's enum for an idea's stage as the portfolio
// reported it.
func stage(s string) portfoliov1.Stage {
	return wire.Enum[portfoliov1.Stage](portfoliov1.Stage_value, s)
}

// mode is the enum for one of the economy's modes (usecase.Mode*).
func mode(m string) ledgerv1.EconomyMode {
	return wire.Enum[ledgerv1.EconomyMode](ledgerv1.EconomyMode_value, m)
}

// GetSupplyHistory implements LedgerService.GetSupplyHistory.
func (h *Handler) GetSupplyHistory(ctx context.Context, req *ledgerv1.GetSupplyHistoryRequest) (*ledgerv1.GetSupplyHistoryResponse, error) {
	points, err := h.app.SupplyHistory(ctx, req.Days)
	if err != nil {
		return nil, err
	}
	out := &ledgerv1.GetSupplyHistoryResponse{Days: make([]*ledgerv1.SupplyDay, len(points))}
	for i, p := range points {
		d := &ledgerv1.SupplyDay{Day: p.Day.Format(time.DateOnly)}
		if p.Known {
			d.TotalCcOutstanding = wrapperspb.Double(micros(p.OutstandingCC))
			d.TreasuryValueUsd = wrapperspb.Double(micros(p.TreasuryUSD))
			d.ReserveRatio = wrapperspb.Double(p.ReserveRatio)
		}
		out.Days[i] = d
	}
	return out, nil
}

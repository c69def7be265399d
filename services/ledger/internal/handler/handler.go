// Package handler implements the ledger's gRPC API (AGENTS.md): it maps
// each request to a use case's command, as the request gave it, and the
// result back to the proto; checks who may act for whom (the caller's
// principal, platform/authz); and sets the HTTP status the gateway answers
// with. It does not validate: the use case checks the whole command and
// answers one fault.Validation naming every bad field.
package handler

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"

	ledgerinternalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	"github.com/foundryhq/foundry/services/ledger/internal/github"
	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/ledger/internal/store"
	"github.com/foundryhq/foundry/services/ledger/internal/usecase"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/clientip"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/fault"
	"github.com/foundryhq/foundry/services/platform/ratelimit"
	"github.com/foundryhq/foundry/services/platform/rpcmeta"
)

// Handler serves foundry.ledger.v1.LedgerService and, for the ops
// service's monitor, LedgerInternalService.
type Handler struct {
	ledgerv1.UnimplementedLedgerServiceServer
	ledgerinternalv1.UnimplementedLedgerInternalServiceServer

	app        *usecase.App
	clock      clock.Clock
	random     io.Reader
	registers  *ratelimit.Limiter
	proxies    clientip.Proxies
	sessionTTL time.Duration
	webhook    github.Verifier
	// impactHook verifies impact webhook deliveries (empty secret: every
	// delivery refused).
	impactHook  github.Verifier
	publicReads bool
}

// Options configure a Handler.
type Options struct {
	// Clock defaults to the wall clock.
	Clock clock.Clock
	// Random is the token source; nil means crypto/rand.
	Random io.Reader
	// RegisterRatePerMin bounds registrations per client address per minute;
	// 0 turns the limit off.
	RegisterRatePerMin int
	// TrustedProxies are the peers whose x-forwarded-for names the client
	// (besides loopback); see rpcmeta.ClientAddr.
	TrustedProxies clientip.Proxies
	// SessionTTL is a session's lifetime; 0 means sessions do not expire.
	SessionTTL time.Duration
	// GitHubWebhookSecret verifies X-Hub-Signature-256; empty refuses
	// every delivery unless GitHubAllowUnsigned.
	GitHubWebhookSecret string
	// GitHubAllowUnsigned accepts unsigned deliveries (and refuses signed
	// ones) when there is no secret: for local use only.
	GitHubAllowUnsigned bool
	// ImpactWebhookSecret verifies the impact webhook's
	// X-Hub-Signature-256; empty refuses every delivery.
	ImpactWebhookSecret string
	// PublicReads is whether reads need no credential (GetPrincipal says so).
	PublicReads bool
}

// New returns a Handler over the ledger's use cases.
func New(app *usecase.App, opts Options) *Handler {
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	return &Handler{
		app:         app,
		publicReads: opts.PublicReads,
		clock:       opts.Clock,
		random:      opts.Random,
		registers:   ratelimit.New(opts.RegisterRatePerMin, opts.Clock),
		proxies:     opts.TrustedProxies,
		sessionTTL:  opts.SessionTTL,
		webhook:     github.NewVerifier(opts.GitHubWebhookSecret, opts.GitHubAllowUnsigned),
		impactHook:  github.NewVerifier(opts.ImpactWebhookSecret, false),
	}
}

// Register implements LedgerService.Register.
func (h *Handler) Register(ctx context.Context, req *ledgerv1.RegisterRequest) (*ledgerv1.RegisterResponse, error) {
	if ok, wait := h.registers.Allow(rpcmeta.ClientAddr(ctx, h.proxies)); !ok {
		return nil, &fault.Error{Kind: fault.RateLimited, RetryAfter: wait,
			Detail: fmt.Sprintf("too many registrations from this address: try again in %d s", retrySeconds(wait))}
	}
	token, hash, err := identity.NewToken(h.random)
	if err != nil {
		return nil, err
	}
	now := h.clock.Now()
	c := store.Contributor{ID: uuid.NewString(), Handle: req.GetHandle(), TrustLevel: identity.TrustTOFU, CreatedAt: now}
	sess := store.Session{TokenHash: hash, CreatedAt: now}
	if h.sessionTTL > 0 {
		sess.ExpiresAt = now.Add(h.sessionTTL)
	}
	if err := h.app.Register(ctx, c, sess); err != nil {
		if errors.Is(err, store.ErrAlreadyExists) {
			return nil, fault.New(fault.AlreadyExists, identity.HandleTaken)
		}
		return nil, err
	}
	rpcmeta.SetHTTPStatus(ctx, http.StatusCreated)
	return &ledgerv1.RegisterResponse{
		ContributorId: c.ID,
		Handle:        c.Handle,
		SessionToken:  token,
		TrustLevel:    c.TrustLevel,
	}, nil
}

// retrySeconds is a wait in whole seconds, rounded up, as Retry-After
// states it.
func retrySeconds(d time.Duration) int64 {
	return max(1, int64((d+time.Second-1)/time.Second))
}

// GetSession implements LedgerService.GetSession: the request's Bearer
// token must be a live session (401 otherwise, an API token or the
// administrator key included: they are no session).
func (h *Handler) GetSession(ctx context.Context, _ *ledgerv1.GetSessionRequest) (*ledgerv1.GetSessionResponse, error) {
	p, err := session(ctx)
	if err != nil {
		return nil, err
	}
	c, err := h.app.Contributor(ctx, p.ContributorID)
	if err != nil {
		return nil, err
	}
	return &ledgerv1.GetSessionResponse{
		Valid:         true,
		ContributorId: c.ID,
		Handle:        c.Handle,
		TrustLevel:    c.TrustLevel,
	}, nil
}

// session is the request's principal when it is a contributor's session.
func session(ctx context.Context) (authz.Principal, error) {
	p := authz.FromContext(ctx)
	switch p.Kind {
	case authz.Session:
		return p, nil
	case authz.Invalid:
		return p, fault.New(fault.Unauthenticated, "%s", p.Problem)
	case authz.Token, authz.AdminKey:
		return p, fault.New(fault.Unauthenticated, "this credential is no session: want Bearer <session_token> from POST /api/onboarding/register")
	}
	return p, fault.New(fault.Unauthenticated, "missing or malformed Authorization header: want Bearer <session_token>")
}

// UpgradeTrust implements LedgerService.UpgradeTrust: a stub until an
// OAuth-based upgrade is designed.
func (h *Handler) UpgradeTrust(context.Context, *ledgerv1.UpgradeTrustRequest) (*ledgerv1.UpgradeTrustResponse, error) {
	return nil, fault.New(fault.Unimplemented, "trust upgrade is not available yet: it awaits an OAuth-based design")
}

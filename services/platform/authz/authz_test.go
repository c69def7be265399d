package authz_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/known/wrapperspb"

	// Every Foundry API, so Policies sees every method.
	agentv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/agent/v1"
	authzv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ledger/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/ops/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/platform/v1"
	portfoliointernalv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/internalapi/portfolio/v1"
	ledgerv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/ledger/v1"
	_ "github.com/foundryhq/foundry/proto/gen/go/foundry/ops/v1"
	portfoliov1 "github.com/foundryhq/foundry/proto/gen/go/foundry/portfolio/v1"
	"github.com/foundryhq/foundry/services/platform/authz"
	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestIncludes(t *testing.T) {
	t.Parallel()
	all := []authz.Role{authz.Viewer, authz.Contributor, authz.Worker, authz.Operator, authz.Admin, authz.Service}
	// want[have] lists the roles have acts as, itself aside.
	want := map[authz.Role][]authz.Role{
		authz.Viewer:      nil,
		authz.Contributor: {authz.Viewer},
		authz.Worker:      {authz.Viewer},
		authz.Operator:    {authz.Viewer, authz.Worker},
		authz.Admin:       {authz.Viewer, authz.Worker, authz.Operator},
		authz.Service:     {authz.Viewer},
	}
	for _, have := range all {
		for _, w := range all {
			expect := have == w
			for _, r := range want[have] {
				expect = expect || r == w
			}
			require.Equal(t, expect, authz.Includes(have, w), "%s acts as %s", authz.RoleName(have), authz.RoleName(w))
		}
	}
}

func TestParseRole(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"viewer", "contributor", "worker", "operator", "admin"} {
		r, ok := authz.ParseRole(name)
		require.True(t, ok, name)
		require.Equal(t, name, authz.RoleName(r))
	}
	for _, name := range []string{"", "public", "service", "unspecified", "Admin", "root"} {
		_, ok := authz.ParseRole(name)
		require.False(t, ok, name)
	}
	require.Equal(t, "none", authz.RoleName(0))
}

func TestEncodeDecode(t *testing.T) {
	t.Parallel()
	for _, p := range []authz.Principal{
		{Kind: authz.Anonymous},
		{Kind: authz.AdminKey, Role: authz.Admin, ID: "admin", Name: "admin"},
		{Kind: authz.Session, Role: authz.Contributor, ID: strings.Repeat("a", 64), ContributorID: "c-1", Name: "ada",
			ExpiresAt: time.Date(2026, 12, 1, 0, 0, 0, 123000, time.UTC)},
		{Kind: authz.Token, Role: authz.Worker, ID: "t-1", Name: "build bot ünïcode & = ; %"},
		{Kind: authz.Invalid, Problem: "token revoked"},
	} {
		got, err := authz.Decode(p.Encode())
		require.NoError(t, err)
		require.Equal(t, p, got)
		// Metadata values must be printable ASCII.
		for _, c := range p.Encode() {
			require.True(t, c >= 0x20 && c < 0x7f, "%q", p.Encode())
		}
	}
	for _, bad := range []string{"kind=root", "kind=token&role=god", "kind=token&expires=x", "%zz"} {
		_, err := authz.Decode(bad)
		require.Error(t, err, bad)
	}
}

// TestPoliciesCoverEveryMethod is the build's check that every Foundry
// method declares who may call it, and that what a policy names exists:
// its self field is a string of the request, its conditions' fields bools.
func TestPoliciesCoverEveryMethod(t *testing.T) {
	t.Parallel()
	pols, err := authz.Policies()
	require.NoError(t, err)
	methods := 0
	protoregistry.GlobalFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		if !strings.HasPrefix(string(f.Package()), "foundry.") {
			return true
		}
		for i := range f.Services().Len() {
			s := f.Services().Get(i)
			internal := strings.HasSuffix(string(s.Name()), "InternalService") || s.FullName() == "foundry.internal.platform.v1.StorageService"
			for j := range s.Methods().Len() {
				m := s.Methods().Get(j)
				methods++
				name := "/" + string(s.FullName()) + "/" + string(m.Name())
				pol := pols[name]
				require.NotNil(t, pol, name)
				require.Equal(t, internal, pol.GetAllow()[0] == authz.Service, "%s: internal services, and only they, are service-only", name)
				in := m.Input()
				if self := pol.GetSelf(); self != "" {
					fd := in.Fields().ByName(protoreflect.Name(self))
					require.NotNil(t, fd, "%s: self field %q", name, self)
					require.Equal(t, protoreflect.StringKind, fd.Kind(), name)
				}
				for _, c := range pol.GetWhen() {
					fd := in.Fields().ByName(protoreflect.Name(c.GetField()))
					require.NotNil(t, fd, "%s: condition field %q", name, c.GetField())
					if c.GetEquals() != "" {
						require.Equal(t, protoreflect.StringKind, fd.Kind(), "%s: condition field %q with equals is no string", name, c.GetField())
					} else {
						isBool := fd.Kind() == protoreflect.BoolKind ||
							(fd.Message() != nil && fd.Message().FullName() == "google.protobuf.BoolValue")
						require.True(t, isBool, "%s: condition field %q is no bool", name, c.GetField())
					}
					require.NotEmpty(t, c.GetAllow(), name)
				}
			}
		}
		return true
	})
	require.Len(t, pols, methods)
	require.Greater(t, methods, 70)
}

func principal(kind authz.Kind, role authz.Role, contributor string) authz.Principal {
	return authz.Principal{Kind: kind, Role: role, ID: "id-" + string(kind), ContributorID: contributor}
}

func TestAuthorize(t *testing.T) {
	t.Parallel()
	pols, err := authz.Policies()
	require.NoError(t, err)
	anon := authz.Principal{Kind: authz.Anonymous}
	bad := authz.Principal{Kind: authz.Invalid, Problem: "token revoked"}
	ada := principal(authz.Session, authz.Contributor, "ada")
	worker := principal(authz.Token, authz.Worker, "")
	operator := principal(authz.Token, authz.Operator, "")
	admin := principal(authz.AdminKey, authz.Admin, "")
	viewer := principal(authz.Token, authz.Viewer, "")
	svc := principal(authz.Peer, authz.Service, "")

	stake := ledgerv1.LedgerService_Stake_FullMethodName
	tests := []struct {
		name        string
		method      string
		p           authz.Principal
		req         proto.Message
		publicReads bool
		want        fault.Kind // 0 (Internal) stands for "allowed"
		detail      string
	}{
		{"public read, anonymous", portfoliov1.PortfolioService_ListIdeas_FullMethodName, anon, &portfoliov1.ListIdeasRequest{}, true, 0, ""},
		{"closed read, anonymous", portfoliov1.PortfolioService_ListIdeas_FullMethodName, anon, &portfoliov1.ListIdeasRequest{}, false,
			fault.Unauthenticated, "this request needs a credential (viewer)"},
		{"closed read, viewer", portfoliov1.PortfolioService_ListIdeas_FullMethodName, viewer, &portfoliov1.ListIdeasRequest{}, false, 0, ""},
		{"read with a revoked token", portfoliov1.PortfolioService_ListIdeas_FullMethodName, bad, &portfoliov1.ListIdeasRequest{}, true,
			fault.Unauthenticated, "token revoked"},
		{"register ignores a revoked token", ledgerv1.LedgerService_Register_FullMethodName, bad, &ledgerv1.RegisterRequest{}, false, 0, ""},
		{"create idea, anonymous", portfoliov1.PortfolioService_CreateIdea_FullMethodName, anon, &portfoliov1.CreateIdeaRequest{}, true,
			fault.Unauthenticated, "this request needs a credential (contributor or operator)"},
		{"create idea, worker", portfoliov1.PortfolioService_CreateIdea_FullMethodName, worker, &portfoliov1.CreateIdeaRequest{}, true,
			fault.Forbidden, "the worker role may not do this: it needs contributor or operator"},
		{"create idea, contributor", portfoliov1.PortfolioService_CreateIdea_FullMethodName, ada, &portfoliov1.CreateIdeaRequest{}, true, 0, ""},
		{"create idea, admin", portfoliov1.PortfolioService_CreateIdea_FullMethodName, admin, &portfoliov1.CreateIdeaRequest{}, true, 0, ""},
		{"advance, contributor", portfoliov1.PortfolioService_AdvanceIdea_FullMethodName, ada, &portfoliov1.AdvanceIdeaRequest{}, true,
			fault.Forbidden, "the contributor role may not do this: it needs operator"},
		{"advance, operator", portfoliov1.PortfolioService_AdvanceIdea_FullMethodName, operator, &portfoliov1.AdvanceIdeaRequest{}, true, 0, ""},
		{"own stake", stake, ada, &ledgerv1.StakeRequest{ContributorId: "ada"}, true, 0, ""},
		{"another's stake", stake, ada, &ledgerv1.StakeRequest{ContributorId: "bob"}, true,
			fault.Forbidden, "a contributor acts only for itself: contributor_id must be your own contributor id"},
		{"stake as admin", stake, admin, &ledgerv1.StakeRequest{ContributorId: "ada"}, true,
			fault.Forbidden, "the admin role may not do this: it needs contributor"},
		{"dry-run stake, anonymous", stake, anon, &ledgerv1.StakeRequest{ContributorId: "bob", DryRun: true}, true, 0, ""},
		{"dry-run stake, closed reads", stake, anon, &ledgerv1.StakeRequest{DryRun: true}, false, fault.Unauthenticated, ""},
		{"unpaid distribution, operator", ledgerv1.LedgerService_CreateDistribution_FullMethodName, operator,
			&ledgerv1.CreateDistributionRequest{}, true, 0, ""},
		{"paid distribution, operator", ledgerv1.LedgerService_CreateDistribution_FullMethodName, operator,
			&ledgerv1.CreateDistributionRequest{PayCc: true}, true, fault.Forbidden, "the operator role may not do this: it needs admin"},
		{"paid distribution, admin", ledgerv1.LedgerService_CreateDistribution_FullMethodName, admin,
			&ledgerv1.CreateDistributionRequest{PayCc: true}, true, 0, ""},
		{"right-sizing, unset dry run is one", portfoliov1.PortfolioService_ApplyRightSizing_FullMethodName, anon,
			&portfoliov1.ApplyRightSizingRequest{}, true, 0, ""},
		{"right-sizing, applied anonymously", portfoliov1.PortfolioService_ApplyRightSizing_FullMethodName, anon,
			&portfoliov1.ApplyRightSizingRequest{DryRun: wrapperspb.Bool(false)}, true, fault.Unauthenticated, ""},
		{"usage record, worker", ledgerv1.LedgerService_RecordImpact_FullMethodName, worker,
			&ledgerv1.RecordImpactRequest{Kind: "usage"}, true, 0, ""},
		{"revenue record, worker", ledgerv1.LedgerService_RecordImpact_FullMethodName, worker,
			&ledgerv1.RecordImpactRequest{Kind: "revenue"}, true, fault.Forbidden, "the worker role may not do this: it needs admin"},
		{"revenue record, operator", ledgerv1.LedgerService_RecordImpact_FullMethodName, operator,
			&ledgerv1.RecordImpactRequest{Kind: "revenue"}, true, fault.Forbidden, "it needs admin"},
		{"revenue record, admin", ledgerv1.LedgerService_RecordImpact_FullMethodName, admin,
			&ledgerv1.RecordImpactRequest{Kind: "revenue"}, true, 0, ""},
		{"a kind that only differs in case is no revenue", ledgerv1.LedgerService_RecordImpact_FullMethodName, worker,
			&ledgerv1.RecordImpactRequest{Kind: "Revenue"}, true, 0, ""},
		{"usage record, contributor", ledgerv1.LedgerService_RecordImpact_FullMethodName, ada,
			&ledgerv1.RecordImpactRequest{Kind: "usage"}, true, fault.Forbidden, ""},
		{"claim, worker", agentv1.AgentService_ClaimTask_FullMethodName, worker, &agentv1.ClaimTaskRequest{}, true, 0, ""},
		{"claim, contributor", agentv1.AgentService_ClaimTask_FullMethodName, ada, &agentv1.ClaimTaskRequest{}, true, fault.Forbidden, ""},
		{"internal, service", portfoliointernalv1.PortfolioInternalService_AdvanceForTask_FullMethodName, svc,
			&portfoliointernalv1.AdvanceForTaskRequest{}, true, 0, ""},
		{"internal, admin", portfoliointernalv1.PortfolioInternalService_AdvanceForTask_FullMethodName, admin,
			&portfoliointernalv1.AdvanceForTaskRequest{}, true, fault.Forbidden, ""},
		{"internal, anonymous", portfoliointernalv1.PortfolioInternalService_AdvanceForTask_FullMethodName, anon,
			&portfoliointernalv1.AdvanceForTaskRequest{}, true, fault.Unauthenticated, ""},
		{"tokens, operator", ledgerv1.LedgerService_CreateToken_FullMethodName, operator, &ledgerv1.CreateTokenRequest{}, true, fault.Forbidden, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pol := pols[tt.method]
			require.NotNil(t, pol)
			err := authz.Authorize(pol, tt.p, tt.req, tt.publicReads)
			if tt.want == 0 {
				require.NoError(t, err)
				return
			}
			require.Equal(t, tt.want, fault.KindOf(err), "%v", err)
			if tt.detail != "" {
				require.Contains(t, err.Error(), tt.detail)
			}
		})
	}
}

func TestAuthorizeFillsTheContributorsOwnID(t *testing.T) {
	t.Parallel()
	pols, err := authz.Policies()
	require.NoError(t, err)
	req := &ledgerv1.CreateContributionRequest{AssetId: "a"}
	ada := principal(authz.Session, authz.Contributor, "ada")
	require.NoError(t, authz.Authorize(pols[ledgerv1.LedgerService_CreateContribution_FullMethodName], ada, req, true))
	require.Equal(t, "ada", req.GetContributorId(), "a contributor's contribution is its own")

	// An operator records for anyone and names the contributor itself.
	req = &ledgerv1.CreateContributionRequest{ContributorId: "bob"}
	require.NoError(t, authz.Authorize(pols[ledgerv1.LedgerService_CreateContribution_FullMethodName],
		principal(authz.Token, authz.Operator, ""), req, true))
	require.Equal(t, "bob", req.GetContributorId())
}

// lookups is a Lookup that counts its calls and answers from a table.
type lookups struct {
	calls   atomic.Int32
	answers map[string]authz.Principal
	err     error
	wait    chan struct{}
}

func (l *lookups) lookup(_ context.Context, hash string) (authz.Principal, error) {
	l.calls.Add(1)
	if l.wait != nil {
		<-l.wait
	}
	if l.err != nil {
		return authz.Principal{}, l.err
	}
	if p, ok := l.answers[hash]; ok {
		return p, nil
	}
	return authz.Principal{Kind: authz.Invalid, Problem: "invalid token"}, nil
}

func TestVerifier(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fc := clock.NewFake(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	worker := authz.Principal{Kind: authz.Token, Role: authz.Worker, ID: "t1", Name: "bot", ExpiresAt: fc.Now().Add(time.Hour)}
	l := &lookups{answers: map[string]authz.Principal{authz.HashToken("fdt_good"): worker}}
	v := authz.NewVerifier(authz.VerifierOptions{AdminKey: "k1", Lookup: l.lookup, Clock: fc})

	verify := func(auth, key string) authz.Principal {
		t.Helper()
		p, err := v.Verify(ctx, authz.Credentials{Authorization: auth, APIKey: key})
		require.NoError(t, err)
		return p
	}
	require.Equal(t, authz.Anonymous, verify("", "").Kind)
	require.Equal(t, authz.Admin, verify("", "k1").Role)
	require.Equal(t, "invalid administrator key", verify("", "k2").Problem)
	require.Equal(t, "send one credential, Authorization or X-API-Key, not both", verify("Bearer fdt_good", "k1").Problem)
	require.Equal(t, "malformed Authorization header: want Bearer <token>", verify("Basic abc", "").Problem)
	require.Equal(t, "malformed Authorization header: want Bearer <token>", verify("Bearer ", "").Problem)
	require.Equal(t, "invalid token", verify("Bearer "+strings.Repeat("x", 300), "").Problem)
	require.Equal(t, int32(0), l.calls.Load(), "nothing above needed a look-up")

	require.Equal(t, worker, verify("bearer  fdt_good ", ""))
	require.Equal(t, worker, verify("Bearer fdt_good", ""))
	require.Equal(t, int32(1), l.calls.Load(), "the second request is answered from the cache")
	require.Equal(t, "invalid token", verify("Bearer fdt_bad", "").Problem)
	require.Equal(t, "invalid token", verify("Bearer fdt_bad", "").Problem)
	require.Equal(t, int32(2), l.calls.Load(), "refusals are cached too")

	// Revoked meanwhile: believed until the cache entry is older than its TTL.
	l.answers[authz.HashToken("fdt_good")] = authz.Principal{Kind: authz.Invalid, Problem: "token revoked"}
	fc.Advance(authz.DefaultCacheTTL - time.Millisecond)
	require.Equal(t, worker, verify("Bearer fdt_good", ""))
	fc.Advance(time.Millisecond)
	require.Equal(t, "token revoked", verify("Bearer fdt_good", "").Problem)

	// A cached credential that expires meanwhile is refused at once.
	l.answers[authz.HashToken("fdt_short")] = authz.Principal{Kind: authz.Token, Role: authz.Viewer, ExpiresAt: fc.Now().Add(100 * time.Millisecond)}
	require.Equal(t, authz.Viewer, verify("Bearer fdt_short", "").Role)
	fc.Advance(100 * time.Millisecond)
	require.Equal(t, "token expired", verify("Bearer fdt_short", "").Problem)

	// A look-up that fails is an error, and is not cached.
	calls := l.calls.Load()
	l.err = errors.New("ledger down")
	_, err := v.Verify(ctx, authz.Credentials{Authorization: "Bearer fdt_other"})
	require.Error(t, err)
	l.err = nil
	require.Equal(t, "invalid token", verify("Bearer fdt_other", "").Problem)
	require.Equal(t, calls+2, l.calls.Load())
}

// refreshes is a LookupMany answering from lookups' table, recording each
// call's tokens.
type refreshes struct {
	l     *lookups
	calls [][]authz.TokenUse
	err   error
}

func (r *refreshes) lookupMany(_ context.Context, tokens []authz.TokenUse) ([]authz.Principal, error) {
	r.calls = append(r.calls, tokens)
	if r.err != nil {
		return nil, r.err
	}
	out := make([]authz.Principal, len(tokens))
	for k, t := range tokens {
		out[k] = authz.Principal{Kind: authz.Invalid, Problem: "invalid token"}
		if p, ok := r.l.answers[t.Hash]; ok {
			out[k] = p
		}
	}
	return out, nil
}

// TestVerifierKeepsTokensInUseFresh: a token presented within KeepFresh is
// resolved again by the refresh, with the others, in one call, so it stays
// believed past its TTL without a look-up of its own; the refresh says
// which were presented since (a session slides only with use); a token
// revoked meanwhile is refused from the refresh that sees it; an idle
// token is left to run out; and a failed refresh changes nothing.
func TestVerifierKeepsTokensInUseFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fc := clock.NewFake(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	worker := authz.Principal{Kind: authz.Token, Role: authz.Worker, ID: "t1", Name: "bot"}
	viewer := authz.Principal{Kind: authz.Token, Role: authz.Viewer, ID: "t2", Name: "dash"}
	l := &lookups{answers: map[string]authz.Principal{authz.HashToken("fdt_worker"): worker, authz.HashToken("fdt_viewer"): viewer}}
	r := &refreshes{l: l}
	v := authz.NewVerifier(authz.VerifierOptions{Lookup: l.lookup, LookupMany: r.lookupMany, KeepFresh: 2 * time.Second, Clock: fc})
	verify := func(token string) authz.Principal {
		t.Helper()
		p, err := v.Verify(ctx, authz.Credentials{Authorization: "Bearer " + token})
		require.NoError(t, err)
		return p
	}
	require.Equal(t, worker, verify("fdt_worker"))
	require.Equal(t, viewer, verify("fdt_viewer"))
	require.Equal(t, "invalid token", verify("fdt_unknown").Problem)
	require.Equal(t, int32(3), l.calls.Load())

	// Every half TTL for a while: both stay believed, with no look-up.
	half := authz.DefaultCacheTTL / 2
	for range 8 {
		fc.Advance(half)
		v.Refresh(ctx)
		require.Equal(t, worker, verify("fdt_worker"))
	}
	require.Equal(t, int32(3), l.calls.Load(), "no look-up of its own for a token in use")
	require.Len(t, r.calls, 8, "one refresh call each time")
	require.ElementsMatch(t, []authz.TokenUse{{Hash: authz.HashToken("fdt_worker"), Used: false}, {Hash: authz.HashToken("fdt_viewer"), Used: false}},
		r.calls[0], "both verified tokens, the unknown one not; neither presented since its look-up")
	require.ElementsMatch(t, []authz.TokenUse{{Hash: authz.HashToken("fdt_worker"), Used: true}, {Hash: authz.HashToken("fdt_viewer"), Used: false}},
		r.calls[1], "the worker was presented after the first refresh")
	require.Equal(t, viewer, verify("fdt_viewer"), "still believed: refreshed while it was idle for less than KeepFresh")

	// Revoked: the next refresh sees it, and it is refused at once.
	l.answers[authz.HashToken("fdt_worker")] = authz.Principal{Kind: authz.Invalid, Problem: "token revoked"}
	fc.Advance(half)
	v.Refresh(ctx)
	require.Equal(t, "token revoked", verify("fdt_worker").Problem)
	require.Equal(t, int32(3), l.calls.Load())

	// The viewer idle past KeepFresh: no longer refreshed; its entry runs
	// out and its next request looks it up.
	for range 9 {
		fc.Advance(half)
		v.Refresh(ctx)
	}
	n := len(r.calls)
	fc.Advance(half)
	v.Refresh(ctx)
	require.Len(t, r.calls, n, "nothing left in use: no call")
	require.Equal(t, viewer, verify("fdt_viewer"))
	require.Equal(t, int32(4), l.calls.Load(), "looked up again")

	// A failed refresh: the entry runs out as without refreshes.
	r.err = errors.New("ledger down")
	fc.Advance(half)
	v.Refresh(ctx)
	require.Equal(t, viewer, verify("fdt_viewer"))
	fc.Advance(authz.DefaultCacheTTL)
	require.Equal(t, viewer, verify("fdt_viewer"))
	require.Equal(t, int32(5), l.calls.Load(), "looked up once the entry ran out")
}

func TestVerifierCollapsesConcurrentLookups(t *testing.T) {
	t.Parallel()
	fc := clock.NewFake(time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC))
	worker := authz.Principal{Kind: authz.Token, Role: authz.Worker, ID: "t1"}
	l := &lookups{answers: map[string]authz.Principal{authz.HashToken("fdt_good"): worker}, wait: make(chan struct{})}
	v := authz.NewVerifier(authz.VerifierOptions{Lookup: l.lookup, Clock: fc})
	const n = 16
	var wg sync.WaitGroup
	got := make([]authz.Principal, n)
	for i := range n {
		wg.Go(func() {
			p, err := v.Verify(context.Background(), authz.Credentials{Authorization: "Bearer fdt_good"})
			if err == nil {
				got[i] = p
			}
		})
	}
	// Let the first look-up start, give the others time to join it, then answer.
	require.Eventually(t, func() bool { return l.calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	close(l.wait)
	wg.Wait()
	for _, p := range got {
		require.Equal(t, worker, p)
	}
	// Requests that arrived while the look-up ran joined it; any that came
	// after it was answered found the cache. Either way: one look-up.
	require.Equal(t, int32(1), l.calls.Load())
}

// TestEnforcer runs the interceptor the way a server does: the principal
// a trusted gateway signed is believed, one it did not sign is refused
// (unless it names nobody), a direct caller's credentials are verified
// here, a call with neither is the calling service.
func TestEnforcer(t *testing.T) {
	t.Parallel()
	l := &lookups{answers: map[string]authz.Principal{authz.HashToken("fdt_op"): {Kind: authz.Token, Role: authz.Operator, ID: "op"}}}
	gateway, other := testForwarder(t), testForwarder(t)
	trust, err := authz.NewTrust(gateway.VerifierKey())
	require.NoError(t, err)
	e, err := authz.NewEnforcer(authz.NewVerifier(authz.VerifierOptions{AdminKey: "k1", Lookup: l.lookup}), false, trust)
	require.NoError(t, err)
	intercept := e.UnaryServerInterceptor()
	call := func(md metadata.MD, method string, req any) (authz.Principal, error) {
		ctx := metadata.NewIncomingContext(context.Background(), md)
		var seen authz.Principal
		_, err := intercept(ctx, req, &grpc.UnaryServerInfo{FullMethod: method}, func(ctx context.Context, _ any) (any, error) {
			seen = authz.FromContext(ctx)
			return nil, nil
		})
		return seen, err
	}
	advance := portfoliov1.PortfolioService_AdvanceIdea_FullMethodName
	list := portfoliov1.PortfolioService_ListIdeas_FullMethodName

	admin := authz.Principal{Kind: authz.AdminKey, Role: authz.Admin, ID: "admin"}
	p, err := call(gateway.Metadata(admin), advance, &portfoliov1.AdvanceIdeaRequest{})
	require.NoError(t, err)
	require.Equal(t, authz.Admin, p.Role)
	_, err = call(metadata.Pairs(authz.MetadataKey, admin.Encode()), advance, &portfoliov1.AdvanceIdeaRequest{})
	require.Equal(t, fault.Unauthenticated, fault.KindOf(err), "a principal no gateway signed: %v", err)
	require.ErrorContains(t, err, "carries no gateway's signature")
	_, err = call(other.Metadata(admin), advance, &portfoliov1.AdvanceIdeaRequest{})
	require.Equal(t, fault.Unauthenticated, fault.KindOf(err), "signed by a key the service does not trust: %v", err)
	_, err = call(metadata.Pairs(authz.MetadataKey, "kind=anonymous"), list, &portfoliov1.ListIdeasRequest{})
	require.Equal(t, fault.Unauthenticated, fault.KindOf(err), "reads are closed here")
	_, err = call(metadata.Pairs(authz.MetadataKey, "kind=nobody"), list, &portfoliov1.ListIdeasRequest{})
	require.Equal(t, fault.Unauthenticated, fault.KindOf(err))

	p, err = call(metadata.Pairs("authorization", "Bearer fdt_op"), advance, &portfoliov1.AdvanceIdeaRequest{})
	require.NoError(t, err)
	require.Equal(t, "op", p.ID)
	_, err = call(metadata.Pairs("x-api-key", "wrong"), advance, &portfoliov1.AdvanceIdeaRequest{})
	require.Equal(t, fault.Unauthenticated, fault.KindOf(err))

	p, err = call(metadata.MD{}, list, &portfoliov1.ListIdeasRequest{})
	require.NoError(t, err)
	require.Equal(t, authz.Peer, p.Kind, "a call with no principal and no credential comes from a service")
	_, err = call(metadata.MD{}, advance, &portfoliov1.AdvanceIdeaRequest{})
	require.Equal(t, fault.Forbidden, fault.KindOf(err), "a service writes only through internal methods")

	// Methods of other packages pass untouched.
	_, err = call(metadata.MD{}, "/grpc.health.v1.Health/Check", nil)
	require.NoError(t, err)
}

// FuzzVerifyBearer checks the Authorization parser: a look-up happens only
// for "Bearer <token>" (scheme in any case), with the hash of the token
// trimmed of surrounding white space, and never for more than 256 bytes.
func FuzzVerifyBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer abc", "BEARER  abc  ", "Basic x", "Bearer ", "Bearer", "abc", "",
		"Bearer a b", " Bearer\tabc", "Bearer \xff", "Bearer\u00a0abc", "Bearer " + strings.Repeat("f", 64)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		var looked string
		v := authz.NewVerifier(authz.VerifierOptions{CacheTTL: -1, Lookup: func(_ context.Context, hash string) (authz.Principal, error) {
			looked = hash
			return authz.Principal{Kind: authz.Token, Role: authz.Viewer}, nil
		}})
		p, err := v.Verify(context.Background(), authz.Credentials{Authorization: header})
		require.NoError(t, err)
		h := strings.TrimSpace(header)
		scheme, token, ok := strings.Cut(h, " ")
		token = strings.TrimSpace(token)
		valid := h != "" && ok && strings.EqualFold(scheme, "Bearer") && token != "" && len(token) <= 256
		if !valid {
			require.Empty(t, looked)
			require.Contains(t, []authz.Kind{authz.Invalid, authz.Anonymous}, p.Kind)
			return
		}
		require.Equal(t, authz.HashToken(token), looked)
		require.Equal(t, authz.Viewer, p.Role)
	})
}

// FuzzVerifyAdminKey checks the administrator key: only the configured
// key, or the key a rotation accepts beside it, byte for byte, passes,
// never anything when no key is configured (an accepted key alone opens
// nothing), and every refusal is an invalid principal (a 401).
func FuzzVerifyAdminKey(f *testing.F) {
	f.Add("k1", "k1", "")
	f.Add("k1", "K1", "")
	f.Add("", "", "")
	f.Add("k1", "", "")
	f.Add("", "k1", "")
	f.Add("k1 ", "k1", "")
	f.Add("\xff", "\xff", "")
	f.Add("old", "new", "old")
	f.Add("new", "new", "old")
	f.Add("old", "", "old")
	f.Add("", "new", "")
	f.Fuzz(func(t *testing.T, sent, key, accepted string) {
		v := authz.NewVerifier(authz.VerifierOptions{AdminKey: key, AcceptedAdminKeys: []string{accepted}})
		p, err := v.Verify(context.Background(), authz.Credentials{APIKey: sent})
		require.NoError(t, err)
		switch {
		case sent == "":
			require.Equal(t, authz.Anonymous, p.Kind)
		case key != "" && (sent == key || sent == accepted):
			require.Equal(t, authz.Admin, p.Role)
		default:
			require.Equal(t, authz.Invalid, p.Kind)
		}
	})
}

// The policy option is the proto's, not a copy: a method's policy is what
// its descriptor says.
func TestPolicyIsTheProtoOption(t *testing.T) {
	t.Parallel()
	pols, err := authz.Policies()
	require.NoError(t, err)
	d, err := protoregistry.GlobalFiles.FindDescriptorByName("foundry.ledger.v1.LedgerService.Deposit")
	require.NoError(t, err)
	opt := proto.GetExtension(d.(protoreflect.MethodDescriptor).Options(), authzv1.E_Policy).(*authzv1.Policy)
	require.True(t, proto.Equal(opt, pols[ledgerv1.LedgerService_Deposit_FullMethodName]))
	require.Equal(t, []authz.Role{authz.Admin}, opt.GetAllow())
}

// testForwarder is a gateway's signer with a key made for the test.
func testForwarder(t testing.TB) *authz.Forwarder {
	t.Helper()
	skey, _, err := authz.GenerateKey("gateway-test")
	require.NoError(t, err)
	f, err := authz.NewForwarder(skey)
	require.NoError(t, err)
	return f
}

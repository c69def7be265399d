package authz

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/foundryhq/foundry/services/platform/clock"
	"github.com/foundryhq/foundry/services/platform/periodic"
	"github.com/foundryhq/foundry/services/platform/servicecred"
)

// Credentials are a request's raw credential headers.
type Credentials struct {
	// Authorization is the Authorization header: "Bearer <token>".
	Authorization string
	// APIKey is the X-API-Key header: the administrator key.
	APIKey string
}

// Lookup resolves the hash of a Bearer token (HashToken) to the principal
// it stands for: a session's contributor or an API token's role. A token
// that is unknown, expired or revoked is an Invalid principal saying so;
// the error is for a look-up that could not be made (the ledger
// unreachable), which is not cached.
type Lookup func(ctx context.Context, tokenHash string) (Principal, error)

// TokenUse is a token a LookupMany resolves: its hash, and whether it was
// presented since it was last resolved (a session's expiry slides with
// use, not with refreshing).
type TokenUse struct {
	Hash string
	Used bool
}

// LookupMany resolves many token hashes in one call, each as Lookup does,
// answering in order; at most MaxLookupMany of them.
type LookupMany func(ctx context.Context, tokens []TokenUse) ([]Principal, error)

// MaxLookupMany is the most tokens one LookupMany resolves (the ledger's
// bound).
const MaxLookupMany = 1000

// HashToken is the form a Bearer token is stored and looked up in: hex
// SHA-256. Tokens carry 256 random bits, so an unsalted hash is as strong
// as the token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// maxTokenBytes bounds a Bearer token: Foundry's are 64-68 characters, and
// a longer one is refused before it is hashed or looked up.
const maxTokenBytes = 256

// maxCached bounds the cache; past it the cache starts over (a flood of
// made-up tokens must not grow memory).
const maxCached = 10_000

// DefaultCacheTTL is how long a verified token is believed without asking
// again: short enough that a revoked token stops working on every replica
// within a second, long enough that a busy client's requests cost one
// look-up per half second, not one each.
const DefaultCacheTTL = 500 * time.Millisecond

// DefaultKeepFresh is how long after its last use a verified token is kept
// fresh by the verifier's refresh (Run): a client that made a request in
// the last few seconds is likely to make another, and the refresh answers
// for every such token in one call every half TTL, where each would
// otherwise be looked up again on its next request once its half second
// had passed (a round trip through the ledger per request, for a client
// whose requests come less often than twice a second).
const DefaultKeepFresh = 5 * time.Second

// Verifier turns credentials into a Principal: the administrator key
// compared in constant time, Bearer tokens through Lookup with a short
// cache, and concurrent look-ups of one token collapsed into one.
type Verifier struct {
	adminKey   string
	accepted   []string
	lookup     Lookup
	lookupMany LookupMany
	ttl        time.Duration
	keepFresh  time.Duration
	clock      clock.Clock

	group singleflight.Group
	mu    sync.Mutex
	cache map[string]cached
}

type cached struct {
	p     Principal
	until time.Time
	// used is when the token was last presented; presented says it was
	// since it was last resolved.
	used      time.Time
	presented bool
}

// VerifierOptions configure a Verifier.
type VerifierOptions struct {
	// AdminKey is the administrator key; empty refuses every X-API-Key.
	AdminKey string
	// AcceptedAdminKeys are accepted beside AdminKey while it rotates
	// (servicecred.Matches says how).
	AcceptedAdminKeys []string
	// Lookup resolves Bearer tokens; nil refuses every one.
	Lookup Lookup
	// LookupMany, when set, lets Run keep the tokens in use fresh in one
	// call per half CacheTTL.
	LookupMany LookupMany
	// KeepFresh is how long after its last use Run keeps a token fresh;
	// 0 means DefaultKeepFresh.
	KeepFresh time.Duration
	// CacheTTL is how long a look-up's answer is kept; 0 means
	// DefaultCacheTTL, a negative value turns the cache off.
	CacheTTL time.Duration
	// Clock defaults to the wall clock.
	Clock clock.Clock
}

// NewVerifier returns a Verifier.
func NewVerifier(o VerifierOptions) *Verifier {
	if o.CacheTTL == 0 {
		o.CacheTTL = DefaultCacheTTL
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.KeepFresh == 0 {
		o.KeepFresh = DefaultKeepFresh
	}
	return &Verifier{adminKey: o.AdminKey, accepted: o.AcceptedAdminKeys, lookup: o.Lookup, lookupMany: o.LookupMany,
		ttl: o.CacheTTL, keepFresh: o.KeepFresh, clock: o.Clock, cache: map[string]cached{}}
}

// Verify returns the principal of c: Anonymous without a credential,
// Invalid (with the reason) for one that does not verify. The error is
// only for a look-up that could not be made.
func (v *Verifier) Verify(ctx context.Context, c Credentials) (Principal, error) {
	auth, key := strings.TrimSpace(c.Authorization), c.APIKey
	switch {
	case auth == "" && key == "":
		return anonymous, nil
	case auth != "" && key != "":
		return invalid("send one credential, Authorization or X-API-Key, not both"), nil
	case key != "":
		if v.adminKey == "" || !servicecred.Matches(key, v.adminKey, v.accepted) {
			return invalid("invalid administrator key"), nil
		}
		return admin, nil
	}
	scheme, token, ok := strings.Cut(auth, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return invalid("malformed Authorization header: want Bearer <token>"), nil
	}
	if len(token) > maxTokenBytes {
		return invalid("invalid token"), nil
	}
	return v.token(ctx, HashToken(token))
}

// token resolves a token hash through the cache.
func (v *Verifier) token(ctx context.Context, hash string) (Principal, error) {
	now := v.clock.Now()
	v.mu.Lock()
	c, ok := v.cache[hash]
	if ok {
		c.used, c.presented = now, true
		v.cache[hash] = c
	}
	v.mu.Unlock()
	if !ok || !now.Before(c.until) {
		if v.lookup == nil {
			return invalid("invalid token"), nil
		}
		// One look-up per token at a time: a burst of requests with a new
		// token waits for the first one's answer. The look-up runs on its
		// own context, so the first caller giving up does not fail the rest.
		res, err, _ := v.group.Do(hash, func() (any, error) {
			lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			p, err := v.lookup(lctx, hash)
			if err != nil {
				return nil, err
			}
			v.remember(hash, p, v.clock.Now())
			return p, nil
		})
		if err != nil {
			return Principal{}, err
		}
		c = cached{p: res.(Principal)}
	}
	if p := c.p; p.Kind != Invalid && !p.ExpiresAt.IsZero() && !now.Before(p.ExpiresAt) {
		return invalid(string(p.Kind) + " expired"), nil
	}
	return c.p, nil
}

func (v *Verifier) remember(hash string, p Principal, now time.Time) {
	if v.ttl < 0 {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.cache) >= maxCached {
		clear(v.cache)
	}
	v.cache[hash] = cached{p: p, until: now.Add(v.ttl), used: now}
}

// Run keeps the tokens in use fresh until ctx ends, when the verifier has
// a LookupMany: every half TTL it resolves, in one call (or one per
// MaxLookupMany), every cached token that verified and was presented
// within KeepFresh, and believes each answer for another TTL. A token
// revoked meanwhile is refused from the refresh that sees it, within half
// a TTL and a call, as the one-second promise of DefaultCacheTTL asks. A
// refresh that fails changes nothing: the tokens' entries run out, and
// their next requests look them up one by one, as without Run.
func (v *Verifier) Run(ctx context.Context) {
	if v.lookupMany == nil || v.ttl <= 0 {
		return
	}
	periodic.After(ctx, v.ttl/2, func() { v.Refresh(ctx) })
}

// Refresh is one of Run's refreshes.
func (v *Verifier) Refresh(ctx context.Context) {
	now := v.clock.Now()
	var due []TokenUse
	v.mu.Lock()
	for hash, c := range v.cache {
		if c.p.Kind != Invalid && now.Sub(c.used) <= v.keepFresh {
			due = append(due, TokenUse{Hash: hash, Used: c.presented})
		}
	}
	v.mu.Unlock()
	for len(due) > 0 {
		part := due[:min(len(due), MaxLookupMany)]
		due = due[len(part):]
		lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ps, err := v.lookupMany(lctx, part)
		cancel()
		if err != nil || len(ps) != len(part) {
			return
		}
		until := v.clock.Now().Add(v.ttl)
		v.mu.Lock()
		for k, u := range part {
			c, ok := v.cache[u.Hash]
			if !ok {
				continue // the cache started over meanwhile
			}
			c.p, c.until = ps[k], until
			if u.Used {
				c.presented = false
			}
			v.cache[u.Hash] = c
		}
		v.mu.Unlock()
	}
}

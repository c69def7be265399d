package identity_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/foundryhq/foundry/services/ledger/internal/identity"
	"github.com/foundryhq/foundry/services/platform/fault"
)

func TestCheckGrant(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	key := identity.Granter{}
	shortAdmin := identity.Granter{TokenID: "t1", Role: "admin", ExpiresAt: now.Add(2 * time.Minute)}
	operator := identity.Granter{TokenID: "t2", Role: "operator"}
	req := func(role string, ttl time.Duration) identity.TokenRequest {
		return identity.TokenRequest{Name: "n", Role: role, TTL: ttl}
	}
	for _, c := range []struct {
		name    string
		g       identity.Granter
		r       identity.TokenRequest
		expires time.Time
		refused string
	}{
		{"the key: anything, forever", key, req("admin", 0), time.Time{}, ""},
		{"the key: a lifetime", key, req("viewer", time.Hour), now.Add(time.Hour), ""},
		{"a short admin token: no ttl inherits its expiry", shortAdmin, req("admin", 0), now.Add(2 * time.Minute), ""},
		{"a short admin token: a shorter ttl", shortAdmin, req("worker", time.Minute), now.Add(time.Minute), ""},
		{"a short admin token: a longer ttl", shortAdmin, req("admin", time.Hour), time.Time{},
			"a token expiring at 2026-12-02T09:02:00Z creates only tokens expiring no later: give a ttl of at most 2m0s"},
		{"an operator token: its own role", operator, req("operator", 0), time.Time{}, ""},
		{"an operator token: a lower role", operator, req("viewer", 0), time.Time{}, ""},
		{"an operator token: admin", operator, req("admin", 0), time.Time{}, "a token of role operator creates only tokens of a role at most its own, not admin"},
	} {
		got, err := identity.CheckGrant(c.g, c.r, now)
		if c.refused != "" {
			require.Equal(t, fault.Forbidden, fault.KindOf(err), c.name)
			require.EqualError(t, err, "forbidden: "+c.refused, c.name)
			continue
		}
		require.NoError(t, err, c.name)
		require.Equal(t, c.expires, got, c.name)
	}

	require.NoError(t, identity.CheckRevoke(key, "t9", ""))
	require.NoError(t, identity.CheckRevoke(shortAdmin, "t1", ""), "itself")
	require.NoError(t, identity.CheckRevoke(shortAdmin, "t5", "t1"), "one it created")
	require.Equal(t, fault.Forbidden, fault.KindOf(identity.CheckRevoke(shortAdmin, "t9", "")), "another administrator's")
}

package authz

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	authzv1 "github.com/foundryhq/foundry/proto/gen/go/foundry/authz/v1"
)

// TestMemoRemembersBounded: a memo answers a key it holds without asking
// again, asks again after a refusal (refusals are not remembered), and
// holds at most its limit, starting afresh when full, under concurrent use.
func TestMemoRemembersBounded(t *testing.T) {
	var mu sync.Mutex
	asked := map[int]int{}
	m := memo[int, string]{limit: 3}
	f := func(k int) (string, error) {
		mu.Lock()
		asked[k]++
		mu.Unlock()
		if k < 0 {
			return "", errors.New("refused")
		}
		return fmt.Sprint("v", k), nil
	}
	for range 3 {
		v, err := m.get(1, f)
		require.NoError(t, err)
		require.Equal(t, "v1", v)
	}
	require.Equal(t, 1, asked[1], "asked once, remembered after")
	for range 2 {
		_, err := m.get(-1, f)
		require.EqualError(t, err, "refused")
	}
	require.Equal(t, 2, asked[-1], "a refusal is asked again")
	for k := 2; k <= 4; k++ { // the fourth key finds the memo full
		_, _ = m.get(k, f)
	}
	require.Len(t, m.held, 1, "full at 3: started afresh with the fourth key")
	_, _ = m.get(1, f)
	require.Equal(t, 2, asked[1], "forgotten when the memo started afresh")

	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for k := range 100 {
				v, err := m.get(k%5, f)
				require.NoError(t, err)
				require.Equal(t, fmt.Sprint("v", k%5), v, "goroutine %d", g)
			}
		})
	}
	wg.Wait()
	require.LessOrEqual(t, len(m.held), 3)
}

// TestMemoisedCodec: the remembered forms are Encode's and Decode's.
func TestMemoisedCodec(t *testing.T) {
	p := Principal{Kind: Session, Role: authzv1.Role_ROLE_CONTRIBUTOR, ID: "hash", ContributorID: "c-1", Name: "alice",
		ExpiresAt: time.UnixMicro(1800000000000000).UTC()}
	got, err := decodeMemo(p.Encode())
	require.NoError(t, err)
	require.Equal(t, p, got)
	got, err = decodeMemo(p.Encode())
	require.NoError(t, err)
	require.Equal(t, p, got, "remembered")
	_, err = decodeMemo("kind=nobody")
	require.ErrorContains(t, err, `unknown kind "nobody"`)
}

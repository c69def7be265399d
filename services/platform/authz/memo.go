package authz

import "sync"

// memo remembers the answers of a pure function of a comparable key, up to
// limit of them: when it holds limit, the next answer starts it afresh, so
// what it holds stays bounded however many keys come (every session's
// principal is one) and the keys in use come back at once. A plain map
// under a read lock, not a sync.Map: a sync.Map takes its key as an
// interface, which for a string or a Principal is an allocation per look-up.
type memo[K comparable, V any] struct {
	limit int
	mu    sync.RWMutex
	held  map[K]V
}

// get returns f(k), remembered.
func (m *memo[K, V]) get(k K, f func(K) (V, error)) (V, error) {
	m.mu.RLock()
	v, ok := m.held[k]
	m.mu.RUnlock()
	if ok {
		return v, nil
	}
	v, err := f(k)
	if err != nil {
		return v, err // not remembered: a refusal is rare and cheap to repeat
	}
	m.mu.Lock()
	if m.held == nil || len(m.held) >= m.limit {
		m.held = make(map[K]V)
	}
	m.held[k] = v
	m.mu.Unlock()
	return v, nil
}

// memoLimit bounds each memo: the principals of that many credentials in
// use at once are remembered (a few hundred bytes each).
const memoLimit = 4096

// decoded remembers Decode's answers: a service decodes the principal of
// every call, the same few strings over and over (url.ParseQuery, 900 ns
// and 7 allocations for a session's).
var decoded = memo[string, Principal]{limit: memoLimit}

// decodeMemo is Decode, remembered.
func decodeMemo(s string) (Principal, error) { return decoded.get(s, Decode) }

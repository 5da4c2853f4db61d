package events

import "sync"

// Memo keeps what the consumers of one fanned-out envelope derive from it
// alike (a transport's encoding of the event for a given selection), so
// that a fan-out to many subscribers derives it once rather than once per
// subscriber. The fan-out gives each envelope of a commit its own Memo; an
// envelope read from the log has none (nil: nothing is kept).
type Memo struct {
	mu sync.Mutex
	m  map[string][]byte
}

// Load returns what was kept under key, or derives it, keeps it and
// returns it (derive reports false when it cannot: nothing is kept). The
// bytes are shared: callers never change them. A nil Memo derives them
// every time.
func (m *Memo) Load(key string, derive func() ([]byte, bool)) ([]byte, bool) {
	if m == nil {
		return derive()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if b, ok := m.m[key]; ok {
		return b, true
	}
	b, ok := derive()
	if !ok {
		return nil, false
	}
	if m.m == nil {
		m.m = map[string][]byte{}
	}
	m.m[key] = b
	return b, true
}

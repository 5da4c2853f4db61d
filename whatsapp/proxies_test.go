package whatsapp

import (
	"context"
	"sync"
)

// fakeProxies is the ProxySource of the tests: the sessions' proxies as
// set.
type fakeProxies struct {
	mu   sync.Mutex
	urls map[string]string
}

func (f *fakeProxies) set(sessionID, url string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.urls[sessionID] = url
}

func (f *fakeProxies) Proxy(_ context.Context, sessionID string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.urls[sessionID], nil
}

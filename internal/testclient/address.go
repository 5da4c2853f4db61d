package testclient

import (
	"net"
	"testing"
)

// MachineAddress is one IPv4 address of this machine that is not loopback,
// as a container has on its network: the address a server is bound to
// when it listens on one interface only. The test fails without one.
func MachineAddress(t testing.TB) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String()
		}
	}
	t.Fatalf("this machine has no IPv4 address but loopback (%v): the test binds a server to one", addrs)
	return ""
}

package cluster

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wagraph/wagraph/internal/fault"
	"github.com/wagraph/wagraph/whatsapp"
)

// testCA is a throwaway certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// issue makes a process's certificate, for server and client
// authentication, naming ip.
func (ca *testCA) issue(t *testing.T, name string, ip net.IP) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{ip},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// newTLSTarget is a process's cluster listener with the cluster's TLS,
// counting the calls that reach its handler.
func newTLSTarget(t *testing.T, tl *TLS) *callTarget {
	t.Helper()
	c := &callTarget{}
	c.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n++
		h := c.h
		c.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	c.srv.Listener = tl.Listener(c.srv.Listener)
	c.srv.Start()
	t.Cleanup(c.srv.Close)
	return c
}

// TestCallsOverTLS: with the cluster's TLS, a forwarded call between two
// processes whose certificates one CA signed goes through; a plain-HTTP
// call to the TLS listener, a caller with a certificate of another CA (or
// none), and a listener with a certificate of another CA or for another
// host are refused before any call is read.
func TestCallsOverTLS(t *testing.T) {
	_, d := openCluster(t)
	ids := createSessions(t, d.Ent, 1)
	ctx := context.Background()
	w := newWorld()
	loopback := net.IPv4(127, 0, 0, 1)
	ca, stranger := newTestCA(t, "wagraph cluster"), newTestCA(t, "somebody else")
	tlsA := &TLS{Cert: ca.issue(t, "a", loopback), CAs: ca.pool()}
	tlsB := &TLS{Cert: ca.issue(t, "b", loopback), CAs: ca.pool()}
	target := newTLSTarget(t, tlsB)
	a := join(t, d.SQL, w.local("a"), callTTL, "")
	b := join(t, d.SQL, w.local("b"), callTTL, target.addr())
	rb, mb := newTestRouter(t, b, d)
	target.serve(rb.Handler(1 << 20))
	if took, err := b.Claim(ctx, ids[0]); err != nil || !took {
		t.Fatalf("claim: %v, %v", took, err)
	}
	h, err := a.HolderOf(ctx, ids[0])
	if err != nil || h.Self {
		t.Fatalf("HolderOf: %+v, %v", h, err)
	}

	t.Run("between two processes of the cluster", func(t *testing.T) {
		ra := NewRouter(a, nil, nil, tlsA, nil)
		before := target.calls()
		got, err := ra.Status(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		want, err := mb.Status(ctx, ids[0])
		if err != nil {
			t.Fatal(err)
		}
		if !sameState(got, want) || target.calls() != before+1 {
			t.Errorf("status %+v over %d calls; want the holder's %+v over 1", got, target.calls()-before, want)
		}
	})

	otherCA := &TLS{Cert: stranger.issue(t, "intruder", loopback), CAs: ca.pool()}
	noCert := &TLS{CAs: ca.pool()}
	for _, tt := range []struct {
		name string
		tls  *TLS
	}{
		{"plain HTTP", nil},
		{"a client certificate of another CA", otherCA},
		{"no client certificate", noCert},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := target.calls()
			err := newCaller(a, tt.tls).do(ctx, h, ids[0], whatsapp.OpStatus().Name(), none{}, nil)
			if err == nil {
				t.Fatal("the call went through")
			}
			if n := target.calls() - before; n != 0 {
				t.Errorf("%d calls reached the handler, want none", n)
			}
		})
	}

	// Go's client sends no certificate the listener's CAs did not sign;
	// one sent anyway is refused by the listener.
	t.Run("a client certificate of another CA, sent anyway", func(t *testing.T) {
		cfg := otherCA.clientConfig()
		forced := otherCA.Cert
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &forced, nil }
		conn, err := tls.Dial("tcp", target.addr(), cfg)
		if err == nil {
			// TLS 1.3: the client's certificate is judged after the
			// client's handshake ends; the refusal comes on first read.
			_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
			_, _ = conn.Write([]byte("POST " + CallPath + " HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"))
			_, err = conn.Read(make([]byte, 1))
			conn.Close()
		}
		if err == nil || !strings.Contains(err.Error(), "certificate") {
			t.Errorf("handshake: %v; want a refused certificate", err)
		}
	})

	for _, tt := range []struct {
		name   string
		server tls.Certificate
		want   string
	}{
		{"a listener with a certificate of another CA", stranger.issue(t, "impostor", loopback), "unknown authority"},
		{"a listener with a certificate for another host", ca.issue(t, "elsewhere", net.IPv4(10, 9, 8, 7)), "127.0.0.1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			impostor := newTLSTarget(t, &TLS{Cert: tt.server, CAs: ca.pool()})
			impostor.serve(rb.Handler(1 << 20))
			at := h
			at.Addr = impostor.addr()
			err := newCaller(a, tlsA).do(ctx, at, ids[0], whatsapp.OpStatus().Name(), none{}, nil)
			if fault.CodeOf(err) != fault.NotConnected || !strings.Contains(errorChain(err), tt.want) {
				t.Errorf("call: %v; want NOT_CONNECTED caused by %q", errorChain(err), tt.want)
			}
			if impostor.calls() != 0 {
				t.Errorf("the caller sent %d calls to an impostor", impostor.calls())
			}
		})
	}
}

// errorChain is an error's text with its causes'.
func errorChain(err error) string {
	var b strings.Builder
	for ; err != nil; err = unwrapOne(err) {
		b.WriteString(err.Error())
		b.WriteString(" / ")
	}
	return b.String()
}

func unwrapOne(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		return u.Unwrap()
	}
	return nil
}
